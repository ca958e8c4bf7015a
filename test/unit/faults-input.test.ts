// Fault table (docs/reliability.md), bad input that the existing unit tests do not already cover:
// out-of-range workload values, unknown ids in a scenario list, an older-schema baseline, and a
// stored baseline whose scenarios no longer match the run's. Every case is one GateError naming
// the field (and file:line when there is a file) with a fix, or an explicit inconclusive verdict.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseScenario } from '../../src/config/scenario-file';
import { resolveScenarios } from '../../src/config/catalogue';
import { GateError } from '../../src/schema/errors';
import { readBaseline } from '../../src/compare/stored';
import { compareSamples, overallVerdict } from '../../src/compare/compare';
import { runPipeline } from '../../src/pipeline/run';
import { spec } from '../support/broker';
import { gateErrorOf } from '../support/gate-error';

const HEAD = 'id: t\ndescription: d\norigin: { source: s, command: c }\n';

describe('out-of-range scenario values name file, line and field', () => {
  it.each([
    ['negative rate (perf-test -r; -1 is PerfTest\'s "unlimited")', `${HEAD}perf-test: -x 1 -y 1 -r -5\n`, 4, 'perf-test', /-r needs a number ≥ -1, got "-5"/],
    ['negative rate (workload.rate)', `${HEAD}workload:\n  rate: -5\n`, 5, 'workload.rate', /must be > 0/],
    ['size below 12 under workload:', `${HEAD}workload:\n  size: 5\n`, 5, 'workload.size', /must be >= 12/],
    ['negative producers', `${HEAD}perf-test: -x -1\n`, 4, 'perf-test', /-x needs a number ≥ 0/],
    ['negative duration', `${HEAD}duration: -3\n`, 4, 'duration', /must be/],
  ])('%s', (_name, text, line, field, message) => {
    const e = gateErrorOf(() => parseScenario(text, 'bad.yml'));
    expect(e.where).toMatchObject({ file: 'bad.yml', line, field });
    expect(e.message).toMatch(message);
  });

  it('size below 12 on a perf-test line runs as 12 bytes and says so (PerfTest never sends fewer)', () => {
    const [s] = parseScenario(`${HEAD}perf-test: -x 1 -y 1 -s 5\n`, 'f.yml');
    expect(s.workload.size).toBe(12);
    expect(s.notes?.join(' ')).toMatch(/size 5 runs as 12 bytes/);
  });
});

describe('unknown scenarios in a list, and repetitions 0', () => {
  it('an unknown id among known ones names only the unknown one, with the valid choices', () => {
    const e = gateErrorOf(() => resolveScenarios('one_fast,no_such_scenario'));
    expect(e.message).toBe('unknown preset or scenario "no_such_scenario"');
    expect(e.where.field).toBe('scenarios');
    expect(e.fix).toMatch(/use a preset \(smoke, pr.*a scenario id \(.*one_fast/);
  });

  it('an unknown axis variant of a known file', () => {
    const e = gateErrorOf(() => resolveScenarios('throughput_by_size[size=7]'));
    expect(e.message).toMatch(/scenario file throughput_by_size has no "throughput_by_size\[size=7\]"/);
  });

  it('repetitions 0 is refused before any broker is touched', async () => {
    const unreachable = { id: 'candidate', label: 'b', kind: 'url' as const, amqpUrl: 'amqp://guest:guest@127.0.0.1:1', managementUrl: 'http://127.0.0.1:1' };
    const err = await runPipeline(
      { scenarios: 'smoke', candidate: unreachable, repetitions: 0, mode: 'check' },
      {
        info: () => undefined,
        warn: () => undefined,
        group: (_n, fn) => fn(),
        trialDone: () => undefined,
      },
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(GateError);
    expect((err as GateError).message).toBe('repetitions must be at least 1, got 0');
  });
});

describe('stored baselines from another schema or another scenario set', () => {
  it('an older schema version that no migration covers is unusable, with a fix', () => {
    const f = join(mkdtempSync(join(tmpdir(), 'perf-gate-faults-')), 'baseline.json');
    writeFileSync(f, JSON.stringify({ schemaVersion: 0, scenarios: {}, fingerprint: {} }));
    const r = readBaseline(f);
    expect(r.status).toBe('unusable');
    if (r.status !== 'unusable') return;
    expect(r.error.message).toMatch(/schema version 0, which can no longer be migrated/);
    expect(r.error.fix).toMatch(/mode: refresh/);
    expect(r.error.where.file).toBe(f);
  });

  it('a new scenario without baseline values is inconclusive (never a silent pass); a baseline scenario the run no longer has is ignored', () => {
    const kept = { ...spec('kept', {}), gate: ['consumed_rate'] };
    const added = { ...spec('added', {}), gate: ['consumed_rate'] };
    const values = [100, 101, 102, 99, 100, 101, 100];
    const cs = compareSamples({
      scenarios: [kept, added],
      candidate: { label: 'now', values: { kept: { consumed_rate: values }, added: { consumed_rate: values } } },
      reference: { label: 'stored baseline', values: { kept: { consumed_rate: values }, removed: { consumed_rate: values } } },
      against: 'stored',
    });
    expect(cs.map((c) => c.scenario)).toEqual(['kept', 'added']);
    expect(cs[0].verdict).toBe('pass');
    expect(cs[1]).toMatchObject({ verdict: 'inconclusive', nBaseline: 0, reason: 'no stored baseline values for this metric' });
    expect(overallVerdict(cs)).toBe('inconclusive');
  });
});
