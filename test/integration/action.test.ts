// The bundled action run as the Actions runner runs it, against the real broker and the local
// GitHub REST server (every request and response validated against GitHub's OpenAPI description).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startGitHubServer, type GitHubServer } from '../support/github-server';
import { runAction, newWorkspace, type ActionRun } from '../support/action-runner';
import type { CommentRec } from '../support/github-state';
import { AMQP_URL, MANAGEMENT_URL } from '../support/broker';

const TOKEN = 'ghs_perfgatetesttoken';
const REPO = 'Codertocat/Hello-World';
const fast = { scenarios: 'smoke', repetitions: '5', duration: '1', warmup: '0.5', 'broker-url': AMQP_URL, 'management-url': MANAGEMENT_URL };

let gh: GitHubServer;
beforeAll(async () => {
  gh = await startGitHubServer({ token: TOKEN, repo: REPO });
  gh.state.addPull(REPO, { head: 'changes', number: 2 });
  // Someone else quoting our marker: must be left alone.
  gh.state.addComment(REPO, 2, { body: 'copied: <!-- rabbitmq-perf-gate:rabbitmq-perf-gate -->', user: 'Codertocat' });
});
afterEach(() => {
  // After each test, so a request or response outside the OpenAPI spec fails the test that made it.
  expect(gh.violations).toEqual([]);
});
afterAll(async () => {
  await gh.close();
});

const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at .+\(.*:\d+:\d+\)/);

describe('bundled action on a pull_request event', () => {
  const workspace = newWorkspace();
  const baseline = join(workspace, '.github/rabbitmq-perf/baseline.json');
  const read = (file: string | undefined) => (file && existsSync(file) ? readFileSync(file, 'utf8') : '');
  const bot = () => gh.state.comments(REPO, 2).filter((c) => c.user.login === 'github-actions[bot]');
  /** The refresh and the first check, run once here (the other tests build on the baseline and
   *  the comment they leave), with what they wrote as it was right after each. */
  let refreshed: { r: ActionRun; baseline: string };
  let checked: { r: ActionRun; report: string; pr: string; ours: Array<Pick<CommentRec, 'id' | 'body'>> };

  beforeAll(async () => {
    const r = await runAction({ workspace, apiUrl: gh.url, inputs: { ...fast, mode: 'refresh', 'github-token': TOKEN } });
    refreshed = { r, baseline: read(baseline) };
    const c = await runAction({ workspace, apiUrl: gh.url, inputs: { ...fast, 'github-token': TOKEN } });
    checked = { r: c, report: read(c.outputs.report), pr: read(join(workspace, 'rabbitmq-perf-gate-report/pr.json')), ours: bot().map((x) => ({ id: x.id, body: x.body })) };
  });

  it('refresh writes the stored baseline atomically, with every trial and the fingerprint', () => {
    const { r } = refreshed;
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const b = JSON.parse(refreshed.baseline);
    expect(b.schemaVersion).toBe(1);
    expect(b.scenarios.one_fast.metrics.consumed_rate).toHaveLength(5);
    expect(b.fingerprint.cores).toBeGreaterThan(0);
    expect(b.target.rabbitmqVersion).toMatch(/^\d+\.\d+\.\d+/);
    expect(b.history).toHaveLength(1);
    expect(r.outputs['refresh-url']).toBe(baseline);
    expect(r.stdout).not.toContain('guest:guest');
  });

  it('first check creates one comment; outputs and summary are written', () => {
    const { r, ours } = checked;
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(['pass', 'warn', 'inconclusive']).toContain(r.outputs.verdict);
    expect(r.outputs.regressions).toBe('0');
    expect(JSON.parse(checked.report).comparisons.length).toBeGreaterThan(0);
    expect(r.summary).toContain('| Scenario | Metric |');
    expect(r.summary).toContain('one\\_fast');
    expect(ours).toHaveLength(1);
    expect(ours[0].body).toContain('<!-- rabbitmq-perf-gate:rabbitmq-perf-gate -->');
    expect(ours[0].body).toContain('xychart-beta');
    expect(r.outputs['comment-url']).toContain(`#issuecomment-${ours[0].id}`);
    expect(JSON.parse(checked.pr)).toMatchObject({ number: 2, name: 'rabbitmq-perf-gate' });
  });

  it('a comment the API refuses (403) is a warning: the verdict and the exit status stand', async () => {
    gh.fail({ method: 'PATCH', path: /\/issues\/comments\/\d+$/, status: 403 });
    const before = gh.state.comments(REPO, 2).map((c) => c.body);
    const r = await runAction({ workspace, apiUrl: gh.url, inputs: { ...fast, 'github-token': TOKEN } });
    const report = JSON.parse(readFileSync(r.outputs.report, 'utf8'));
    expect(r.outputs.verdict).toBe(report.verdict);
    expect(r.code, r.stdout + r.stderr).toBe(report.verdict === 'fail' ? 1 : 0);
    expect(r.stdout).toMatch(/::warning title=rabbitmq-perf-gate comment::.*GitHub answered 403 \(Forbidden\).*The gate's verdict \(\w+\) is unchanged/);
    expect(gh.state.comments(REPO, 2).map((c) => c.body)).toEqual(before);
    noStack(r.stdout + r.stderr);
  });

  it('second check updates that comment in place, and a real regression fails the step', async () => {
    // Make the stored baseline three times faster than this broker: a regression far beyond tolerance.
    const stored = readFileSync(baseline, 'utf8');
    const b = JSON.parse(stored);
    for (const m of ['published_rate', 'consumed_rate']) b.scenarios.one_fast.metrics[m] = b.scenarios.one_fast.metrics[m].map((v: number) => v * 3);
    writeFileSync(baseline, JSON.stringify(b));
    try {
      const before = bot()[0];
      const r = await runAction({ workspace, apiUrl: gh.url, inputs: { ...fast, 'github-token': TOKEN } });
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.outputs.verdict).toBe('fail');
      expect(Number(r.outputs.regressions)).toBeGreaterThanOrEqual(1);
      expect(r.stdout).toMatch(/::error.*regression/);
      const ours = bot();
      expect(ours).toHaveLength(1);
      expect(ours[0].id).toBe(before.id);
      expect(ours[0].body).toContain('❌');
      expect(gh.state.comments(REPO, 2).find((c) => c.user.login === 'Codertocat')!.body).toBe('copied: <!-- rabbitmq-perf-gate:rabbitmq-perf-gate -->');
    } finally {
      writeFileSync(baseline, stored); // the refresh's baseline again, for whichever test runs next
    }
  });
});

