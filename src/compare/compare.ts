// Compare stage: per scenario × metric, the candidate's trial values against a reference (the
// stored baseline's trials, or a same-run baseline target's trials). Exact Mann-Whitney U for
// significance (Holm-corrected across the gating metrics of the run), the Hodges-Lehmann shift of
// log values as a ratio with its distribution-free CI for the size, and a verdict that fails only
// when the whole CI lies beyond the metric's tolerance in the bad direction.
import type { Change, Comparison, ScenarioSpec, Verdict } from '../schema/types';
import { metricDef, toleranceFor } from '../metrics/definitions';
import { hodgesLehmannRatio, mannWhitneyExact, median, minAttainableP } from './stats';
import { holm } from './holm';

/** Family-wise error rate of a run's gating decisions. */
export const ALPHA = 0.05;
/** Fewer valid trials than this on either side → inconclusive, whatever the test could reach. */
export const MIN_TRIALS = 3;

/** Smallest n per side whose exact U test can reach significance among `tests` Holm-corrected tests. */
export function trialsNeeded(tests: number): number {
  let n = MIN_TRIALS;
  while (minAttainableP(n, n) * Math.max(1, tests) >= ALPHA) n++;
  return n;
}

/** The default n per side: 5, or more when the selection has so many gating metrics that Holm's
 *  correction would put significance out of reach of 5 trials (e.g. the metadata preset). */
export function defaultRepetitions(scenarios: ScenarioSpec[]): number {
  return Math.max(5, trialsNeeded(scenarios.reduce((sum, s) => sum + s.gate.length, 0)));
}

export interface Sample {
  label: string;
  /** scenario id → metric id → values, one per valid trial. */
  values: Record<string, Record<string, number[]>>;
}

export interface CompareInput {
  scenarios: ScenarioSpec[];
  candidate: Sample;
  reference: Sample;
  /** 'stored' or the same-run target id. */
  against: string;
  /** When set, a fail becomes a warn, with this reason (e.g. the runner's fingerprint differs). */
  mayNotFail?: string;
}

const fmtPct = (r: number) => `${r >= 1 ? '+' : ''}${((r - 1) * 100).toFixed(1)} %`;

export function compareSamples(input: CompareInput): Comparison[] {
  const out: Comparison[] = [];
  for (const s of input.scenarios) {
    const cand = input.candidate.values[s.id] ?? {};
    const ref = input.reference.values[s.id] ?? {};
    const metrics = [...new Set([...Object.keys(cand), ...Object.keys(ref)])];
    for (const metric of metrics) out.push(compareMetric(s, metric, ref[metric] ?? [], cand[metric] ?? [], input));
  }
  adjustAndDecide(out, input.mayNotFail);
  return out;
}

function compareMetric(s: ScenarioSpec, metric: string, x: number[], y: number[], input: CompareInput): Comparison {
  const def = metricDef(metric);
  const base: Comparison = {
    scenario: s.id, metric, unit: def.unit, direction: def.direction, against: input.against,
    baselineLabel: input.reference.label, candidateLabel: input.candidate.label,
    nBaseline: x.length, nCandidate: y.length,
    baselineMedian: x.length ? median(x) : null, candidateMedian: y.length ? median(y) : null,
    ratio: null, ciLow: null, ciHigh: null, pValue: null, pAdjusted: null,
    tolerance: toleranceFor(metric, s.tolerances), change: 'unknown', verdict: 'inconclusive', reason: '',
    gating: s.gate.includes(metric),
  };
  if (x.length < MIN_TRIALS || y.length < MIN_TRIALS) {
    base.reason = x.length === 0 ? `no ${input.reference.label} values for this metric`
      : y.length === 0 ? 'no valid candidate trials for this metric'
      : `too few valid trials (n = ${x.length} + ${y.length}; at least ${MIN_TRIALS} per side needed)`;
    if (base.baselineMedian && base.candidateMedian) base.ratio = base.candidateMedian / base.baselineMedian;
    return base;
  }
  const hl = hodgesLehmannRatio(x, y, 1 - ALPHA);
  base.pValue = mannWhitneyExact(x, y).p;
  if (hl) {
    base.ratio = hl.ratio;
    base.ciLow = hl.low;
    base.ciHigh = hl.high;
  } else if (base.baselineMedian && base.candidateMedian) {
    base.ratio = base.candidateMedian / base.baselineMedian;
  }
  return base;
}

