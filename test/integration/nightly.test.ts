// mode: nightly through the bundled action, real containers, the local GitHub server. A refresh on
// the offline 3.10.8 image records the reference broker (its image ID); two scheduled nights of
// the same image (an A/A) each append the paired ratio against that broker — the nights
// accumulating on the history pull request, each night read back from its branch — and raise no
// step. Then a history of 30 earlier nights against the same reference plus two regressed ones
// (synthetic) and one real night of a regressed image (an advanced.config someone could ship):
// the step is reported in the job summary, the pull request's description, the HTML report and an
// error annotation, with the two nights around it and the bisect command between their commits,
// and the step fails. Every request is checked against GitHub's OpenAPI description.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGitHubServer, type GitHubServer } from '../support/github-server';
import { newWorkspace, runAction, type ActionRun } from '../support/action-runner';
import { scheduleEvent } from '../support/github-events';
import { BASE_IMAGE, buildImageSeries, type ImageSeries } from '../support/bisect-images';
import type { Baseline, NightlyHistory, RunReport } from '../../src/schema/types';
import { expectValidUnlessDisturbed } from '../support/trials';

const TOKEN = 'ghs_perfgatenightly';
const REPO = 'Codertocat/Hello-World';
const BRANCH = 'rabbitmq-perf-gate/nightly-history';
const HISTORY = '.github/rabbitmq-perf/history.json';
const BASELINE = '.github/rabbitmq-perf/baseline.json';
const fast = { scenarios: 'one_fast', duration: '1', warmup: '0' };

let gh: GitHubServer;
let regressed: ImageSeries;
beforeAll(async () => {
  gh = await startGitHubServer({ token: TOKEN, repo: REPO });
  regressed = buildImageSeries({ repo: `rabbitmq-perf-gate/nightly-test-${process.pid}`, count: 1, regressFrom: 1, credit: [2, 1] });
});
afterEach(() => {
  expect(gh.violations).toEqual([]);
  expect(gh.warnings).toEqual([]);
});
afterAll(async () => {
  regressed?.remove();
  await gh.close();
});

const action = (workspace: string, inputs: Record<string, string>) =>
  runAction({
    workspace,
    apiUrl: gh.url,
    eventName: 'schedule',
    event: scheduleEvent(),
    env: { GITHUB_REF: 'refs/heads/main' },
    timeoutMs: 400_000,
    inputs: { ...fast, 'github-token': TOKEN, ...inputs },
  });

const night = (workspace: string, image: string, revision: string) =>
  action(workspace, {
    mode: 'nightly',
    'broker-image': image,
    sequential: 'false',
    repetitions: '4',
    'refresh-commit': 'pr',
    revision,
    'bisect-template': 'my/rabbitmq:sha-{sha}',
  });

/** A fresh checkout of main with the baseline only: each night must find the earlier nights on the history branch. */
function checkout(baseline: string): string {
  const ws = newWorkspace();
  mkdirSync(join(ws, '.github/rabbitmq-perf'), { recursive: true });
  copyFileSync(baseline, join(ws, BASELINE));
  return ws;
}

