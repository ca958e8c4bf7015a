// Interrupted runs lose nothing (docs/reliability.md, "Run control"): the bundled CLI (dist/cli.js,
// on the project's Node) against real 3.10.8 containers. SIGINT or SIGTERM mid-trial and while the
// brokers boot: the containers are removed, the trials that ran are written (report.json,
// summary.md, report.html) with "interrupted after N of M planned trials", no baseline, exit
// 130/143. `run --resume DIR` goes on with the same plan to a verdict, and refuses a different
// image. A SIGKILLed run's broker is removed (and named) by the next run — here the killed run's
// own resume, which goes on from the report.json it saved after its last finished trial — while a
// live run's containers (that resume's, as it measures) are left alone and reported, with the
// machine's load. Every container a test touches belongs to a process the test started (its own
// RABBITMQ_PERF_GATE_RUN_ID).
import { afterAll, describe, expect, it } from 'vitest';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { RunReport } from '../../src/schema/types';
import { buildPlan } from '../../src/plan/plan';
import { AMQP_URL, MANAGEMENT_URL } from '../support/broker';
import { expectValidUnlessDisturbed } from '../support/trials';

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = join(ROOT, 'dist/cli.js');
const NODE = join(ROOT, 'node_modules/.bin/node');
const IMAGE = 'rabbitmq-perf-gate/rabbitmq:3.10.8';
const OTHER_IMAGE = 'rabbitmq-perf-gate/rabbitmq:4.0.5';
const tmp = mkdtempSync(join(tmpdir(), 'perf-gate-interrupt-'));
const runIds: string[] = [];
const children: ChildProcess[] = [];
const short = (role: string) => `it37-${role}-${process.pid}-${Date.now().toString(36)}`;

function docker(...args: string[]): string {
  return execFileSync('docker', args, { encoding: 'utf8' }).trim();
}
const containersOf = (runId: string) => docker('ps', '-a', '-q', '--filter', `label=rabbitmq-perf-gate.run=${runId}`).split('\n').filter(Boolean);
const namesOf = (runId: string) => docker('ps', '-a', '--format', '{{.Names}}', '--filter', `label=rabbitmq-perf-gate.run=${runId}`).split('\n').filter(Boolean);

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const r of runIds) for (const c of containersOf(r)) docker('rm', '-f', '-v', c);
  rmSync(tmp, { recursive: true, force: true });
});

interface Cli {
  p: ChildProcess;
  runId: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  /** Resolves once stderr matches (polled), rejects after `ms`. */
  waitFor(re: RegExp, ms?: number): Promise<void>;
}

