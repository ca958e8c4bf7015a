// Reports written before every scenario carried its `kind` (messaging scenarios left it out) still
// load: both readers of a stored report.json — the action's (comment and merge modes) and the
// CLI's (`report`, `compare`) — give those scenarios kind 'messaging' and keep every other kind.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readResult } from '../../src/cli/shared';
import { readReportFile } from '../../src/github/report-input';
import { perfTestDefaults } from '../../src/config/perftest-args';
import { TOOL } from '../../src/metrics/fingerprint';
import { SCHEMA_VERSION } from '../../src/schema/types';

const dir = mkdtempSync(join(tmpdir(), 'perf-gate-stored-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const scenario = (id: string) => ({
  id, description: id, origin: { source: 'test', command: '' }, workload: perfTestDefaults(id),
  warmupSeconds: 1, durationSeconds: 3, gate: ['published_rate'], tolerances: {}, file: 'x.yml', lines: {},
});

/** A report as an older release wrote it: no `kind` on the messaging scenario. */
function olderReport(extra: Record<string, unknown> = {}): string {
  const file = join(dir, `report-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify({
    ...extra,
    schemaVersion: SCHEMA_VERSION, tool: { name: TOOL, version: '0.0.9' }, createdAt: '2025-01-01T00:00:00Z', mode: 'check',
    fingerprint: { tool: TOOL, toolVersion: '0.0.9', node: 'v24', os: 'Linux', kernel: '6', cpuModel: 'cpu', cores: 2, memoryBytes: 2 ** 33 },
    preset: 'smoke', repetitions: 3, seed: 1,
    scenarios: [scenario('steady'), { ...scenario('churny'), kind: 'churn', churn: { object: 'queue', durable: false, concurrency: 1 } }],
    targets: [], candidate: 'candidate', trials: [], comparisons: [], decidedBy: 'nothing', verdict: 'inconclusive',
    regressions: 0, improvements: 0, errors: [], durationSeconds: 1,
  }));
  return file;
}

describe('stored reports without a scenario kind', () => {
  it('load with kind messaging in the action and the CLI', () => {
    for (const report of [readReportFile(olderReport()), readResult(olderReport()).report!]) {
      expect(report.scenarios.map((s) => s.kind)).toEqual(['messaging', 'churn']);
      const churn = report.scenarios[1];
      expect(churn.kind === 'churn' && churn.churn.object).toBe('queue');
    }
  });
});

describe('a sequential A/B\'s summary in a stored report (a shard\'s artifact: untrusted)', () => {
  const sequential = { looks: [10, 12], level: 0.02, family: 5, futility: 0.1, stopped: { steady: 10 }, fixedPairs: 24, savedSeconds: 100 };
  it('loads with and without the fail-fast field', () => {
    expect(readReportFile(olderReport({ sequential })).sequential?.failedFast).toBeUndefined();
    expect(readReportFile(olderReport({ sequential: { ...sequential, failedFast: { scenario: 'steady', pairs: 10 } } })).sequential?.failedFast)
      .toEqual({ scenario: 'steady', pairs: 10 });
  });
  it('refuses a malformed fail-fast field', () => {
    expect(() => readReportFile(olderReport({ sequential: { ...sequential, failedFast: { scenario: '', pairs: 'ten' } } }))).toThrow(/failedFast/);
  });
});
