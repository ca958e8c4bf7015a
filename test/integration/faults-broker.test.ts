// Fault table (docs/reliability.md): the broker goes wrong in the middle of a trial — killed,
// memory-alarmed (publishers blocked), or closing every connection. The bundled action runs on a
// broker container of its own (offline image, host networking, a password to mask) and the fault
// is injected into that container mid-trial. Each run ends with the partial results reported, one
// `::error` line naming the invalid trials and why, verdict inconclusive, the stored baseline
// byte-for-byte untouched, the password nowhere, and no container left.
import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BASELINE, baselineText, containersOfRun, docker, expectNoSecret, runWithFault, type FaultRun } from '../support/faults';

const inputs = { scenarios: 'smoke', repetitions: '4', duration: '2', warmup: '0.5', seed: '1' };
const runs: FaultRun[] = [];
afterAll(() => {
  for (const r of runs) for (const c of containersOfRun(r.runId)) docker('rm', '-f', '-v', c);
});

/** What every mid-trial fault must end with; returns the report. */
function commonEnd(r: FaultRun, invalidFrom: number, verdicts = ['inconclusive']): any {
  runs.push(r);
  expect(r.injectError, r.stdout).toBeUndefined();
  expect(r.code, r.stdout + r.stderr).toBe(0); // inconclusive is not a failed step; the annotation says why
  const errors = r.stdout.split('\n').filter((l) => l.startsWith('::error'));
  expect(errors, r.stdout).toHaveLength(1);
  expect(errors[0]).toMatch(
    /^::error title=rabbitmq-perf-gate::\d of 4 trials invalid \(first: one_fast on candidate, trial \d: .+\)\. Verdict (\w+); the results are in the report and the job summary\.$/,
  );
  expect(r.stdout + r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+\)?\n/);
  expect(verdicts).toContain(r.outputs.verdict);
  const report = JSON.parse(readFileSync(r.outputs.report, 'utf8'));
  expect(report.trials).toHaveLength(4); // partial results: every trial is reported, valid or not
  expect(report.trials.slice(0, invalidFrom).every((t: any) => t.valid)).toBe(true);
  expect(r.summary).toMatch(/### Excluded trials and errors \(\d of 4 trials invalid\)/);
  expect(readFileSync(join(r.workspace, BASELINE), 'utf8')).toBe(baselineText());
  expect(containersOfRun(r.runId)).toEqual([]);
  const dir = join(r.workspace, 'rabbitmq-perf-gate-report');
  expectNoSecret(r, [r.outputs.report, join(dir, 'summary.md'), join(dir, 'report.html')]);
  return report;
}

describe('broker faults mid-trial (a container of its own)', () => {
  it('killed (docker kill): the trial under way and every later one invalid, nothing hangs', async () => {
    const r = await runWithFault({ inputs, afterTrials: 1, delayMs: 1500, inject: (c) => docker('kill', c) });
    const report = commonEnd(r, 1);
    const [, during, ...after] = report.trials;
    expect(during.valid).toBe(false);
    expect(during.invalidReason).toMatch(/connection closed by the broker|ECONNRESET|socket|closed/i);
    for (const t of after) expect(t.invalidReason).toMatch(/management API at http:\/\/127\.0\.0\.1:\d+ is unreachable \(ECONNREFUSED\)/);
  }, 150_000);

  it('memory alarm (set_vm_memory_high_watermark 0.00001): publishers blocked, those trials invalid', async () => {
    const r = await runWithFault({
      inputs,
      afterTrials: 1,
      delayMs: 500,
      inject: (c) => docker('exec', c, 'rabbitmqctl', 'set_vm_memory_high_watermark', '0.00001'),
    });
    const report = commonEnd(r, 1);
    const blocked = report.trials.filter((t: any) => /connection blocked by the broker \(low on memory\)/.test(t.invalidReason ?? ''));
    expect(blocked.length, JSON.stringify(report.trials.map((t: any) => t.invalidReason))).toBeGreaterThanOrEqual(2);
    expect(report.trials.at(-1).valid).toBe(false);
  }, 150_000);

  it('connection closed by the broker (close_all_connections --global): that trial invalid, the run carries on', async () => {
    // rabbitmqctl itself takes seconds to start: fire at once after trial 1, into trial 2's window.
    const r = await runWithFault({
      inputs: { ...inputs, duration: '4' },
      afterTrials: 1,
      delayMs: 0,
      inject: (c) => docker('exec', c, 'rabbitmqctl', 'close_all_connections', '--global', 'perf-gate fault test'),
    });
    // Three valid trials may be enough to judge: the verdict comes from them (a stored baseline from
    // another machine may warn, never fail).
    const report = commonEnd(r, 1, ['pass', 'warn', 'inconclusive']);
    const hit = report.trials.findIndex((t: any) => !t.valid);
    expect(report.trials[hit].invalidReason).toMatch(/connection closed by the broker: .*CONNECTION_FORCED - perf-gate fault test/);
    expect(
      report.trials.slice(hit + 1).every((t: any) => t.valid),
      JSON.stringify(report.trials.map((t: any) => t.invalidReason)),
    ).toBe(true);
    expect(hit).toBeLessThan(3);
  }, 150_000);
});
