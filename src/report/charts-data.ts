// The numbers behind the HTML report's charts, computed from a RunReport in Node so the page only
// draws: per scenario the per-second throughput of each target (median and min–max band over
// trials), HdrHistogram percentile curves (trials merged exactly per target), A/B delta bars with
// CIs from report.comparisons, and one dot per trial for each gating metric.
import type { Change, Comparison, NightlySeries, RunReport, ScenarioSpec, TrialResult, Verdict } from '../schema/types';
import { DEFAULT_GATE, METRICS, metricDef } from '../metrics/definitions';
import { mergeEncoded } from '../metrics/histogram';
import { median } from '../compare/stats';
import { CI, ciLabel } from './format';

export interface TargetRef {
  id: string;
  label: string;
  color: string;
}
export interface LineSeries {
  label: string;
  target: string;
  values: (number | null)[];
  dash?: boolean;
  band?: 'min' | 'max';
}
export interface RefLine {
  label: string;
  value: number;
}
export interface XYChart {
  type: 'throughput' | 'percentiles' | 'scatter';
  title: string;
  unit: string;
  x: number[];
  series: LineSeries[];
  refs?: RefLine[];
}
export interface DeltaBar {
  label: string;
  delta: number;
  lo: number | null;
  hi: number | null;
  /** Tolerance in %, signed towards the bad direction (−10 for throughput, +25 for latency). */
  tolerance: number;
  verdict: Verdict;
  change: Change;
  gating: boolean;
}
export interface DeltaChart {
  type: 'delta';
  title: string;
  bars: DeltaBar[];
}
/**
 * A series over ordered points (nightly runs, a bisect's images): one value per point with its CI
 * whiskers (null: no value there), dashed segment means, and step marks drawn as a vertical line
 * just before the point `at` — where a change point was found, or where a bisect's first bad image
 * starts. `ref` is a horizontal reference line (0 % for a ratio).
 */
export interface StepsChart {
  type: 'steps';
  title: string;
  unit: string;
  /** One label per point (a date, an image position). */
  labels: string[];
  values: (number | null)[];
  lo?: (number | null)[];
  hi?: (number | null)[];
  /** Per point: 'bad', 'good', 'skip' or 'other' (its dot's colour); default 'other'. */
  kinds?: string[];
  /** Connect the points with a line (a time series) or not (a bisect's probes). */
  line: boolean;
  segments?: Array<{ from: number; to: number; mean: number }>;
  marks: Array<{ at: number; label: string }>;
  ref?: { value: number; label: string };
}
export type Chart = XYChart | DeltaChart | StepsChart;

export interface ScenarioCharts {
  scenario: ScenarioSpec;
  throughput?: string;
  latency: string[];
  deltas: string[];
  scatter: string[];
}

export interface ChartData {
  targets: TargetRef[];
  /** chart id → what to draw; the page has one `data-chart="id"` element per entry. */
  charts: Record<string, Chart>;
  scenarios: ScenarioCharts[];
  /** A nightly run: one steps chart per gating metric's series (ids into charts). */
  nightly: string[];
}

const PALETTE = ['#2563eb', '#ea580c', '#7c3aed', '#0d9488', '#db2777', '#65a30d'];
const HISTOGRAM_TITLES: Record<string, string> = {
  latency: 'Latency, publish → consume',
  confirm_latency: 'Confirm latency, publish → confirm',
  churn_op_latency: 'Churn operation latency',
};
const histogramTitle = (key: string) => HISTOGRAM_TITLES[key] ?? `${key.replace(/_/g, ' ')} (percentiles)`;
/** Histogram kinds in the scenario's trials, known ones first. */
function histogramKeys(report: RunReport, s: ScenarioSpec): string[] {
  const keys = new Set(report.trials.filter((t) => t.scenario === s.id && t.valid).flatMap((t) => Object.keys(t.histograms ?? {})));
  const known = Object.keys(HISTOGRAM_TITLES);
  return [...keys].sort((a, b) => (known.indexOf(a) + 1 || 99) - (known.indexOf(b) + 1 || 99) || a.localeCompare(b));
}
/** Percentile plot x positions: 1/(1 − p), 1 … 10^5 (p = 0 … 99.999 %), 20 per decade. */
const PERCENTILE_X = Array.from({ length: 101 }, (_, k) => 10 ** (k / 20));

