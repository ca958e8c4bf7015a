// Paired statistics for same-run A/B (statistics reference, section 5): the two targets of one
// scenario run back to back in each round, so a round's pair shares the machine's state of that
// moment. Owns the exact two-sided Wilcoxon signed-rank test of the per-round log ratios and their
// Hodges-Lehmann estimate (median of the Walsh averages) as a ratio with its distribution-free
// confidence interval (Hollander & Wolfe; as R's wilcox.test(paired = TRUE, conf.int = TRUE)).
// Pure functions, no I/O.
//
// Exact distributions come from one dynamic programme over the doubled (mid)ranks of |d|, so ties
// give the exact conditional distribution; zero differences are dropped (Wilcoxon's rule).
import { twoSidedP, type RatioEstimate } from './stats';

export interface SignedRankResult {
  /** V: the sum of the ranks of the positive differences (R's V), after dropping zeros. */
  v: number;
  /** Two-sided p = min(1, 2·min(P(V ≤ v), P(V ≥ v))); 1 when every difference is zero. */
  p: number;
  /** Pairs left after dropping zero differences. */
  nonZero: number;
}

/** Smallest two-sided exact signed-rank p with n pairs: min(1, 2 / 2^n). n = 8 → 0.0078. */
export function minAttainablePairedP(n: number): number {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`minAttainablePairedP: bad sample size ${n}`);
  return Math.min(1, 2 / 2 ** n);
}

/** Exact two-sided Wilcoxon signed-rank test of d against 0. Throws RangeError on NaN/±Infinity. */
export function signedRankExact(d: readonly number[]): SignedRankResult {
  const bad = d.find((v) => !Number.isFinite(v));
  if (bad !== undefined) throw new RangeError(`signedRank: non-finite difference: ${bad}`);
  const nz = d.filter((v) => v !== 0);
  if (nz.length === 0) return { v: 0, p: 1, nonZero: 0 };
  const ranks2 = doubledRanks(nz.map(Math.abs));
  let observed = 0;
  nz.forEach((v, i) => {
    if (v > 0) observed += ranks2[i];
  });
  const counts = signSumCounts(ranks2);
  return { v: observed / 2, p: twoSidedP(counts, observed), nonZero: nz.length };
}

/**
 * Hodges-Lehmann ratio of paired positive values y_i / x_i: exp of the median of the Walsh
 * averages of d_i = log(y_i) − log(x_i), with the interval [W_(k), W_(M+1−k)] over the
 * M = n(n+1)/2 sorted Walsh averages, k the largest value with 2·P(V ≤ k−1) ≤ 1 − confidence
 * under the no-ties null distribution (R's qsignrank). The achieved confidence is reported;
 * with n so small that even [min, max] falls short, that widest interval is returned with its
 * lower achieved confidence. Null if no pair is left or a value is non-positive or non-finite.
 */
export function hodgesLehmannPairedRatio(x: readonly number[], y: readonly number[], confidence = 0.95): RatioEstimate | null {
  if (x.length !== y.length) throw new RangeError(`hodgesLehmannPairedRatio: ${x.length} vs ${y.length} values`);
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`hodgesLehmannPairedRatio: confidence must be in (0, 1), got ${confidence}`);
  const n = x.length;
  const positive = (v: number) => v > 0 && Number.isFinite(v);
  if (n === 0 || !x.every(positive) || !y.every(positive)) return null;
  const d = x.map((xi, i) => Math.log(y[i]) - Math.log(xi));
  const M = (n * (n + 1)) / 2;
  const walsh = new Float64Array(M);
  let k = 0;
  for (let i = 0; i < n; i++) for (let j = i; j < n; j++) walsh[k++] = (d[i] + d[j]) / 2;
  walsh.sort();
  const cdf = signedRankNullCdf(n);
  const alpha = 1 - confidence;
  let t = 0;
  const maxT = Math.floor((M - 1) / 2);
  while (t < maxT && 2 * cdf(t + 1) <= alpha * (1 + 1e-12)) t++;
  const mid = M >> 1;
  const med = M % 2 === 1 ? walsh[mid] : (walsh[mid - 1] + walsh[mid]) / 2;
  return { ratio: Math.exp(med), low: Math.exp(walsh[t]), high: Math.exp(walsh[M - 1 - t]), confidence: 1 - 2 * cdf(t) };
}

/** Doubled midranks of positive values (ties share their mean rank), in input order. */
function doubledRanks(a: readonly number[]): number[] {
  const idx = a.map((v, i) => ({ v, i })).sort((p, q) => p.v - q.v);
  const out = new Array<number>(a.length);
  for (let start = 0; start < idx.length; ) {
    let end = start;
    while (end < idx.length && idx[end].v === idx[start].v) end++;
    const rank2 = 2 * start + (end - start) + 1; // doubled mean of ranks start+1 … end
    for (let j = start; j < end; j++) out[idx[j].i] = rank2;
    start = end;
  }
  return out;
}

/** counts[s] = number of sign patterns whose positive doubled ranks sum to s (2^n in total). */
function signSumCounts(ranks2: readonly number[]): Float64Array {
  const max = ranks2.reduce((s, r) => s + r, 0);
  const dp = new Float64Array(max + 1);
  dp[0] = 1;
  let reach = 0;
  for (const r of ranks2) {
    reach += r;
    for (let s = reach; s >= r; s--) dp[s] += dp[s - r];
  }
  return dp;
}

/** q ↦ P(V ≤ q) under H0 without ties or zeros, for n pairs (ranks 1 … n). */
export function signedRankNullCdf(n: number): (q: number) => number {
  const counts = signSumCounts(Array.from({ length: n }, (_, i) => 2 * (i + 1)));
  const max = (n * (n + 1)) / 2;
  const cumulative = new Float64Array(max + 1);
  let total = 0;
  for (let v = 0; v <= max; v++) {
    total += counts[2 * v];
    cumulative[v] = total;
  }
  return (q) => (q < 0 ? 0 : q >= max ? 1 : cumulative[Math.floor(q)] / total);
}
