// Anchored baselines on real containers, through the bundled CLI: a refresh records the broker it
// ran on; a check on "another runner" (the baseline's CPU model changed, so its stored trials may
// only warn) starts that broker again and decides by a same-run A/B — it fails a real broker
// regression (Erlang `+S 2:1` and half a core on the candidate) and does not fail an A/A; a moved tag (the same
// local tag retagged to another image) is called out and A/B'd old against new; when the recorded
// broker cannot be started (its image gone, no Docker) the stored trials decide and the report
// says why. The failing A/B also carries the broker evidence next to the failing metric and,
// asked for, a differential flame graph recorded with perf.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Baseline, RunReport } from '../../src/schema/types';
import { ANCHOR_ID } from '../../src/broker/anchor';
import { AMQP_URL } from '../support/broker';
import { evidenceForRegressions } from '../../src/report/evidence';
import { renderComment } from '../../src/report/markdown';
import { expectValidUnlessDisturbed } from '../support/trials';

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = join(ROOT, 'dist/cli.js');
const OLD = 'rabbitmq-perf-gate/rabbitmq:3.10.8';
const NEW = 'rabbitmq-perf-gate/rabbitmq:4.0.5';
const FLOATING = 'rabbitmq-perf-gate/rabbitmq:anchored-test';
const tmp = mkdtempSync(join(tmpdir(), 'perf-gate-anchor-'));
const file = join(tmp, 'baseline.json');
/** Every run here: one_fast with 0.5 s warm-ups; each run gives its own windows and rounds. */
const scenario = ['--scenarios', 'one_fast', '--warmup', '0.5'];
/** A fixed trial order, for every run but the A/A (a fresh order each time it runs). */
const short = [...scenario, '--seed', '5'];