/** Every target of the report, the candidate first, each with its own colour. */
export function targetRefs(report: RunReport): TargetRef[] {
  const ids = [report.candidate, ...report.targets.map((t) => t.id), ...report.trials.map((t) => t.target)];
  return [...new Set(ids)].map((id, i) => ({ id, label: report.targets.find((t) => t.id === id)?.label ?? id, color: PALETTE[i % PALETTE.length] }));
}

function validTrials(report: RunReport, scenario: string, target: string): TrialResult[] {
  return report.trials.filter((t) => t.scenario === scenario && t.target === target && t.valid);
}

function throughput(report: RunReport, s: ScenarioSpec, targets: TargetRef[]): XYChart | undefined {
  const per = targets.map((t) => validTrials(report, s.id, t.id).filter((tr) => tr.series.length));
  // Samples land near whole seconds (0.1, 1.1, …): align trials on the nearest second.
  const sec = (p: { t: number }) => Math.round(p.t);
  const x = [...new Set(per.flat().flatMap((tr) => tr.series.map(sec)))].sort((a, b) => a - b);
  if (!x.length) return undefined;
  const series: LineSeries[] = [];
  per.forEach((trials, i) => {
    if (!trials.length) return;
    const t = targets[i];
    const values = (key: 'published' | 'consumed', f: (v: number[]) => number) =>
      x.map((at) => {
        const vs = trials.map((tr) => tr.series.find((p) => sec(p) === at)?.[key]).filter((v): v is number => typeof v === 'number');
        return vs.length ? f(vs) : null;
      });
    series.push({ label: `${t.label} consumed`, target: t.id, values: values('consumed', median) });
    series.push({ label: `${t.label} published`, target: t.id, values: values('published', median), dash: true });
    if (trials.length > 1) {
      series.push({ label: `${t.label} consumed max`, target: t.id, values: values('consumed', (v) => Math.max(...v)), band: 'max' });
      series.push({ label: `${t.label} consumed min`, target: t.id, values: values('consumed', (v) => Math.min(...v)), band: 'min' });
    }
  });
  return { type: 'throughput', title: 'Throughput per second', unit: 'msg/s', x, series };
}

function percentiles(report: RunReport, s: ScenarioSpec, targets: TargetRef[], key: string, title: string): XYChart | undefined {
  const series: LineSeries[] = [];
  for (const t of targets) {
    const encoded = validTrials(report, s.id, t.id)
      .map((tr) => tr.histograms[key])
      .filter((e): e is string => Boolean(e));
    if (!encoded.length) continue;
    let h: ReturnType<typeof mergeEncoded>;
    try {
      h = mergeEncoded(encoded);
    } catch {
      continue; // a corrupt histogram leaves the chart out rather than the whole report
    }
    if (h.totalCount === 0) continue;
    const values = PERCENTILE_X.map((x, k) => (k === PERCENTILE_X.length - 1 ? h.maxValue : h.getValueAtPercentile(100 - 100 / x)) / 1000);
    series.push({ label: `${t.label} (${h.totalCount.toLocaleString('en-US')} msgs)`, target: t.id, values });
  }
  return series.length ? { type: 'percentiles', title, unit: 'ms', x: PERCENTILE_X, series } : undefined;
}

const metricOrder = (id: string) => {
  const i = METRICS.findIndex((m) => m.id === id);
  return i < 0 ? METRICS.length : i;
};

function deltas(cs: Comparison[], ci: string): DeltaChart {
  const bars = cs
    .filter((c) => c.ratio !== null && Number.isFinite(c.ratio))
    .sort((a, b) => Number(b.gating) - Number(a.gating) || metricOrder(a.metric) - metricOrder(b.metric))
    .map(
      (c): DeltaBar => ({
        label: metricDef(c.metric).label,
        delta: (c.ratio! - 1) * 100,
        lo: c.ciLow === null ? null : (c.ciLow - 1) * 100,
        hi: c.ciHigh === null ? null : (c.ciHigh - 1) * 100,
        tolerance: (c.direction === 'higher' ? -1 : 1) * c.tolerance * 100,
        verdict: c.verdict,
        change: c.change,
        gating: c.gating,
      }),
    );
  const c = cs[0];
  const what = c.against === 'stored' ? 'the stored baseline' : `${c.baselineLabel} (same run)`;
  return { type: 'delta', title: `${c.candidateLabel} vs ${what}: Δ % with ${ci}`, bars };
}

