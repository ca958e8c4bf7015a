// Stored results read in one place (src/compare/stored.ts): the action's reader of a report it did
// not write (comment and merge modes) and the CLI's (`report`, `compare`, `run --resume`) give the
// same error for the same bad file; the JSON Schemas in schema/ are the ones checked; reports written
// before every scenario carried its `kind` (messaging scenarios left it out) still load, with kind
// 'messaging', every other kind kept.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readBaseline, readReport, readStored, writeBaseline, writeReport } from '../../src/compare/stored';
import type { RunReport } from '../../src/schema/types';
import { perfTestDefaults } from '../../src/config/perftest-args';
import { TOOL } from '../../src/metrics/fingerprint';
import { SCHEMA_VERSION } from '../../src/schema/types';
import { gateErrorOf } from '../support/gate-error';

const dir = mkdtempSync(join(tmpdir(), 'perf-gate-stored-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const scenario = (id: string) => ({
  id,
  description: id,
  origin: { source: 'test', command: '' },
  workload: perfTestDefaults(id),
  warmupSeconds: 1,
  durationSeconds: 3,
  gate: ['published_rate'],
  tolerances: {},
  file: 'x.yml',
  lines: {},
});

/** A report as an older release wrote it: no `kind` on the messaging scenario. */
function olderReport(extra: Record<string, unknown> = {}): string {
  const file = join(dir, `report-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      ...extra,
      schemaVersion: SCHEMA_VERSION,
      tool: { name: TOOL, version: '0.0.9' },
      createdAt: '2025-01-01T00:00:00Z',
      mode: 'check',
      fingerprint: { tool: TOOL, toolVersion: '0.0.9', node: 'v24', os: 'Linux', kernel: '6', cpuModel: 'cpu', cores: 2, memoryBytes: 2 ** 33 },
      preset: 'smoke',
      repetitions: 3,
      seed: 1,
      scenarios: [scenario('steady'), { ...scenario('churny'), kind: 'churn', churn: { object: 'queue', durable: false, concurrency: 1 } }],
      targets: [],
      candidate: 'candidate',
      trials: [],
      comparisons: [],
      decidedBy: 'nothing',
      verdict: 'inconclusive',
      regressions: 0,
      improvements: 0,
      errors: [],
      durationSeconds: 1,
    }),
  );
  return file;
}

describe('stored reports without a scenario kind', () => {
  it('load with kind messaging in the action and the CLI', () => {
    for (const report of [readReport(olderReport()), readStored(olderReport()).report!]) {
      expect(report.scenarios.map((s) => s.kind)).toEqual(['messaging', 'churn']);
      const churn = report.scenarios[1];
      expect(churn.kind === 'churn' && churn.churn.object).toBe('queue');
    }
  });
});

describe("a sequential A/B's summary in a stored report (a shard's artifact: untrusted)", () => {
  const sequential = { looks: [10, 12], level: 0.02, family: 5, futility: 0.1, stopped: { steady: 10 }, fixedPairs: 24, savedSeconds: 100 };
  it('loads with and without the fail-fast field', () => {
    expect(readReport(olderReport({ sequential })).sequential?.failedFast).toBeUndefined();
    expect(readReport(olderReport({ sequential: { ...sequential, failedFast: { scenario: 'steady', pairs: 10 } } })).sequential?.failedFast).toEqual({ scenario: 'steady', pairs: 10 });
  });
  it('refuses a malformed fail-fast field', () => {
    expect(() => readReport(olderReport({ sequential: { ...sequential, failedFast: { scenario: '', pairs: 'ten' } } }))).toThrow(/failedFast/);
  });
});

describe('one reader: the same error for the same bad file', () => {
  const write = (text: string) => {
    const file = join(dir, `bad-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, text);
    return file;
  };
  const report = () => JSON.parse(readFileSync(olderReport(), 'utf8'));
  const cases: Array<[string, string, RegExp]> = [
    ['not JSON', '{\n "trials": [],\n oops\n}', /^the (report )?file is not valid JSON/],
    ['a newer schema', JSON.stringify({ ...report(), schemaVersion: 99 }), /^the report file has schema version 99, newer than this version of rabbitmq-perf-gate understands \(1\)$/],
    ['an older one no step migrates', JSON.stringify({ ...report(), schemaVersion: 0 }), /^the report file has schema version 0, which can no longer be migrated$/],
    [
      'a field of the wrong type',
      JSON.stringify({ ...report(), verdict: 'maybe' }),
      /^the report file is malformed: \/verdict must be equal to one of the allowed values \["pass","warn","fail","inconclusive"\]$/,
    ],
    ['a required field missing', JSON.stringify({ ...report(), comparisons: undefined }), /^the report file is malformed: \(top level\) must have required property 'comparisons'$/],
  ];
  it.each(cases)('%s: readReport (the action) and readStored (the CLI) say the same', (_what, text, message) => {
    const file = write(text);
    const action = gateErrorOf(() => readReport(file));
    const cli = gateErrorOf(() => readStored(file));
    expect(action.message).toMatch(message);
    // A JSON error comes before the kind is known: the CLI names "the file", the action "the report file".
    expect(cli.message.replace('the file', 'the report file')).toBe(action.message.replace('the file', 'the report file'));
    expect(cli.where.file).toBe(file);
    expect(action.fix).toBeTruthy();
  });

  it('a JSON error names its line', () => {
    expect(gateErrorOf(() => readStored(write('{\n "a": 1,\n oops\n}'))).describe()).toMatch(/\.json:3: the file is not valid JSON/);
  });

  it('a baseline read as either kind is checked against its own schema, with the same message as readBaseline', () => {
    const file = write(JSON.stringify({ schemaVersion: 1, fingerprint: {}, scenarios: { a: { metrics: { m: [1, 'x'] } } } }));
    const read = readBaseline(file);
    expect(read.status).toBe('unusable');
    const message = read.status === 'unusable' ? read.error.message : '';
    expect(message).toBe('the baseline file is malformed: /scenarios/a/metrics/m/1 must be number');
    expect(gateErrorOf(() => readStored(file)).message).toBe(message);
    expect(gateErrorOf(() => readStored(write('{"hello": "world"}'))).message).toMatch(/^the file is neither a report\.json .* nor a baseline\.json/);
  });

  it('what writeReport and writeBaseline write reads back as it was', () => {
    const r: RunReport = readReport(olderReport());
    const file = join(dir, 'written', 'report.json');
    writeReport(file, r);
    expect(readStored(file)).toEqual({ kind: 'report', report: r });
    const b = { schemaVersion: 1, createdAt: 'x', fingerprint: r.fingerprint, target: { id: 'c' }, repetitions: 1, scenarios: { a: { metrics: { m: [1, 2] } } }, history: [] };
    writeBaseline(join(dir, 'written', 'baseline.json'), b as never);
    expect(readStored(join(dir, 'written', 'baseline.json'))).toEqual({ kind: 'baseline', baseline: b });
  });

  it("the schema files pin this release's schema version and tool name", () => {
    const report = JSON.parse(readFileSync('schema/report.schema.json', 'utf8'));
    const baseline = JSON.parse(readFileSync('schema/baseline.schema.json', 'utf8'));
    expect(report.properties.schemaVersion.const).toBe(SCHEMA_VERSION);
    expect(baseline.properties.schemaVersion.const).toBe(SCHEMA_VERSION);
    expect(report.properties.tool.properties.name.const).toBe(TOOL);
  });
});
