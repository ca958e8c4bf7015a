// Sharding and merging: the pure shard planner (deterministic, balanced, every scenario in
// exactly one shard), then the bundled action end to end — two shards of a two-scenario matrix
// on a pull request (neither comments), and `mode: merge` combining their reports into one
// report whose comparisons are re-run over all trials (Holm across every gating metric), one
// verdict and one sticky comment. Duplicate shards are refused with a clear error.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGitHubServer, type GitHubServer } from '../support/github-server';
import { runAction, newWorkspace, type ActionRun } from '../support/action-runner';
import { writeScenarioFolder } from '../support/github-events';
import { AMQP_URL, MANAGEMENT_URL, spec } from '../support/broker';
import { parseShard, shardBins, shardScenarios, expectedSeconds } from '../../src/plan/shard';
import { holm } from '../../src/compare/holm';

describe('shard planner', () => {
  const scenarios = [
    ['a', 1, 8],
    ['b', 2, 20],
    ['c', 0.5, 4],
    ['d', 1, 8],
    ['e', 2, 30],
    ['f', 1, 2],
    ['g', 0, 10],
  ].map(([id, warmup, duration]) => spec(id as string, {}, { warmup: warmup as number, duration: duration as number }));

  it('parses i/n and refuses anything else with a fix', () => {
    expect(parseShard('2/3')).toEqual({ index: 2, count: 3 });
    expect(parseShard(' 1 / 1 ')).toEqual({ index: 1, count: 1 });
    for (const bad of ['0/3', '4/3', '1/0', 'a/b', '1', '1/3/4', '-1/2', '1/999']) {
      expect(() => parseShard(bad)).toThrow(/is not a shard/);
    }
  });

  it('puts every scenario in exactly one shard, balanced longest-first, deterministically', () => {
    for (const n of [1, 2, 3, 4, 7, 9]) {
      const bins = shardBins(scenarios, n, 5);
      expect(bins).toHaveLength(n);
      expect(
        bins
          .flat()
          .map((s) => s.id)
          .sort(),
      ).toEqual(scenarios.map((s) => s.id).sort());
      expect(shardBins([...scenarios].reverse(), n, 5).map((b) => b.map((s) => s.id).sort())).toEqual(bins.map((b) => b.map((s) => s.id).sort()));
      const loads = bins.map((b) => b.reduce((t, s) => t + expectedSeconds(s, 5), 0));
      const biggest = Math.max(...scenarios.map((s) => expectedSeconds(s, 5)));
      const total = loads.reduce((a, b) => a + b, 0);
      expect(Math.max(...loads)).toBeLessThanOrEqual(Math.max(biggest, total / n + biggest));
      for (let i = 1; i <= n; i++) expect(shardScenarios(scenarios, { index: i, count: n }, 5)).toEqual(bins[i - 1]);
    }
    // Longest first (32, 22, 10, 9, 9, 4.5, 3 s) into the least-loaded of 3 bins, each kept in input order:
    expect(shardBins(scenarios, 3, 1).map((b) => b.map((s) => s.id))).toEqual([['e'], ['b', 'c', 'f'], ['a', 'd', 'g']]);
    expect(shardScenarios(scenarios, undefined, 5)).toBe(scenarios);
  });
});

const TOKEN = 'ghs_perfgateshards';
const REPO = 'Codertocat/Hello-World';
const fast = { scenarios: 'perf', repetitions: '5', duration: '1', warmup: '0.5', 'broker-url': AMQP_URL, 'management-url': MANAGEMENT_URL, 'github-token': TOKEN };

let gh: GitHubServer;
beforeAll(async () => {
  gh = await startGitHubServer({ token: TOKEN, repo: REPO });
  gh.state.addPull(REPO, { head: 'changes', number: 2 });
});
afterEach(() => {
  // After each test, so a request or response outside the OpenAPI spec fails the test that made it.
  expect(gh.violations).toEqual([]);
});
afterAll(async () => {
  await gh.close();
});