/** Starts the bundled CLI as a user would, with its own run id (container label). */
function cli(role: string, args: string[]): Cli {
  const runId = short(role);
  runIds.push(runId);
  const p = spawn(NODE, [CLI, ...args], { cwd: tmp, env: { PATH: process.env.PATH ?? '', HOME: tmp, RABBITMQ_PERF_GATE_RUN_ID: runId }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(p);
  let out = '';
  let err = '';
  p.stdout!.on('data', (d: Buffer) => {
    out += d;
  });
  p.stderr!.on('data', (d: Buffer) => {
    err += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((r) => p.on('close', (code, signal) => r({ code, signal, at: Date.now() })));
  return {
    p,
    runId,
    stdout: () => out,
    stderr: () => err,
    exited,
    async waitFor(re, ms = 120_000) {
      for (const end = Date.now() + ms; !re.test(err); await new Promise((r) => setTimeout(r, 100))) {
        if (Date.now() > end || p.exitCode !== null) throw new Error(`waited for ${re} in vain:\n${err}`);
      }
    },
  };
}

const short2 = ['--duration', '3', '--warmup', '0.5'];
const readReport = (dir: string): RunReport => JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8'));
const stopOf = (r: RunReport) => r.errors.filter((e) => e.scope === 'run').map((e) => e.message);
const oneLineError = (stderr: string) => {
  const lines = stderr.trim().split('\n');
  expect(lines.at(-1)).toMatch(/^error: /);
  expect(stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
};

describe('SIGINT mid-trial, then --resume', () => {
  const dir = join(tmp, 'ab');
  let partial: RunReport;
  let partialText: string;

  it('SIGINT during trial 4 of an A/B: containers removed, the trials that ran written, "interrupted after 4 of 6", exit 130', async () => {
    // Three rounds (6 trials): trial 4 is cut mid-round and two more never start, so the resume
    // below runs the cut trial again and the rest of the plan (3 trials).
    const c = cli('ab', [
      'run',
      '--image',
      IMAGE,
      '--baseline-image',
      IMAGE,
      '--scenarios',
      'smoke',
      '--repetitions',
      '3',
      ...short2,
      '--seed',
      '11',
      '--baseline-file',
      join(tmp, 'none.json'),
      '--out',
      dir,
    ]);
    await c.waitFor(/\[3\/6\]/);
    await new Promise((r) => setTimeout(r, 1500)); // inside trial 4's window
    const sent = Date.now();
    c.p.kill('SIGINT');
    const end = await c.exited;
    expect(end.code, c.stderr()).toBe(130);
    expect(end.at - sent, 'trial wind-down and writing are bounded').toBeLessThan(30_000);
    expect(containersOf(c.runId)).toEqual([]);
    partialText = readFileSync(join(dir, 'report.json'), 'utf8');
    partial = JSON.parse(partialText);
    expect(partial.trials).toHaveLength(4);
    expect(partial.trials.slice(0, 3).every((t) => t.valid)).toBe(true);
    expect(partial.trials[3].valid).toBe(false); // cut short by the signal
    expect(stopOf(partial)).toEqual(['Stopped early: the run was interrupted after 4 of 6 planned trials (the last one cut short); 2 did not start.']);
    expect(partial.verdict).toBe('inconclusive');
    expect(partial.resume).toMatchObject({ planned: 6, cut: partial.trials[3].order, candidate: { kind: 'docker', image: IMAGE }, reference: { kind: 'docker', image: IMAGE } });
    expect(readFileSync(join(dir, 'summary.md'), 'utf8')).toContain('**Stopped early: the run was interrupted after 4 of 6 planned trials');
    expect(readFileSync(join(dir, 'report.html'), 'utf8')).toContain('the run was interrupted after 4 of 6 planned trials');
    expect(c.stderr()).toMatch(/warning: SIGINT: removing the containers, then writing the report of the trials that ran/);
    expect(c.stderr()).toMatch(/Stopped early: the run was interrupted after 4 of 6 planned trials .*Go on with: rabbitmq-perf-gate run --resume /);
    expect(existsSync(join(tmp, 'none.json'))).toBe(false);
    // The machine's load was measured at the start and across each trial.
    expect(partial.machine?.start?.seconds).toBeGreaterThan(0.5);
    expect(partial.trials.every((t) => t.machine && t.machine.busyCores >= 0)).toBe(true);
    expect(partial.machine?.trials?.of).toBe(4);
  }, 150_000);

  it('a resume against a different image is refused: one error naming the image, the report untouched, no container', async () => {
    expect(partial, 'needs the interrupted run above').toBeDefined();
    const c = cli('wrong', ['run', '--resume', dir, '--image', OTHER_IMAGE, '--baseline-image', IMAGE]);
    const end = await c.exited;
    expect(end.code, c.stderr()).toBe(2);
    oneLineError(c.stderr());
    expect(c.stderr().trim().split('\n').at(-1)).toMatch(
      new RegExp(
        `^error: .*report\\.json: --resume: these are not the brokers the interrupted run measured: .*image ${IMAGE.replace(/[/.]/g, '\\$&')} \\(\\w{12}\\) then, ${OTHER_IMAGE.replace(/[/.]/g, '\\$&')} \\(\\w{12}\\) now.*RabbitMQ 3\\.10\\.8 then, 4\\.0\\.5 now.*Fix: `,
      ),
    );
    expect(readFileSync(join(dir, 'report.json'), 'utf8')).toBe(partialText);
    expect(containersOf(c.runId)).toEqual([]);
    // Options that would change the plan are refused before anything starts.
    const seed = cli('seed', ['run', '--resume', dir, '--seed', '12']);
    expect((await seed.exited).code).toBe(2);
    expect(seed.stderr()).toMatch(/^error: --seed: cannot be combined with --resume: .* Fix: drop --seed\n$/);
  }, 150_000);

  it('run --resume DIR: the same brokers again, the 3 finished trials kept, the rest of the same plan run, a verdict', async () => {
    expect(partial, 'needs the interrupted run above').toBeDefined();
    const c = cli('resume', ['run', '--resume', dir]);
    const end = await c.exited;
    expect([0, 1], c.stderr()).toContain(end.code);
    expect(c.stderr()).toContain(`Resuming ${join(dir, 'report.json')}: 3 trial(s) of the interrupted run are kept`);
    expect(containersOf(c.runId)).toEqual([]);
    const r = readReport(dir);
    expect(r.seed).toBe(11);
    expect(stopOf(r)).toEqual([]);
    expect(r.resume).toBeUndefined();
    expect(['pass', 'warn', 'fail', 'inconclusive']).toContain(r.verdict);
    // Each gating comparison counts the valid trials of its scenario (3 a side, less disturbed pairs).
    const validOf = (scenario: string, target: string) => r.trials.filter((t) => t.valid && t.scenario === scenario && t.target === target).length;
    const gating = r.comparisons.filter((x) => x.gating);
    expect(gating.length).toBeGreaterThan(0);
    for (const x of gating) expect([x.nCandidate, x.nBaseline]).toEqual([validOf(x.scenario, 'candidate'), validOf(x.scenario, 'baseline')]);
    const plan = buildPlan(r.scenarios, ['candidate', 'baseline'], 3, 11).map((p) => [p.order, p.scenario.id, p.target, p.trial]);
    expect(r.trials.map((t) => [t.order, t.scenario, t.target, t.trial])).toEqual(plan);
    expect(r.trials.slice(0, 3)).toEqual(partial.trials.slice(0, 3)); // kept as they were measured
    expect(r.trials[3].startedAt > partial.trials[3].startedAt).toBe(true); // the cut one ran again
    expectValidUnlessDisturbed(r.trials, plan.length);
    expect(r.resumed).toEqual([{ at: expect.any(String), kept: 3 }]);
    expect(r.createdAt).toBe(partial.createdAt);
    expect(r.machine?.trials?.of).toBe(6);
  }, 180_000);
});

describe('SIGTERM mid-trial of a refresh', () => {
  it('exit 143, the trials that ran written, the stored baseline left untouched', async () => {
    const dir = join(tmp, 'refresh');
    const baseline = join(tmp, 'refresh-baseline.json');
    const c = cli('refresh', ['refresh', '--image', IMAGE, '--scenarios', 'smoke', '--repetitions', '5', ...short2, '--baseline-file', baseline, '--out', dir]);
    await c.waitFor(/\[2\/5\]/);
    await new Promise((r) => setTimeout(r, 1500));
    c.p.kill('SIGTERM');
    const end = await c.exited;
    expect(end.code, c.stderr()).toBe(143);
    expect(containersOf(c.runId)).toEqual([]);
    const r = readReport(dir);
    expect(r.trials).toHaveLength(3);
    expect(stopOf(r)[0]).toMatch(/^Stopped early: the run was interrupted after 3 of 5 planned trials/);
    expect(existsSync(baseline)).toBe(false);
    expect(c.stderr()).toContain(`the stored baseline ${baseline} was left untouched`);
    expect(c.stderr()).toContain('Go on with: rabbitmq-perf-gate refresh --resume');
  }, 120_000);
});

describe('a signal while the brokers boot', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)(
    '%s: containers removed at once, a report with 0 trials, exit %i',
    async (signal, code) => {
      const dir = join(tmp, `boot-${signal}`);
      const c = cli(`boot${code}`, ['run', '--image', IMAGE, '--scenarios', 'smoke', '--repetitions', '3', ...short2, '--baseline-file', join(tmp, 'none.json'), '--out', dir]);
      for (const end = Date.now() + 60_000; containersOf(c.runId).length === 0; await new Promise((r) => setTimeout(r, 100))) {
        if (Date.now() > end) throw new Error(`no container came up:\n${c.stderr()}`);
      }
      const sent = Date.now();
      c.p.kill(signal);
      const end = await c.exited;
      expect(end.code, c.stderr()).toBe(code);
      expect(end.at - sent).toBeLessThan(30_000);
      expect(containersOf(c.runId)).toEqual([]);
      const r = readReport(dir);
      expect(r.trials).toEqual([]);
      expect(stopOf(r)).toEqual(['Stopped early: the run was interrupted after 0 of 3 planned trials; 3 did not start.']);
      expect(c.stderr()).not.toMatch(/^error: /m);
    },
    120_000,
  );
});

describe('no orphans', () => {
  it('a SIGKILLed run leaves its broker; its resume, the next run, removes it, says so and goes on; a live run is left alone and reported, with the load it puts on the machine', async () => {
    // K is killed as only an OOM killer kills: nothing of it can run. What it saved after its
    // second trial is what it leaves, besides its broker. Its ten trials are planned so that its
    // resume (L below) measures for eight more, long enough to be the live run beside M.
    const kDir = join(tmp, 'killed');
    const k = cli('killed', ['run', '--image', IMAGE, '--scenarios', 'smoke', '--repetitions', '10', ...short2, '--seed', '5', '--baseline-file', join(tmp, 'none.json'), '--out', kDir]);
    await k.waitFor(/\[2\/10\]/);
    k.p.kill('SIGKILL');
    expect((await k.exited).signal).toBe('SIGKILL');
    const saved = readReport(kDir);
    expect(saved.trials).toHaveLength(2);
    expect(stopOf(saved)).toEqual(["Stopped early: the run's process ended after 2 of 10 planned trials; 8 did not start."]);
    expect(saved.resume).toMatchObject({ planned: 10, candidate: { image: IMAGE } });
    const orphan = namesOf(k.runId);
    expect(orphan).toHaveLength(1);
    const labels = JSON.parse(docker('inspect', '--format', '{{json .Config.Labels}}', orphan[0]));
    expect(labels).toMatchObject({ 'rabbitmq-perf-gate.owner-pid': String(k.p.pid), 'rabbitmq-perf-gate.owner-start': expect.stringMatching(/^\d+$/) });

    // L, the next run, is K's resume: it sweeps K's broker up before it starts its own, then keeps
    // K's two trials and runs the other eight (its first one done at [3/10]). (Host ports are
    // checked free, not reserved, across processes: should another session's broker take L's port
    // while it boots, L fails with "rejected the target's credentials", before it writes anything —
    // then L is started once more.)
    const startL = () => cli('live', ['run', '--resume', kDir]);
    let l = startL();
    const sweptBy = l;
    await l.waitFor(/\[3\/10\]/).catch(async (e: Error) => {
      await l.exited;
      if (!/rejected the target's credentials/.test(l.stderr())) throw e;
      l = startL();
      await l.waitFor(/\[3\/10\]/);
    });
    expect(containersOf(k.runId)).toEqual([]);
    expect(sweptBy.stderr()).toMatch(new RegExp(`^Removed \\d+ broker container\\(s\\) left by runs whose process is gone: [^\\n]*${orphan[0]} \\(run ${k.runId}, pid ${k.p.pid}, running\\)`, 'm'));
    const live = namesOf(l.runId);
    expect(live).toHaveLength(1);

    // M, on the local broker while L measures: L's container is left alone and reported, in the
    // log, in `cleanup` and in M's machine load.
    const cleanup = cli('cleanup', ['cleanup', '--json']);
    expect((await cleanup.exited).code).toBe(0);
    const swept = JSON.parse(cleanup.stdout());
    expect(swept.live.map((x: { name: string }) => x.name)).toContain(live[0]);
    expect(swept.removed.map((x: { name: string }) => x.name)).not.toContain(live[0]);
    const mDir = join(tmp, 'beside');
    const m = cli('beside', [
      'run',
      '--broker-url',
      AMQP_URL,
      '--management-url',
      MANAGEMENT_URL,
      '--scenarios',
      'smoke',
      '--repetitions',
      '2',
      '--duration',
      '2',
      '--warmup',
      '0.5',
      '--baseline-file',
      join(tmp, 'none.json'),
      '--out',
      mDir,
    ]);
    const mEnd = await m.exited;
    expect(mEnd.code, m.stderr()).toBe(0);
    expect(m.stderr()).toMatch(
      new RegExp(
        `of other runs still going are running on this machine and take CPU and memory from this run's measurements \\(left alone\\): [^\\n]*${live[0]} \\(run ${l.runId}, pid ${l.p.pid}, running\\)`,
      ),
    );
    expect(namesOf(l.runId)).toEqual(live);
    const mr = readReport(mDir);
    expect(mr.machine?.otherRuns?.some((x) => x.startsWith(`${live[0]} `))).toBe(true);
    // L's generator and broker use well over a tenth of the 2 cores while M measures.
    expect(mr.machine?.busy, JSON.stringify(mr.machine)).toBe(true);
    expect(mr.machine?.trials?.top.map((u) => u.name)).toContain(live[0]);
    expect(readFileSync(join(mDir, 'summary.md'), 'utf8')).toMatch(/> The machine was busy: other containers and processes than this run's used .*container .*\d/);
    expect(m.stderr()).toMatch(/warning: The machine was busy: /);

    // The killed run went on from what it saved: K's two trials kept as they were measured, the
    // other eight run by L, every one valid.
    const lEnd = await l.exited;
    expect(lEnd.code, l.stderr()).toBe(0);
    const done = readReport(kDir);
    expect(done.trials.map((t) => t.trial)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(done.trials.slice(0, 2)).toEqual(saved.trials);
    expect(
      done.trials.every((t) => t.valid),
      JSON.stringify(done.trials.map((t) => t.invalidReason)),
    ).toBe(true);
    expect(stopOf(done)).toEqual([]);
    expect(done.resumed).toEqual([{ at: expect.any(String), kept: 2 }]);
    expect(containersOf(l.runId)).toEqual([]);
  }, 300_000);
});
