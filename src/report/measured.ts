// What was measured, without any comparison: per target, scenario and gating metric, the median,
// range and count of the valid trials. Every report format shows it when there is nothing to
// compare with (a first run, a refresh, a run without a baseline), so a run always shows numbers.
import type { RunReport } from '../schema/types';
import { metricDef } from '../metrics/definitions';
import { median } from '../compare/stats';
import { isRunScope } from '../compare/judge';

export interface MeasuredRow {
  target: string;
  scenario: string;
  metric: string;
  label: string;
  unit: string;
  median: number | null;
  min: number | null;
  max: number | null;
  /** Valid trials that reported the metric, of all trials of the scenario on the target. */
  n: number;
  trials: number;
}

/** One row per target × scenario × gating metric, in the report's scenario order. */
export function measuredRows(r: RunReport): MeasuredRow[] {
  const rows: MeasuredRow[] = [];
  for (const t of r.targets) {
    for (const s of r.scenarios) {
      const trials = r.trials.filter((x) => x.target === t.id && x.scenario === s.id);
      if (!trials.length) continue;
      for (const metric of s.gate) {
        const xs = trials.filter((x) => x.valid && Number.isFinite(x.metrics[metric])).map((x) => x.metrics[metric]);
        const def = metricDef(metric);
        rows.push({
          target: t.label,
          scenario: s.id,
          metric,
          label: def.label,
          unit: def.unit,
          median: xs.length ? median(xs) : null,
          min: xs.length ? Math.min(...xs) : null,
          max: xs.length ? Math.max(...xs) : null,
          n: xs.length,
          trials: trials.length,
        });
      }
    }
  }
  return rows;
}

/** True when the report has measurements but no comparison: the first run, a refresh, a plain
 *  run (not a run stopped early: that one is inconclusive, and says why). */
export function nothingToCompare(r: RunReport): boolean {
  return r.comparisons.length === 0 && r.trials.some((t) => t.valid) && !r.errors.some((e) => isRunScope(e.scope));
}

/** What happens next, for a report with nothing to compare with (Markdown; strip ` for plain text). */
export function baselineHint(r: RunReport): string {
  if (r.mode === 'refresh') return 'These trials are the stored baseline now: the next check compares with them.';
  return (
    'To compare next time, store these trials as the baseline (the action with `mode: refresh` on the default branch, ' +
    'or `rabbitmq-perf-gate refresh`), or give a reference broker (`baseline-image` / `baseline-target`) for a same-run A/B, the stronger comparison.'
  );
}