describe('two shards merged into one comment', () => {
  const ws = newWorkspace();
  writeScenarioFolder(join(ws, 'perf'), ['alpha', 'beta']);
  const bot = () => gh.state.comments(REPO, 2).filter((c) => c.user.login === 'github-actions[bot]');
  /** The refresh and the two shards' runs, once, here: the merge tests need all of them, and each
   *  of these runs is checked by its own test below (with the bot's comments right after it). */
  let refreshed: ActionRun;
  const shards: Array<{ r: ActionRun; comments: number }> = [];

  beforeAll(async () => {
    refreshed = await runAction({ workspace: ws, apiUrl: gh.url, inputs: { ...fast, mode: 'refresh' } });
    for (const i of [1, 2]) {
      const r = await runAction({ workspace: ws, apiUrl: gh.url, inputs: { ...fast, shard: `${i}/2`, 'report-dir': `out/shard-${i}` } });
      shards.push({ r, comments: bot().length });
    }
  });

  it('the baseline of the whole matrix is refreshed', () => {
    const r = refreshed;
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(Object.keys(JSON.parse(readFileSync(join(ws, '.github/rabbitmq-perf/baseline.json'), 'utf8')).scenarios).sort()).toEqual(['alpha', 'beta']);
  });

  for (const i of [1, 2]) {
    it(`shard ${i}/2 runs its half and does not comment`, () => {
      const { r, comments } = shards[i - 1];
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const report = JSON.parse(readFileSync(r.outputs.report, 'utf8'));
      expect(report.scenarios.map((s: any) => s.id)).toEqual([i === 1 ? 'alpha' : 'beta']);
      expect(r.stdout).toContain(`comment: none from shard ${i}/2`);
      expect(comments).toBe(0);
    });
  }

  it('mode: merge (a glob) makes one report, re-compared with Holm over all metrics, and one comment', async () => {
    const r = await runAction({ workspace: ws, apiUrl: gh.url, inputs: { ...fast, mode: 'merge', reports: 'out/shard-*/report.json', 'report-dir': 'out/merged' } });
    expect(r.code, r.stdout + r.stderr).toBe(['fail'].includes(r.outputs.verdict) ? 1 : 0);
    const merged = JSON.parse(readFileSync(r.outputs.report, 'utf8'));
    expect(merged.scenarios.map((s: any) => s.id)).toEqual(['alpha', 'beta']);
    expect(merged.trials).toHaveLength(10);
    expect(merged.decidedBy).toMatch(/merged from 2 shards$/);
    const tested = (r: any) => r.comparisons.filter((c: any) => c.gating && c.pValue !== null);
    const gating = tested(merged);
    const shard1 = JSON.parse(readFileSync(join(ws, 'out/shard-1/report.json'), 'utf8'));
    const shard2 = JSON.parse(readFileSync(join(ws, 'out/shard-2/report.json'), 'utf8'));
    expect(gating.length).toBe(tested(shard1).length + tested(shard2).length);
    expect(gating.length).toBeGreaterThanOrEqual(2);
    expect(gating.map((c: any) => c.pAdjusted)).toEqual(holm(gating.map((c: any) => c.pValue)));
    const a1 = shard1.comparisons.find((c: any) => c.metric === 'consumed_rate');
    const m1 = merged.comparisons.find((c: any) => c.scenario === 'alpha' && c.metric === 'consumed_rate');
    expect(m1.pValue).toBe(a1.pValue);
    expect(m1.pAdjusted).toBeGreaterThanOrEqual(a1.pAdjusted);
    const ours = bot();
    expect(ours).toHaveLength(1);
    expect(ours[0].body).toContain('| alpha |');
    expect(ours[0].body).toContain('| beta |');
    expect(ours[0].body).toContain('merged from 2 shards');
    expect(r.outputs.verdict).toBe(merged.verdict);
    expect(JSON.parse(readFileSync(join(ws, 'out/merged/pr.json'), 'utf8')).number).toBe(2);
  });

  it('the same shard twice is refused with a clear error', async () => {
    cpSync(join(ws, 'out/shard-1'), join(ws, 'dup/a'), { recursive: true });
    cpSync(join(ws, 'out/shard-1'), join(ws, 'dup/b'), { recursive: true });
    const r = await runAction({ workspace: ws, apiUrl: gh.url, inputs: { ...fast, mode: 'merge', reports: 'dup', comment: 'never' } });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/::error.*scenario "alpha" is in both .*dup\/a\/report\.json and .*dup\/b\/report\.json.*Fix: every scenario must run in exactly one shard/);
  });
});