function cli(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: tmp, encoding: 'utf8', timeout: 400_000, env: { PATH: process.env.PATH ?? '', HOME: tmp, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const docker = (...args: string[]) => spawnSync('docker', args, { encoding: 'utf8' });
const imageId = (ref: string) => docker('image', 'inspect', '--format', '{{.Id}}', ref).stdout.trim();

function check(args: string[], env: Record<string, string> = {}, order = short): { code: number | null; report: RunReport; stderr: string } {
  const r = cli(['run', ...order, '--baseline-file', file, '--json', '--out', join(tmp, 'out'), ...args], env);
  expect(r.stdout, r.stderr).toMatch(/^\{/);
  return { code: r.code, report: JSON.parse(r.stdout), stderr: r.stderr };
}
const gating = (r: RunReport) => r.comparisons.filter((c) => c.gating);
const storedShown = (r: RunReport) => r.comparisons.filter((c) => c.against === 'stored');

beforeAll(() => {
  expect(docker('tag', OLD, FLOATING).status).toBe(0);
  // Three 0.5 + 1 s trials: the stored trials are only shown next to the A/Bs and decide when the
  // recorded broker cannot be started; no assertion reads their rates.
  const r = cli(['refresh', ...short, '--image', FLOATING, '--repetitions', '3', '--duration', '1', '--baseline-file', file, '--out', join(tmp, 'refresh')]);
  expect(r.code, r.stderr).toBe(0);
  // The same baseline as seen from another runner: its stored trials may warn, never fail.
  const b: Baseline = JSON.parse(readFileSync(file, 'utf8'));
  b.fingerprint.cpuModel = 'Another CPU model (anchored-baseline test)';
  writeFileSync(file, JSON.stringify(b));
}, 300_000);
afterAll(() => {
  docker('rmi', FLOATING);
  rmSync(tmp, { recursive: true, force: true });
});

describe('anchored baseline', () => {
  it('refresh records the broker: the image ID the tag named, env, nodes, setup, config', () => {
    const b: Baseline = JSON.parse(readFileSync(file, 'utf8'));
    expect(b.anchor).toMatchObject({ image: FLOATING, imageId: imageId(OLD), repoDigests: [], nodes: 1, network: 'host', setup: [], configFiles: [] });
    expect(b.target.imageId).toBe(imageId(OLD));
  });

  it('checked on another runner: the recorded broker is started again and a real regression (+S 2:1, half a core) fails the same-run A/B', () => {
    const target = join(tmp, 'slow.yml');
    // The quota keeps the regression clear on a busy machine, where +S 2:1 alone (the reference
    // gets no second core either) came out inconclusive.
    writeFileSync(target, `label: two schedulers\nimage: ${FLOATING}\nenv:\n  RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: "+S 2:1"\nresources:\n  cpus: 0.5\n`);
    const html = join(tmp, 'flame.html');
    // Eight pairs: a pair the machine disturbs is dropped whole, and seven still reach p < 0.05.
    // Two-second windows (after 0.5 s warm-ups): the profiled trials' perf samples (> 100 a side
    // asserted below, the candidate on half a core) keep a clear margin.
    const { code, report } = check(['--target', target, '--repetitions', '8', '--duration', '2', '--flame-graph', '--html', html]);
    const anchor = report.targets.find((t) => t.id === ANCHOR_ID)!;
    expect(anchor).toMatchObject({ image: imageId(OLD), rabbitmqVersion: '3.10.8' });
    expect(report.decidedBy).toMatch(/^same-run A\/B against baseline broker \(rabbitmq-perf-gate\/rabbitmq:anchored-test @ [0-9a-f]{12}\)/);
    expect(report.targetNote).toMatch(/stored baseline's broker .* was started again next to the candidate/);
    expect(report.effectDiff?.join('\n')).toMatch(/schedulers|\+S/i);
    const [c] = gating(report);
    expect(c, JSON.stringify(report.comparisons)).toMatchObject({ metric: 'consumed_rate', against: ANCHOR_ID, paired: true, verdict: 'fail' });
    expect(c.ciHigh!).toBeLessThan(0.95);
    expect(report.verdict).toBe('fail');
    expect(code).toBe(1);
    // The stored trials: shown as a second opinion, never deciding.
    expect(storedShown(report).length).toBeGreaterThan(0);
    expect(storedShown(report).every((s) => !s.gating)).toBe(true);
    // What moved inside the broker, paired like the metrics: both containers give cgroup CPU and
    // the scheduler split (the provider switched microstate accounting on), and the candidate's
    // one online scheduler shows as at most one busy core.
    for (const t of report.targets) expect(t.evidence?.sources.sort()).toEqual(['cgroup', 'msacc', 'prometheus']);
    const ev = (m: string) => report.evidence?.find((e) => e.metric === m && e.against === ANCHOR_ID);
    const pairs = expectValidUnlessDisturbed(report.trials, 16) / 2;
    expect(c.nCandidate).toBe(pairs);
    expect(ev('broker_cpu_us_per_msg')?.nCandidate).toBe(pairs);
    expect(ev('broker_cpu_us_per_msg')?.gating).toBe(false);
    expect(ev('broker_sched_busy')!.candidateMedian!).toBeLessThanOrEqual(1.05);
    expect(ev('broker_sched_busy')!.baselineMedian!).toBeGreaterThan(0);
    const [moved] = evidenceForRegressions(report);
    expect(moved, JSON.stringify(report.evidence)).toMatchObject({ scenario: 'one_fast', against: ANCHOR_ID });
    expect(moved.lines.length).toBeGreaterThan(0);
    expect(renderComment(report, { name: 'gate' })).toContain('#### What moved inside the broker');
    // --flame-graph: one profiled trial per target of the failing scenario, perf on the host, the
    // JIT's map from the container: Erlang functions by name, scheduler threads merged.
    expect(report.flameNote).toBeUndefined();
    const [flame] = report.flames ?? [];
    expect(flame).toMatchObject({ scenario: 'one_fast', against: ANCHOR_ID, candidateLabel: 'two schedulers' });
    for (const side of [flame.candidate, flame.baseline]) {
      expect(Object.values(side).reduce((a, b) => a + b, 0)).toBeGreaterThan(100);
      expect(Object.keys(side).some((s) => s.startsWith('scheduler;') && s.includes('$gen_server2:handle_msg/2'))).toBe(true);
    }
    const page = readFileSync(html, 'utf8');
    expect(page).toContain('<h3>Differential flame graph</h3>');
    expect(page).toMatch(/<svg [^>]*aria-label="differential flame graph"/);
  });

  it('an A/A against the recorded broker does not fail (run again once if it did)', () => {
    // What the gate promises for an A/A is no fail; at six one-second pairs on a busy shared
    // machine a 90 % CI leaves 1 now and then in either direction (seen +6.7 % and +8.5 % in CI
    // runs of a fixed order), so that is logged, not asserted. A fail by chance (the whole CI
    // beyond −5 %) is rare; twice in a row, with a fresh trial order each time, rarer still,
    // while a real difference between the candidate and the restarted broker fails both. (Six
    // pairs is the fewest at which a fail can happen at all; the 0.5 s warm-up, like every other
    // setting, is the same on both sides: it can widen the CI, not tilt it to one side.)
    const aa = () => check(['--image', FLOATING, '--repetitions', '6', '--duration', '1'], {}, scenario); // a random order each run
    // Each target's consumed rate in run order, so a difference that shows can be told from drift.
    const rates = (r: RunReport) => r.trials.map((t) => `${t.order}:${t.target === ANCHOR_ID ? 'A' : 'C'} ${Math.round(t.metrics.consumed_rate ?? 0)}`).join(', ');
    const said = (r: RunReport) =>
      `seed ${r.seed}: ${gating(r)
        .map((c) => c.reason)
        .join('; ')}; trials ${rates(r)}`;
    let { code, report } = aa();
    console.log(`anchored A/A, ${said(report)}`);
    if (report.verdict === 'fail') {
      console.warn('anchored A/A failed once, run again');
      ({ code, report } = aa());
      console.log(`anchored A/A again, ${said(report)}`);
    }
    expect(report.decidedBy).toMatch(/^same-run A\/B against baseline broker/);
    expect(report.sequential).toBeUndefined(); // --repetitions: the fixed design
    expect(report.targetNote).not.toMatch(/names another image/);
    const [c] = gating(report);
    expect(c).toMatchObject({ metric: 'consumed_rate', against: ANCHOR_ID, paired: true, nCandidate: expectValidUnlessDisturbed(report.trials, 12) / 2 });
    expect(report.verdict, said(report)).not.toBe('fail');
    expect(code).toBe(0);
  }, 300_000);

  it("a moved tag: the same tag now names 4.0.5, so the new image is A/B'd against the old one", () => {
    expect(docker('tag', NEW, FLOATING).status).toBe(0);
    try {
      // One round of 0.5 + 1 s trials: what is asserted is the targets and the note, not rates.
      const { report, stderr } = check(['--image', FLOATING, '--repetitions', '1', '--duration', '1']);
      expect(
        report.targets.map((t) => t.id),
        stderr,
      ).toEqual(['candidate', ANCHOR_ID]);
      expect(report.targetNote).toContain(`${FLOATING} names another image than at the refresh (${imageId(OLD).slice(7, 19)} → ${imageId(NEW).slice(7, 19)})`);
      const version = (id: string) => report.targets.find((t) => t.id === id)!.rabbitmqVersion;
      expect([version(report.candidate), version(ANCHOR_ID)]).toEqual(['4.0.5', '3.10.8']);
      expectValidUnlessDisturbed(report.trials, 2);
    } finally {
      docker('tag', OLD, FLOATING); // the other tests' candidate is the refresh's image
    }
  });

  it('the recorded broker cannot be started (image gone, no Docker): the stored trials decide and the report says why', () => {
    const b: Baseline = JSON.parse(readFileSync(file, 'utf8'));
    const gone = join(tmp, 'gone.json');
    writeFileSync(gone, JSON.stringify({ ...b, anchor: { ...b.anchor, imageId: `sha256:${'0'.repeat(64)}` } }));
    // One 0.5 + 1 s trial a run: what is asserted is who decides and why, not rates.
    const url = ['--broker-url', AMQP_URL, '--repetitions', '1', '--duration', '1'];
    const a = cli(['run', ...short, ...url, '--baseline-file', gone, '--json', '--out', join(tmp, 'out')]);
    const r1: RunReport = JSON.parse(a.stdout);
    expect(r1.targetNote).toMatch(
      /the baseline's image is gone \(rabbitmq-perf-gate\/rabbitmq:anchored-test was [0-9a-f]{12} at the refresh; it is a local image no longer on this runner\): compared with the baseline's stored trials/,
    );
    expect(r1.decidedBy).toMatch(/^stored baseline \(may warn, never fail: .*CPU/);
    expect(r1.targets.map((t) => t.id)).toEqual(['candidate']);
    expect(a.stderr).toMatch(/Stored baseline: the baseline's image is gone/);
    const { report: r2 } = check(url, { DOCKER_HOST: `unix://${join(tmp, 'no-docker.sock')}` });
    expect(r2.targetNote).toMatch(/could not be started: the Docker daemon is not reachable .*: compared with the baseline's stored trials/);
    expect(r2.decidedBy).toMatch(/^stored baseline/);
    const r3 = check([...url, '--no-anchor']).report;
    expect(r3.targetNote ?? '').not.toMatch(/baseline's broker/);
    expect(r3.decidedBy).toMatch(/^stored baseline/);
  });
});