function scatter(report: RunReport, s: ScenarioSpec, targets: TargetRef[], metric: string): XYChart | undefined {
  const trials = report.trials.filter((t) => t.scenario === s.id && t.valid && Number.isFinite(t.metrics[metric]));
  if (!trials.length) return undefined;
  const x = [...new Set(trials.map((t) => t.order + 1))].sort((a, b) => a - b);
  const series = targets
    .filter((t) => trials.some((tr) => tr.target === t.id))
    .map((t) => ({
      label: t.label,
      target: t.id,
      values: x.map((o) => trials.find((tr) => tr.target === t.id && tr.order + 1 === o)?.metrics[metric] ?? null),
    }));
  const refs = report.comparisons
    .filter((c) => c.scenario === s.id && c.metric === metric && c.against === 'stored' && c.baselineMedian !== null)
    .map((c) => ({ label: 'stored baseline median', value: c.baselineMedian! }));
  const def = metricDef(metric);
  return { type: 'scatter', title: `${def.label}${def.unit ? ` (${def.unit})` : ''} per trial`, unit: def.unit, x, series, refs };
}

/** A nightly series as a steps chart: Δ % against the reference (or the median) per night, its CI,
 *  the mean of each segment between steps, and the steps. */
export function nightlyChart(x: NightlySeries): StepsChart {
  const def = metricDef(x.metric);
  const ratio = x.series === 'ratio';
  const y = (v: number | null | undefined) => (v === null || v === undefined ? null : ratio ? (v - 1) * 100 : v);
  const values = x.points.map((p) => y(p.value));
  const cuts = [0, ...x.steps.map((s) => s.index).sort((a, b) => a - b), values.length];
  const segments = cuts
    .slice(1)
    .map((to, k) => {
      const vs = values.slice(cuts[k], to).filter((v): v is number => v !== null);
      return { from: cuts[k], to, mean: vs.reduce((a, b) => a + b, 0) / Math.max(1, vs.length) };
    })
    .filter((seg) => seg.to > seg.from);
  const signed = (m: number) => `${m >= 0 ? '+' : '−'}${Math.abs(m * 100).toFixed(1)} %`;
  return {
    type: 'steps',
    title: `${x.scenario} ${def.label}: ${ratio ? 'Δ % against the reference broker (paired ratio, its CI)' : `median${def.unit ? ` (${def.unit})` : ''}`}`,
    unit: ratio ? 'Δ %' : def.unit,
    labels: x.points.map((p) => p.createdAt.slice(5, 10)),
    values,
    lo: x.points.map((p) => y(p.ciLow)),
    hi: x.points.map((p) => y(p.ciHigh)),
    line: true,
    segments,
    marks: x.steps.map((s) => ({ at: s.index, label: `${s.isNew ? 'new ' : ''}step ${signed(s.magnitude)}` })),
    ...(ratio ? { ref: { value: 0, label: 'the reference' } } : {}),
  };
}

export function chartData(report: RunReport): ChartData {
  const targets = targetRefs(report);
  const charts: Record<string, Chart> = {};
  const add = (id: string, c: Chart | undefined): string[] => {
    if (!c) return [];
    charts[id] = c;
    return [id];
  };
  const scenarios = report.scenarios.map((s, i): ScenarioCharts => {
    const cs = report.comparisons.filter((c) => c.scenario === s.id);
    const groups = [...new Set(cs.map((c) => c.against))].map((a) => cs.filter((c) => c.against === a));
    const gate = s.gate.length ? s.gate : DEFAULT_GATE;
    return {
      scenario: s,
      throughput: add(`s${i}-throughput`, throughput(report, s, targets))[0],
      latency: histogramKeys(report, s).flatMap((key) => add(`s${i}-${key}`, percentiles(report, s, targets, key, histogramTitle(key)))),
      deltas: groups.flatMap((g, k) => add(`s${i}-delta${k}`, g.some((c) => c.ratio !== null) ? deltas(g, g[0].against === 'stored' ? CI : ciLabel(report)) : undefined)),
      scatter: gate.flatMap((m) => add(`s${i}-scatter-${m}`, scatter(report, s, targets, m))),
    };
  });
  const nightly = (report.nightly?.series ?? []).flatMap((x, i) => add(`nightly-${i}`, x.points.length ? nightlyChart(x) : undefined));
  return { targets, charts, scenarios, nightly };
}
