// Compare stage: per scenario × metric, the candidate's trial values against a reference (the
// stored baseline's trials, or a same-run baseline target's trials). Two designs: against a
// same-run target the trials are paired by round (src/plan/plan.ts runs a round's pair back to
// back), tested with the exact Wilcoxon signed-rank test on the log ratios and sized by their
// Hodges-Lehmann ratio (src/compare/paired.ts); against a stored baseline, from another run, the
// samples are independent: exact Mann-Whitney U and the two-sample Hodges-Lehmann ratio. Either
// way significance is Holm-corrected across the gating metrics of the run. Each comparison gives
// one of three answers against its margins (src/compare/margins.ts): a regression only when the
// whole CI lies beyond the metric's tolerance in the bad direction; "no regression of X % or
// more" once the CI's bad end (X, a one-sided 95 % bound) lies inside the equivalence margin;
// otherwise not decided, with what was ruled out so far and what more would decide it.
import type { Answer, Change, Comparison, RunReport, ScenarioSpec, Verdict } from '../schema/types';
import { metricDef } from '../metrics/definitions';
import { marginsFor } from './margins';
import { hodgesLehmannRatio, mannWhitneyExact, median, minAttainableP } from './stats';
import { hodgesLehmannPairedRatio, minAttainablePairedP, signedRankExact } from './paired';
import { holm } from './holm';

/** Family-wise error rate of a run's gating decisions. */
export const ALPHA = 0.05;
/**
 * Level of the Hodges-Lehmann CI every delta carries, 1 − 2α = 90 %. A verdict reads one end of
 * it: fail when its good end is still beyond the tolerance (a one-sided claim, "worse than the
 * tolerance"), pass when its bad end is inside it ("not worse than the tolerance"). Each end of a
 * 90 % interval is a one-sided 95 % bound, so each claim is a one-sided test at α — the interval
 * of equivalence and non-inferiority testing (TOST; Schuirmann 1987), not the two-sided 95 %
 * interval, which would test each claim at α / 2.
 */
export const CONFIDENCE = 1 - 2 * ALPHA;
/** Fewer valid trials than this on either side → inconclusive, whatever the test could reach. */
export const MIN_TRIALS = 3;

/** Smallest attainable two-sided p of the design with n pairs, or n + m independent trials. */
function minP(paired: boolean, n: number, m = n): number {
  return paired ? minAttainablePairedP(Math.min(n, m)) : minAttainableP(n, m);
}

/** Smallest n per side whose exact test (signed-rank when paired, else U) can reach significance
 *  among `tests` Holm-corrected tests. */
export function trialsNeeded(tests: number, paired = false): number {
  let n = MIN_TRIALS;
  while (minP(paired, n) * Math.max(1, tests) >= ALPHA) n++;
  return n;
}

/** The default n per side: 5, or more when the selection has so many gating metrics that Holm's
 *  correction would put significance out of reach (paired: same-run A/B; 8 for the pr preset's five
 *  metrics); for an A/B, at least the preset's `pairs` (24 for pr: what its power needs). */
export function defaultRepetitions(scenarios: ScenarioSpec[], paired = false, pairs = 0): number {
  return Math.max(
    5,
    trialsNeeded(
      scenarios.reduce((sum, s) => sum + s.gate.length, 0),
      paired,
    ),
    paired ? pairs : 0,
  );
}

export interface Sample {
  label: string;
  /** scenario id → metric id → values, one per valid trial; when paired, one per round (index =
   *  round, NaN where that round's trial is invalid or lacks the metric). */
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
  /** Same-run A/B: both samples are indexed by round and compared as pairs. */
  paired?: boolean;
  /** The level of each one-sided claim (default ALPHA); a sequential look uses its nominal level
   *  (src/compare/sequential.ts). The CI is then 1 − 2·alpha. */
  alpha?: number;
  /** Bonferroni over this many gating metrics instead of Holm over the ones compared here: a
   *  sequential A/B judges each scenario at its own looks, so the family is the run's, fixed. */
  bonferroni?: number;
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
  adjustAndDecide(out, input.mayNotFail, input.alpha, input.bonferroni);
  if (input.against === 'stored') {
    const m = out.filter((c) => c.gating && c.pValue !== null).length;
    for (const c of out) {
      if (!c.gating) continue;
      const s = input.scenarios.find((x) => x.id === c.scenario)!;
      c.failsBeyond = input.mayNotFail ? null : failThreshold(s, c, input.reference.values[s.id]?.[c.metric] ?? [], c.nCandidate, Math.max(m, 1), input);
    }
  }
  return out;
}

