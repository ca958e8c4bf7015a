// mode: merge — combines the shards' reports (shard: i/n) into one report: scenarios, targets,
// trials and errors are united, then every comparison is re-run over the merged trials with
// src/compare/compare.ts, so Holm covers all gating metrics of the whole matrix and there is
// one verdict. The rules mirror src/pipeline.ts: a same-run reference decides when the shards
// had one; the stored baseline otherwise (may warn, never fail, on a different runner).
import type { Baseline, Comparison, RunReport } from '../schema/types';
import { GateError } from '../config/errors';
import { storedMismatch, trialValues } from '../compare/baseline-file';
import { compareSameRun, compareSamples, countChanges, overallVerdict } from '../compare/compare';

export interface ShardReport {
  file: string;
  report: RunReport;
}

export function mergeReports(parts: ShardReport[], stored: Baseline | undefined, note: (m: string) => void = () => {}): RunReport {
  if (!parts.length) throw new GateError('no shard reports to merge', { field: 'reports' });
  const first = parts[0].report;
  const owner = new Map<string, string>();
  for (const { file, report } of parts) {
    if (report.candidate !== first.candidate) throw new GateError(`${file} judges target "${report.candidate}", ${parts[0].file} judges "${first.candidate}"`, { file, field: 'reports' }, 'merge only shards of the same gate');
    if (report.preset !== first.preset) note(`${file} ran scenarios "${report.preset}", ${parts[0].file} ran "${first.preset}"`);
    if (report.repetitions !== first.repetitions) note(`${file} ran ${report.repetitions} repetitions, ${parts[0].file} ran ${first.repetitions}`);
    for (const s of report.scenarios) {
      const prev = owner.get(s.id);
      if (prev) throw new GateError(`scenario "${s.id}" is in both ${prev} and ${file}`, { file, field: 'reports' }, 'every scenario must run in exactly one shard: give the shards 1/n … n/n once each, and merge one run\'s reports only');
      owner.set(s.id, file);
    }
  }
  const reports = parts.map((p) => p.report);
  const scenarios = reports.flatMap((r) => r.scenarios);
  const trials = reports.flatMap((r) => r.trials);
  const targets = [...new Map(reports.flatMap((r) => r.targets).reverse().map((t) => [t.id, t])).values()].reverse();
  const errors = parts.flatMap(({ report }, i) => report.errors.map((e) => ({ ...e, scope: `shard ${i + 1}: ${e.scope}` })));
  const candInfo = targets.find((t) => t.id === first.candidate);
  const candidate = { label: candInfo?.label ?? first.candidate, values: trialValues({ trials }, first.candidate) };
  const referenceId = reports.flatMap((r) => r.comparisons).map((c) => c.against).find((a) => a !== 'stored');
  const reference = referenceId ? targets.find((t) => t.id === referenceId) : undefined;

  let comparisons: Comparison[] = [];
  let decidedBy = 'nothing: no baseline to compare with';
  if (reference) {
    // A scenario runs in one shard, so its rounds' pairs were back to back on one runner.
    comparisons = compareSameRun(scenarios, trials, { id: first.candidate, label: candidate.label }, reference);
    decidedBy = `same-run A/B against ${reference.label}, merged from ${parts.length} shards`;
  }
  if (stored && candInfo) {
    const mismatch = reports.map((r) => storedMismatch(stored, r.fingerprint, r.targets.find((t) => t.id === r.candidate) ?? candInfo, scenarios)).find(Boolean);
    const vsStored = compareSamples({
      scenarios, candidate, against: 'stored', mayNotFail: mismatch,
      reference: { label: 'stored baseline', values: Object.fromEntries(Object.entries(stored.scenarios).map(([k, v]) => [k, v.metrics])) },
    });
    if (reference) {
      for (const c of vsStored) c.gating = false;
      comparisons.push(...vsStored);
    } else {
      comparisons = vsStored;
      decidedBy = `${mismatch ? `stored baseline (may warn, never fail: ${mismatch})` : 'stored baseline, recorded on a matching runner'}, merged from ${parts.length} shards`;
    }
  }
  const fps = new Set(reports.map((r) => `${r.fingerprint.cpuModel}/${r.fingerprint.cores}`));
  if (fps.size > 1) note(`the shards ran on different runners (${[...fps].join(', ')}); the merged report shows the first one's fingerprint`);
  const verdict = overallVerdict(comparisons);
  return {
    ...first,
    createdAt: reports.map((r) => r.createdAt).sort()[0],
    mode: 'check',
    scenarios,
    targets,
    trials,
    comparisons,
    decidedBy,
    verdict: errors.some((e) => e.scope.endsWith(': run')) && verdict === 'pass' ? 'inconclusive' : verdict,
    ...countChanges(comparisons),
    errors,
    durationSeconds: Math.max(...reports.map((r) => r.durationSeconds)),
  };
}
