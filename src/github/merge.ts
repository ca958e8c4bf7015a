// mode: merge — combines the shards' reports (shard: i/n) into one report: scenarios, targets,
// trials and errors are united, then every comparison is re-run over the merged trials with
// src/compare/compare.ts, so Holm covers all gating metrics of the whole matrix and there is
// one verdict, by the same rules as a single run (src/compare/judge.ts).
import type { Baseline, RunReport } from '../schema/types';
import { GateError } from '../schema/errors';
import { storedMismatch, trialValues } from '../compare/baseline-file';
import { isRunScope, judge } from '../compare/judge';

export interface ShardReport {
  file: string;
  report: RunReport;
}

export function mergeReports(parts: ShardReport[], stored: Baseline | undefined, note: (m: string) => void = () => {}): RunReport {
  if (!parts.length) throw new GateError('no shard reports to merge', { field: 'reports' });
  const first = parts[0].report;
  const owner = new Map<string, string>();
  for (const { file, report } of parts) {
    if (report.candidate !== first.candidate)
      throw new GateError(`${file} judges target "${report.candidate}", ${parts[0].file} judges "${first.candidate}"`, { file, field: 'reports' }, 'merge only shards of the same gate');
    if (report.preset !== first.preset) note(`${file} ran scenarios "${report.preset}", ${parts[0].file} ran "${first.preset}"`);
    if (report.repetitions !== first.repetitions) note(`${file} ran ${report.repetitions} repetitions, ${parts[0].file} ran ${first.repetitions}`);
    for (const s of report.scenarios) {
      const prev = owner.get(s.id);
      if (prev)
        throw new GateError(
          `scenario "${s.id}" is in both ${prev} and ${file}`,
          { file, field: 'reports' },
          "every scenario must run in exactly one shard: give the shards 1/n … n/n once each, and merge one run's reports only",
        );
      owner.set(s.id, file);
    }
  }
  const reports = parts.map((p) => p.report);
  const scenarios = reports.flatMap((r) => r.scenarios);
  const trials = reports.flatMap((r) => r.trials);
  const targets = [
    ...new Map(
      reports
        .flatMap((r) => r.targets)
        .reverse()
        .map((t) => [t.id, t]),
    ).values(),
  ].reverse();
  const errors = parts.flatMap(({ report }, i) => report.errors.map((e) => ({ ...e, scope: `shard ${i + 1}: ${e.scope}` })));
  const candInfo = targets.find((t) => t.id === first.candidate);
  const candidate = { label: candInfo?.label ?? first.candidate, values: trialValues({ trials }, first.candidate) };
  const referenceId = reports
    .flatMap((r) => r.comparisons)
    .map((c) => c.against)
    .find((a) => a !== 'stored');
  const reference = referenceId ? targets.find((t) => t.id === referenceId) : undefined;

  // A scenario runs in one shard, so its rounds' pairs were back to back on one runner. Sequential
  // shards share one design (looks, level, and the whole selection's family): judged by it again.
  const seq = reports.map((r) => r.sequential).filter((x) => x !== undefined);
  const judgement = judge({
    scenarios,
    trials,
    candidate: { id: first.candidate, ...candidate },
    sameRun: reference && { ...reference, ...(seq[0] ? { level: { alpha: seq[0].level, bonferroni: seq[0].family } } : {}) },
    independent:
      stored && candInfo
        ? {
            sample: { label: 'stored baseline', values: Object.fromEntries(Object.entries(stored.scenarios).map(([k, v]) => [k, v.metrics])) },
            against: 'stored',
            what: 'stored baseline',
            matching: ', recorded on a matching runner',
            mayNotFail: reports.map((r) => storedMismatch(stored, r.fingerprint, r.targets.find((t) => t.id === r.candidate) ?? candInfo, scenarios)).find(Boolean),
          }
        : undefined,
    judged: true,
    incomplete: errors.some((e) => isRunScope(e.scope)),
    suffix: `, merged from ${parts.length} shards`,
  });
  const fps = new Set(reports.map((r) => `${r.fingerprint.cpuModel}/${r.fingerprint.cores}`));
  if (fps.size > 1) note(`the shards ran on different runners (${[...fps].join(', ')}); the merged report shows the first one's fingerprint`);
  return {
    ...first,
    createdAt: reports.map((r) => r.createdAt).sort()[0],
    mode: 'check',
    scenarios,
    targets,
    trials,
    ...judgement,
    errors,
    durationSeconds: Math.max(...reports.map((r) => r.durationSeconds)),
    // Each shard profiled its own failing scenarios; evidence is judged again above.
    evidence: judgement.evidence,
    flames: reports.flatMap((r) => r.flames ?? []),
    flameNote: [...new Set(reports.map((r) => r.flameNote).filter(Boolean))].join('; ') || undefined,
    ...(seq[0]
      ? {
          sequential: {
            ...seq[0],
            stopped: Object.assign({}, ...seq.map((x) => x.stopped)),
            savedSeconds: seq.reduce((t, x) => t + x.savedSeconds, 0),
            // Each shard stops on its own fail; the merged report names the earliest.
            failedFast: seq
              .map((x) => x.failedFast)
              .filter((f) => f !== undefined)
              .sort((a, b) => a.pairs - b.pairs)[0],
          },
        }
      : {}),
  };
}