describe('mode: nightly', () => {
  const first = newWorkspace();
  let baseline: Baseline;
  let nights: ActionRun[] = [];

  beforeAll(async () => {
    // One stored trial: the nights read only the broker the refresh recorded (its anchor).
    const r = await action(first, { mode: 'refresh', 'broker-image': BASE_IMAGE, repetitions: '1', 'refresh-commit': 'none' });
    expect(r.code, r.stdout.slice(-3000)).toBe(0);
    baseline = JSON.parse(readFileSync(join(first, BASELINE), 'utf8'));
    nights = [];
    for (let k = 1; k <= 2; k++) nights.push(await night(checkout(join(first, BASELINE)), BASE_IMAGE, `${'a'.repeat(39)}${k}`));
  }, 1_200_000);

  it('two A/A nights: each appends the paired ratio against the recorded broker, on the history pull request; no step', () => {
    for (const r of nights) {
      expect(r.code, r.stdout.slice(-3000)).toBe(0);
      expect(r.outputs['new-steps']).toBe('0');
    }
    const h = JSON.parse(gh.state.readFile(REPO, HISTORY, BRANCH)!) as NightlyHistory;
    expect(h.kind).toBe('rabbitmq-perf-gate/nightly-history');
    expect(h.entries).toHaveLength(2);
    expect(h.steps).toEqual([]);
    for (const [k, e] of h.entries.entries()) {
      expect(e.image).toBe(BASE_IMAGE);
      expect(e.revision).toBe(`${'a'.repeat(39)}${k + 1}`);
      expect(e.reference?.imageId).toBe(baseline.anchor!.imageId);
      const r = e.ratios!.one_fast.consumed_rate;
      // Four pairs, less any the machine disturbed (not compared: pairDisturbance), named as such.
      const trials = (JSON.parse(readFileSync(join(nights[k].workspace, 'rabbitmq-perf-gate-report/report.json'), 'utf8')) as RunReport).trials;
      expect(r.pairs).toBe(expectValidUnlessDisturbed(trials, 8) / 2);
      expect(r.ratio).toBeGreaterThan(0.5);
      expect(r.ratio).toBeLessThan(2);
      expect(e.gate).toEqual({ one_fast: ['consumed_rate'] });
      expect(e.medians.one_fast.consumed_rate).toBeGreaterThan(0);
    }
    const pulls = gh.state.pulls(REPO).filter((p) => p.headRef === BRANCH);
    expect(pulls).toHaveLength(1);
    expect(pulls[0].issue.body).toContain('Nightly history: 2 nights');
    expect(pulls[0].issue.body).toContain('No new step');
    const last = nights[1];
    expect(last.summary).toContain('Nightly history: 2 nights');
    const html = readFileSync(join(last.workspace, 'rabbitmq-perf-gate-report/report.html'), 'utf8');
    expect(html).toContain('id="nightly"');
    expect(html).toContain('data-chart="nightly-0"');
  });

  it('a regressed image after 30 quiet nights and two regressed ones: a new step, reported with its nights and the bisect command; the step fails', async () => {
    const h = JSON.parse(gh.state.readFile(REPO, HISTORY, BRANCH)!) as NightlyHistory;
    const ref = h.entries[0].reference!;
    const day = (k: number) => new Date(Date.UTC(2026, 0, 1 + k)).toISOString();
    const wave = (k: number) => 1 + 0.02 * Math.sin(k * 1.7);
    const seeded: NightlyHistory = {
      ...h,
      steps: [],
      entries: Array.from({ length: 32 }, (_, k) => ({
        createdAt: day(k),
        medians: { one_fast: { consumed_rate: 20_000 } },
        gate: { one_fast: ['consumed_rate'] },
        image: k < 30 ? BASE_IMAGE : regressed.images[0],
        revision: `${String(k).padStart(2, '0')}${'b'.repeat(38)}`,
        reference: ref,
        ratios: { one_fast: { consumed_rate: { ratio: (k < 30 ? 1 : 0.4) * wave(k), ciLow: null, ciHigh: null, pairs: 6 } } },
      })),
    };
    const ws = checkout(join(first, BASELINE));
    writeFileSync(join(ws, HISTORY), JSON.stringify(seeded));
    // A gate of its own name has its own history branch (none yet), so the workspace's file is read.
    const r = await runAction({
      workspace: ws,
      apiUrl: gh.url,
      eventName: 'schedule',
      event: scheduleEvent(),
      env: { GITHUB_REF: 'refs/heads/main' },
      timeoutMs: 400_000,
      inputs: {
        ...fast,
        'github-token': TOKEN,
        mode: 'nightly',
        name: 'step',
        'broker-image': regressed.images[0],
        sequential: 'false',
        // Three pairs: the regression (−55 to −76 %, bisect.test.ts) is far past 0.75 in any one of
        // them; the A/A nights keep four, so one disturbed pair still leaves the three a paired ratio needs.
        repetitions: '3',
        'refresh-commit': 'pr',
        revision: `32${'c'.repeat(38)}`,
        'bisect-template': 'my/rabbitmq:sha-{sha}',
      },
    });
    expect(r.code, r.stdout.slice(-3000)).toBe(1);
    expect(r.outputs['new-steps']).toBe('1');
    const after = JSON.parse(readFileSync(join(ws, HISTORY), 'utf8')) as NightlyHistory;
    expect(after.entries).toHaveLength(33);
    expect(after.entries[32].ratios!.one_fast.consumed_rate.ratio).toBeLessThan(0.75);
    expect(after.steps).toHaveLength(1);
    expect(after.steps[0]).toMatchObject({ scenario: 'one_fast', metric: 'consumed_rate', series: 'ratio', before: day(29), at: day(30), worse: true });
    expect(after.steps[0].magnitude).toBeLessThan(-0.3);
    // One night wider on each side than the two nights around the step.
    const range = `28${'b'.repeat(38)}..31${'b'.repeat(38)}`;
    expect(r.summary).toContain('1 new step');
    expect(r.summary).toContain(`--range ${range}`);
    expect(r.stdout).toMatch(/::error title=rabbitmq-perf-gate nightly::Performance step: one_fast consumed: a step of −/);
    const pull = gh.state.pulls(REPO).find((p) => p.headRef === `${BRANCH}-step`)!;
    expect(pull.issue.title).toMatch(/1 new step/);
    expect(pull.issue.body).toContain(`--range ${range}`);
    const html = readFileSync(join(ws, 'rabbitmq-perf-gate-report/report.html'), 'utf8');
    expect(html).toContain('New steps');
  }, 600_000);
});