/** Holm across the gating comparisons, then the verdict of each comparison. */
function adjustAndDecide(cs: Comparison[], mayNotFail?: string): void {
  const tested = cs.filter((c) => c.pValue !== null && c.gating);
  // With too few trials the exact test cannot reach significance at all: say so, don't pass.
  const m = tested.length;
  for (const c of cs) {
    if (c.pValue === null || minAttainableP(c.nBaseline, c.nCandidate) * (c.gating ? m : 1) < ALPHA) continue;
    c.reason = `too few valid trials to reach significance (n = ${c.nBaseline} + ${c.nCandidate}; with ${m} gating metric${m === 1 ? '' : 's'} at least ${trialsNeeded(m)} per side are needed)`;
    c.pAdjusted = c.gating ? null : c.pValue;
  }
  const adjusted = holm(tested.map((c) => c.pValue!));
  tested.forEach((c, i) => { c.pAdjusted = adjusted[i]; });
  for (const c of cs) {
    if (c.pValue === null || c.ratio === null || c.reason) continue;
    if (c.pAdjusted === null) c.pAdjusted = c.pValue;
    decide(c, mayNotFail);
  }
}

/** Ratios where "worse" means down (throughput) are flipped so that > 1 is always worse. */
function worseness(c: Comparison, r: number): number {
  return c.direction === 'higher' ? 1 / r : r;
}

function decide(c: Comparison, mayNotFail?: string): void {
  const significant = c.pAdjusted! < ALPHA;
  const limit = 1 + c.tolerance;
  const lo = c.ciLow ?? c.ratio!;
  const hi = c.ciHigh ?? c.ratio!;
  // CI bounds mapped to "worseness" (> 1 = worse); the mapping may swap them.
  const [wLo, wHi] = [worseness(c, lo), worseness(c, hi)].sort((a, b) => a - b);
  const w = worseness(c, c.ratio!);
  c.change = !significant ? 'same' : w > 1 ? 'worse' : 'better';
  const rule = `p = ${fmtP(c.pAdjusted!)} (Holm, α = ${ALPHA}), ratio ${fmtPct(c.ratio!)} [${fmtPct(lo)}, ${fmtPct(hi)}], tolerance ${Math.round(c.tolerance * 100)} %`;
  let verdict: Verdict;
  let why: string;
  if (significant && wLo > limit) {
    verdict = 'fail';
    why = 'the whole CI lies beyond the tolerance in the bad direction';
  } else if (significant && w > 1) {
    verdict = 'warn';
    why = 'significantly worse, but the CI straddles the tolerance';
  } else if (!significant && wHi > limit) {
    verdict = 'inconclusive';
    why = 'too noisy: no significant change, but the CI reaches beyond the tolerance';
  } else {
    verdict = 'pass';
    why = significant ? 'significantly better' : 'no significant change and the CI stays within the tolerance';
  }
  if (verdict === 'fail' && mayNotFail) {
    verdict = 'warn';
    why += `; not failing because ${mayNotFail}`;
  }
  c.verdict = verdict;
  c.reason = `${why} (${rule})`;
}

function fmtP(p: number): string {
  return p < 0.001 ? p.toExponential(1) : p.toFixed(3);
}

/** The run's verdict from its gating comparisons: fail > warn > inconclusive > pass. */
export function overallVerdict(cs: Comparison[]): Verdict {
  const gating = cs.filter((c) => c.gating);
  if (!gating.length) return 'inconclusive';
  for (const v of ['fail', 'warn', 'inconclusive'] as Verdict[]) if (gating.some((c) => c.verdict === v)) return v;
  return 'pass';
}

export function countChanges(cs: Comparison[]): { regressions: number; improvements: number } {
  const g = cs.filter((c) => c.gating);
  return {
    regressions: g.filter((c) => c.verdict === 'fail').length,
    improvements: g.filter((c) => c.change === 'better').length,
  };
}

export type { Change };
