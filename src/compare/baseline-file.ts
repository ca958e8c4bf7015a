// A stored baseline's content: built from a run's candidate trials (keeping a bounded history of
// past refreshes for trends), the trial values of a run by scenario and metric, and whether stored
// trials are like for like with this run. Reading, checking and writing the file: ./stored.ts.
import type { Baseline, BaselineHistoryEntry, Fingerprint, RunReport, ScenarioSpec, TargetInfo } from '../schema/types';
import { fingerprintMismatch } from '../metrics/fingerprint';
import { SCHEMA_VERSION } from '../schema/types';
import { median } from './stats';

/** Refreshes remembered for trend charts; older ones are dropped. */
export const HISTORY_LIMIT = 30;

/** Why a stored baseline is not like for like with this run (another runner, RabbitMQ version,
 *  or trial length), or undefined: a stored comparison may then warn but never fail. */
export function storedMismatch(stored: Baseline, now: Fingerprint, nowTarget: TargetInfo, scenarios: readonly ScenarioSpec[]): string | undefined {
  return [fingerprintMismatch(stored.fingerprint, stored.target, now, nowTarget), windowMismatch(stored, scenarios)].filter(Boolean).join('; ') || undefined;
}

/** Why the stored trials are not like for like with this run's scenarios because their warm-up or
 *  window differs (e.g. a preset's trial length changed), or undefined. Files that did not record
 *  the window are taken as they are. */
export function windowMismatch(stored: Baseline, scenarios: readonly ScenarioSpec[]): string | undefined {
  const diffs = scenarios.flatMap((s) => {
    const w = stored.scenarios[s.id]?.window;
    return w && (w.warmupSeconds !== s.warmupSeconds || w.durationSeconds !== s.durationSeconds)
      ? [`${s.id} (${w.warmupSeconds}+${w.durationSeconds} s → ${s.warmupSeconds}+${s.durationSeconds} s)`]
      : [];
  });
  return diffs.length ? `the baseline's trials used another warm-up or window: ${diffs.join(', ')}` : undefined;
}

/** scenario → metric → values of the valid trials of one target in a run. */
export function trialValues(report: Pick<RunReport, 'trials'>, target: string): Record<string, Record<string, number[]>> {
  const out: Record<string, Record<string, number[]>> = {};
  for (const t of report.trials) {
    if (t.target !== target || !t.valid) continue;
    const s = (out[t.scenario] ??= {});
    for (const [m, v] of Object.entries(t.metrics)) (s[m] ??= []).push(v);
  }
  return out;
}

/** A new baseline from a run's candidate trials, carrying the previous file's history forward. */
export function baselineFromRun(report: RunReport, previous: Baseline | undefined, commit?: string): Baseline {
  const values = trialValues(report, report.candidate);
  const scenarios: Baseline['scenarios'] = {};
  const spec = new Map(report.scenarios.map((s) => [s.id, s]));
  for (const [id, metrics] of Object.entries(values)) {
    const s = spec.get(id);
    scenarios[id] = s ? { metrics, window: { warmupSeconds: s.warmupSeconds, durationSeconds: s.durationSeconds } } : { metrics };
  }
  // Scenarios not run this time keep their previous values rather than vanish.
  for (const [id, s] of Object.entries(previous?.scenarios ?? {})) scenarios[id] ??= s;
  const entry: BaselineHistoryEntry = { createdAt: report.createdAt, commit, medians: {} };
  for (const [id, metrics] of Object.entries(values)) {
    entry.medians[id] = Object.fromEntries(Object.entries(metrics).map(([m, vs]) => [m, median(vs)]));
  }
  const target = report.targets.find((t) => t.id === report.candidate)!;
  return {
    schemaVersion: SCHEMA_VERSION,
    createdAt: report.createdAt,
    commit,
    fingerprint: report.fingerprint,
    target,
    repetitions: report.repetitions,
    scenarios,
    history: [...(previous?.history ?? []), entry].slice(-HISTORY_LIMIT),
    ...(report.anchor ? { anchor: report.anchor } : {}),
  };
}