/**
 * A stored-baseline comparison's power, stated: the smallest change in the bad direction it could
 * fail on, as a ratio (0.73: a throughput 27 % down; 1.37: a latency 37 % up). Found by running
 * this very rule (test, Holm factor of the run's gating metrics, CI, tolerance with the drift
 * allowance) on the baseline's own trials against a copy of them moved by that change, with this
 * run's n, in 1 % steps; null when no change up to 95 % could fail (too few trials).
 */
function failThreshold(s: ScenarioSpec, c: Comparison, x: number[], n: number, m: number, input: CompareInput): number | null {
  if (x.length < MIN_TRIALS || n < MIN_TRIALS) return null;
  for (let pct = 1; pct <= 95; pct++) {
    const f = c.direction === 'higher' ? 1 - pct / 100 : 1 + pct / 100;
    const y = Array.from({ length: n }, (_, i) => x[i % x.length] * f);
    const probe = compareMetric(s, c.metric, x, y, input);
    if (probe.pValue === null || probe.ratio === null) return null;
    if (minP(false, x.length, n) * m >= ALPHA) return null;
    probe.pAdjusted = Math.min(1, probe.pValue * m);
    decide(probe);
    if (probe.verdict === 'fail') return Math.round(f * 1000) / 1000;
  }
  return null;
}

/** A target's values by round: index = the trial's round, NaN where that trial is invalid or
 *  lacks the metric. */
function valuesByRound(trials: RunReport['trials'], target: string): Sample['values'] {
  const out: Sample['values'] = {};
  const rounds: Record<string, number> = {};
  for (const t of trials) if (t.target === target) rounds[t.scenario] = Math.max(rounds[t.scenario] ?? 0, t.trial + 1);
  for (const t of trials) {
    if (t.target !== target || !t.valid) continue;
    const s = (out[t.scenario] ??= {});
    for (const [m, v] of Object.entries(t.metrics)) (s[m] ??= new Array<number>(rounds[t.scenario]).fill(NaN))[t.trial] = v;
  }
  return out;
}

/** Same-run A/B: the candidate's trials against the reference target's, paired by round. */
export function compareSameRun(
  scenarios: ScenarioSpec[],
  trials: RunReport['trials'],
  candidate: { id: string; label: string },
  reference: { id: string; label: string },
  level: Pick<CompareInput, 'alpha' | 'bonferroni'> = {},
): Comparison[] {
  return compareSamples({
    scenarios,
    against: reference.id,
    paired: true,
    ...level,
    candidate: { label: candidate.label, values: valuesByRound(trials, candidate.id) },
    reference: { label: reference.label, values: valuesByRound(trials, reference.id) },
  });
}

/** Exact two-sided signed-rank p of the pairs: on log ratios (positive values), else differences. */
function pairedP(x: number[], y: number[]): number {
  const logs = x.every((v) => v > 0) && y.every((v) => v > 0);
  return signedRankExact(x.map((v, i) => (logs ? Math.log(y[i] / v) : y[i] - v))).p;
}

/** The rounds where both sides have a value: the pairs. */
function pairsOf(x: number[], y: number[]): [number[], number[]] {
  const keep = x.map((v, i) => Number.isFinite(v) && Number.isFinite(y[i]));
  return [x.filter((_, i) => keep[i]), y.filter((_, i) => keep[i])];
}