describe('bad input gives one clear error, no stack trace', () => {
  it('a broker URL that refuses connections', async () => {
    const r = await runAction({ apiUrl: gh.url, inputs: { ...fast, 'broker-url': 'amqp://guest:secret-pw@127.0.0.1:1', comment: 'never' } });
    expect(r.code).toBe(1);
    const errors = r.stdout.split('\n').filter((l) => l.startsWith('::error'));
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(errors[0]).toMatch(/cannot connect to the broker at amqp:\/\/guest:\*\*\*@127\.0\.0\.1:1.*connection refused/);
    // The runner hides the secret after ::add-mask::; nothing else may print it.
    expect(r.stdout.replace(/^::add-mask::.*$/m, '')).not.toContain('secret-pw');
    expect(r.stdout).toContain('::add-mask::secret-pw');
    expect(errors).toHaveLength(1);
    noStack(r.stdout + r.stderr);
  });

  it('an unknown preset', async () => {
    const r = await runAction({ apiUrl: gh.url, inputs: { ...fast, scenarios: 'no-such-preset', comment: 'never' } });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/::error.*unknown preset or scenario "no-such-preset".*Fix: use a preset \(smoke, pr/);
    noStack(r.stdout + r.stderr);
  });

  it('a baseline file that is not JSON: reported, and the run goes on without a stored baseline', async () => {
    const ws = newWorkspace();
    mkdirSync(join(ws, '.github/rabbitmq-perf'), { recursive: true });
    writeFileSync(join(ws, '.github/rabbitmq-perf/baseline.json'), '{ "schemaVersion": 1, oops');
    const r = await runAction({ workspace: ws, apiUrl: gh.url, inputs: { ...fast, repetitions: '1', comment: 'never' } });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/::error title=rabbitmq-perf-gate,file=\.github\/rabbitmq-perf\/baseline\.json,line=1::.*the baseline file is not valid JSON/);
    expect(r.outputs.verdict).toBe('inconclusive');
    noStack(r.stdout + r.stderr);
  });
});