function compareMetric(s: ScenarioSpec, metric: string, xs: number[], ys: number[], input: CompareInput): Comparison {
  const def = metricDef(metric);
  const paired = input.paired === true;
  const [x, y] = paired ? pairsOf(xs, ys) : [xs, ys];
  const base: Comparison = {
    scenario: s.id,
    metric,
    unit: def.unit,
    direction: def.direction,
    against: input.against,
    baselineLabel: input.reference.label,
    candidateLabel: input.candidate.label,
    nBaseline: x.length,
    nCandidate: y.length,
    baselineMedian: x.length ? median(x) : null,
    candidateMedian: y.length ? median(y) : null,
    ratio: null,
    ciLow: null,
    ciHigh: null,
    pValue: null,
    pAdjusted: null,
    ...marginsFor(metric, s.tolerances, input.against === 'stored', s.margins),
    bound: null,
    answer: 'undecided',
    change: 'unknown',
    verdict: 'inconclusive',
    reason: '',
    gating: s.gate.includes(metric),
    paired,
  };
  if (x.length < MIN_TRIALS || y.length < MIN_TRIALS) {
    const none = paired && xs.some(Number.isFinite) && ys.some(Number.isFinite) ? 'no round with valid trials on both sides' : '';
    base.reason =
      none ||
      (x.length === 0
        ? `no ${input.reference.label} values for this metric`
        : y.length === 0
          ? 'no valid candidate trials for this metric'
          : `too few valid ${paired ? 'pairs' : 'trials'} (n = ${x.length} + ${y.length}; at least ${MIN_TRIALS} per side needed)`);
    if (base.baselineMedian && base.candidateMedian) base.ratio = base.candidateMedian / base.baselineMedian;
    return base;
  }
  const confidence = 1 - 2 * (input.alpha ?? ALPHA);
  const hl = paired ? hodgesLehmannPairedRatio(x, y, confidence) : hodgesLehmannRatio(x, y, confidence);
  base.pValue = paired ? pairedP(x, y) : mannWhitneyExact(x, y).p;
  if (hl) {
    base.ratio = hl.ratio;
    base.ciLow = hl.low;
    base.ciHigh = hl.high;
  } else if (base.baselineMedian && base.candidateMedian) {
    base.ratio = base.candidateMedian / base.baselineMedian;
  }
  base.bound = boundOf(base);
  return base;
}

/** The CI's bad end as the change the report shows, a fraction in the bad direction (0.062: a
 *  throughput 6.2 % lower, a latency 6.2 % higher; negative: better even there), or null. */
function boundOf(c: Comparison): number | null {
  if (c.ciLow === null || c.ciHigh === null) return null;
  return shown(c, Math.max(worseness(c, c.ciLow), worseness(c, c.ciHigh)));
}

/** A "worseness" ratio (> 1 = worse; the tolerance and margin are read against it) as the change
 *  the report shows in the bad direction: for throughput 1 − 1/w (the drop), else w − 1. */
function shown(c: Pick<Comparison, 'direction'>, w: number): number {
  return c.direction === 'higher' ? 1 - 1 / w : w - 1;
}

/** Holm across the gating comparisons, then the verdict of each comparison. */
function adjustAndDecide(cs: Comparison[], mayNotFail?: string, alpha = ALPHA, bonferroni?: number): void {
  const tested = cs.filter((c) => c.pValue !== null && c.gating);
  // With too few trials the exact test cannot reach significance at all: say so, don't pass.
  const m = bonferroni ?? tested.length;
  for (const c of cs) {
    if (c.pValue === null || minP(c.paired === true, c.nBaseline, c.nCandidate) * (c.gating ? m : 1) < alpha) continue;
    const unit = c.paired ? 'pairs' : 'trials';
    c.reason = `too few valid ${unit} to reach significance (n = ${c.nBaseline} + ${c.nCandidate}; with ${m} gating metric${m === 1 ? '' : 's'} at least ${trialsNeeded(m, c.paired)} ${c.paired ? 'pairs' : 'per side'} are needed)`;
    c.pAdjusted = c.gating ? null : c.pValue;
  }
  const adjusted = bonferroni ? tested.map((c) => Math.min(1, c.pValue! * bonferroni)) : holm(tested.map((c) => c.pValue!));
  tested.forEach((c, i) => {
    c.pAdjusted = adjusted[i];
  });
  for (const c of cs) {
    if (c.pValue === null || c.ratio === null || c.reason) continue;
    if (c.pAdjusted === null) c.pAdjusted = c.pValue;
    decide(c, mayNotFail, alpha, bonferroni);
  }
}

/** Ratios where "worse" means down (throughput) are flipped so that > 1 is always worse. */
function worseness(c: Pick<Comparison, 'direction'>, r: number): number {
  return c.direction === 'higher' ? 1 / r : r;
}

/**
 * The rule of one comparison whose p (adjusted) and CI are set: its verdict, answer and reason.
 * A CI end that just touches a margin counts as inside it (EDGE absorbs the rounding of 1/r).
 */
export function decide(c: Comparison, mayNotFail?: string, alpha = ALPHA, bonferroni?: number): void {
  const significant = c.pAdjusted! < alpha;
  const limit = 1 + c.tolerance + EDGE;
  const margin = 1 + (c.equivalence ?? c.tolerance) + EDGE;
  const lo = c.ciLow ?? c.ratio!;
  const hi = c.ciHigh ?? c.ratio!;
  // CI bounds mapped to "worseness" (> 1 = worse); the mapping may swap them.
  const [wLo, wHi] = [worseness(c, lo), worseness(c, hi)].sort((a, b) => a - b);
  const w = worseness(c, c.ratio!);
  c.change = !significant ? 'same' : w > 1 ? 'worse' : 'better';
  const test = c.paired ? `paired by round, signed-rank, n = ${c.nCandidate} pairs` : `Mann-Whitney U, n = ${c.nBaseline} + ${c.nCandidate}`;
  const stored = c.against === 'stored' ? ' (with the stored-baseline allowance for drift between runs)' : '';
  const rule = `${test}, p = ${fmtP(c.pAdjusted!)} (${bonferroni ? `Bonferroni over ${bonferroni}` : 'Holm'}, α = ${alpha === ALPHA ? ALPHA : `${fmtP(alpha)} at each look`}), ratio ${fmtPct(c.ratio!)} [${fmtPct(lo)}, ${fmtPct(hi)}] (${ciText(alpha)}), tolerance ${pctText(c.tolerance)}, equivalence margin ${pctText(margin - 1 - EDGE)}${c.direction === 'higher' ? ' (ratios in the bad direction: a throughput at 1/1.05 and 1/1.10 of the reference for 5 % and 10 %)' : ''}${stored}`;
  const ruledOut = wHi <= 1 ? `no regression at all (better by at least ${pctText(-shown(c, wHi))})` : `no regression of ${pctText(shown(c, wHi))} or more`;
  let verdict: Verdict;
  let why: string;
  if (significant && wLo > limit) {
    verdict = 'fail';
    why = `a regression: the whole CI lies beyond the ${pctText(c.tolerance)} tolerance in the bad direction`;
  } else if (significant && w > 1) {
    verdict = 'warn';
    why =
      wHi <= margin
        ? `${ruledOut}, but significantly worse by ${pctText(shown(c, wLo))} to ${pctText(shown(c, wHi))}, not beyond the tolerance for certain`
        : 'significantly worse, but the CI straddles the tolerance and reaches past the equivalence margin';
  } else if (c.ciLow === null || c.ciHigh === null) {
    verdict = 'inconclusive';
    why = 'not decided: no confidence interval could be formed (a value was zero or missing), so no regression is ruled out';
  } else if (wHi > margin) {
    verdict = 'inconclusive';
    why = `not decided: no significant change, and the CI still reaches a regression of ${pctText(shown(c, wHi))}, past the ${pctText(margin - 1 - EDGE)} equivalence margin${moreTrialsHint(c, margin)}`;
  } else {
    verdict = 'pass';
    why = `${ruledOut} (the CI's bad end, a one-sided 95 % bound${alpha === ALPHA ? '' : ` (${ciText(alpha, true)} at each look, α spent across the looks)`}, is inside the ${pctText(margin - 1 - EDGE)} equivalence margin)${significant ? '; significantly better' : ''}`;
  }
  if (verdict === 'fail' && mayNotFail) {
    verdict = 'warn';
    why += `; not failing because ${mayNotFail}`;
  }
  c.verdict = verdict;
  c.answer = answerOf(verdict, c.ciLow !== null && c.ciHigh !== null && wHi <= margin);
  c.reason = `${why} (${rule})`;
}

/** The answer a verdict gives, given whether the CI's bad end lies inside the equivalence margin. */
function answerOf(verdict: Verdict, inside: boolean): Answer {
  return verdict === 'fail' ? 'regression' : verdict !== 'inconclusive' && inside ? 'no-regression' : 'undecided';
}

/** A comparison's or a run's answer; reports written before answers get it from their verdict. */
export function answerFor(x: { answer?: Answer; verdict: Verdict }): Answer {
  return x.answer ?? (x.verdict === 'fail' ? 'regression' : x.verdict === 'pass' ? 'no-regression' : 'undecided');
}

/** The run's answer from its gating comparisons: any regression is red; green only when every
 *  gating metric is; grey otherwise (and when nothing gates). */
export function overallAnswer(cs: readonly Comparison[]): Answer {
  const gating = cs.filter((c) => c.gating);
  if (gating.some((c) => answerFor(c) === 'regression')) return 'regression';
  return gating.length && gating.every((c) => answerFor(c) === 'no-regression') ? 'no-regression' : 'undecided';
}

const pctText = (f: number) => `${+(Math.max(0, f) * 100).toFixed(1)} %`;
/** Rounding slack at a margin's edge (ratios are formed as 1 / r for throughput). */
const EDGE = 1e-9;

/**
 * How many trials (pairs) would likely bring the CI's bad end inside `limit` (a ratio in the bad
 * direction): its half-width shrinks as 1/√n, so n·(half-width / room)², room being the
 * estimate's distance below the limit (log scale). Null when the estimate itself is at or past it.
 */
export function trialsToDecide(c: Pick<Comparison, 'ciLow' | 'ciHigh' | 'ratio' | 'direction' | 'paired' | 'nBaseline' | 'nCandidate'>, limit: number): number | null {
  if (c.ciLow === null || c.ciHigh === null || c.ratio === null) return null;
  const [wLo, wHi] = [worseness(c, c.ciLow), worseness(c, c.ciHigh)].sort((a, b) => a - b);
  const room = Math.log(limit) - Math.log(worseness(c, c.ratio));
  const half = (Math.log(wHi) - Math.log(wLo)) / 2;
  const n = c.paired ? c.nCandidate : Math.min(c.nBaseline, c.nCandidate);
  return room > 0 && half > 0 ? Math.ceil(n * (half / room) ** 2) : null;
}

function moreTrialsHint(c: Comparison, limit: number): string {
  const needed = trialsToDecide(c, limit);
  const n = c.paired ? c.nCandidate : Math.min(c.nBaseline, c.nCandidate);
  const unit = c.paired ? 'pairs' : 'trials per side';
  if (needed === null) return '';
  return needed > 100 ? ` (deciding it would take over 100 ${unit}: widen the margin, or use a quieter runner)` : ` (about ${needed} ${unit} would likely decide it; this run had ${n})`;
}

/** "90 % CI", or with `oneSided` the level of each end: "95 %". */
const ciText = (alpha: number, oneSided = false) => (oneSided ? `${+((1 - alpha) * 100).toFixed(alpha === ALPHA ? 0 : 1)} %` : `${+((1 - 2 * alpha) * 100).toFixed(alpha === ALPHA ? 0 : 1)} % CI`);

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
