// Statistics for the compare step (statistics reference, sections 2 and 5), owning:
// the exact two-sided Mann-Whitney U test, the Hodges-Lehmann ratio of two samples with its
// distribution-free confidence interval, the smallest attainable U-test p and the median (the
// Holm-Bonferroni adjustment is ./holm). Pure functions, no I/O.
//
// Exact distributions come from one dynamic programme over tie groups of the pooled sample,
// using doubled midranks so every rank sum is an integer. With no ties this is the classical
// null distribution of U; with ties it is the exact conditional (permutation) distribution
// given the tie pattern. Above EXACT_WORK_LIMIT the normal approximation is used instead.

export interface MannWhitneyResult {
  /** U for x: #(x_i > y_j) + 0.5·#(x_i = y_j); the same as R's W and SciPy's U1. */
  u: number;
  /** Two-sided p = min(1, 2·min(P(U ≤ u), P(U ≥ u))). */
  p: number;
  /** False when the normal approximation (tie- and continuity-corrected) was used. */
  exact: boolean;
}

export interface RatioEstimate {
  /** exp(Hodges-Lehmann shift of logs): candidate / baseline. */
  ratio: number;
  low: number;
  high: number;
  /** Achieved (not requested) confidence of [low, high]; the exact interval is discrete. */
  confidence: number;
}

/** Max DP inner steps (≈ N·k·2kN) for exact results: n = m = 50 takes ≈ 30 ms; 70 is the cap. */
const EXACT_WORK_LIMIT = 2e8;

/** Median; NaN for an empty list. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  return sortedMedian(Float64Array.from(xs).sort());
}

/**
 * Smallest two-sided exact U-test p attainable with sample sizes n and m (complete
 * separation): min(1, 2 / C(n+m, n)). 1 when either side is empty. n = m = 5 → 0.00794.
 */
export function minAttainableP(n: number, m: number): number {
  for (const s of [n, m]) {
    if (!Number.isInteger(s) || s < 0) throw new RangeError(`minAttainableP: bad sample size ${s}`);
  }
  if (n === 0 || m === 0) return 1;
  return Math.min(1, 2 / binomial(n + m, n));
}

/**
 * Two-sided Mann-Whitney U test of x against y. Exact p from the permutation distribution of
 * the rank sum (conditional on ties, if any) while the DP is affordable — comfortably so for
 * n, m ≤ 50 — otherwise the normal approximation with tie and continuity correction
 * (`exact: false`). An empty side has a single possible arrangement, so it gives
 * { u: 0, p: 1, exact: true }. All values equal gives p = 1. Throws RangeError on NaN/±Infinity.
 */
export function mannWhitneyExact(x: readonly number[], y: readonly number[]): MannWhitneyResult {
  assertFinite(x, 'x');
  assertFinite(y, 'y');
  const n = x.length;
  const m = y.length;
  if (n === 0 || m === 0) return { u: 0, p: 1, exact: true };
  const { groups, rankSum2X } = rankPooled(x, y);
  const u = (rankSum2X - n * (n + 1)) / 2;
  // Work with the smaller side: its rank-sum tails give the same two-sided p.
  const k = Math.min(n, m);
  const observed = n <= m ? rankSum2X : (n + m) * (n + m + 1) - rankSum2X;
  const counts = rankSumCounts(groups, k);
  if (counts === null) return { u, p: mannWhitneyNormal(x, y).p, exact: false };
  return { u, p: twoSidedP(counts, observed), exact: true };
}

/**
 * Large-sample Mann-Whitney test: normal approximation with tie-corrected variance and a
 * 0.5 continuity correction (as R's wilcox.test(exact = FALSE) and SciPy's 'asymptotic').
 * This is the fallback of mannWhitneyExact; exported so it can be checked on its own.
 */
export function mannWhitneyNormal(x: readonly number[], y: readonly number[]): MannWhitneyResult {
  assertFinite(x, 'x');
  assertFinite(y, 'y');
  const n = x.length;
  const m = y.length;
  if (n === 0 || m === 0) return { u: 0, p: 1, exact: false };
  const N = n + m;
  const { groups, rankSum2X } = rankPooled(x, y);
  const u = (rankSum2X - n * (n + 1)) / 2;
  const tieTerm = groups.reduce((acc, g) => acc + (g.size ** 3 - g.size), 0);
  const variance = ((n * m) / 12) * (N + 1 - tieTerm / (N * (N - 1)));
  if (!(variance > 0)) return { u, p: 1, exact: false };
  const d = u - (n * m) / 2;
  const z = (d - Math.sign(d) * 0.5) / Math.sqrt(variance);
  return { u, p: Math.min(1, 2 * normalCdf(-Math.abs(z))), exact: false };
}

/**
 * Hodges-Lehmann ratio of candidate y to baseline x (both positive): exp of the median of all
 * n·m differences log(y_j) − log(x_i), with the distribution-free interval
 * [D_(k), D_(nm+1−k)] (Bauer 1972; Hollander & Wolfe), where k is the largest value with
 * 2·P(U ≤ k−1) ≤ 1 − confidence under the no-ties U null distribution (as R's
 * wilcox.test(conf.int = TRUE)). `confidence` in the result is the achieved coverage
 * 1 − 2·P(U ≤ k−1) ≥ the requested one, except when even [min, max] (k = 1) falls short —
 * then that widest interval is returned with its lower achieved confidence, which is
 * 1 − minAttainableP(n, m). The construction assumes continuous data; with ties its level
 * is approximate (R warns likewise). Returns null if a side is empty or holds a non-positive or non-finite value.
 */
export function hodgesLehmannRatio(x: readonly number[], y: readonly number[], confidence = 0.95): RatioEstimate | null {
  if (!(confidence > 0 && confidence < 1)) {
    throw new RangeError(`hodgesLehmannRatio: confidence must be in (0, 1), got ${confidence}`);
  }
  const n = x.length;
  const m = y.length;
  if (n === 0 || m === 0) return null;
  const positive = (v: number) => v > 0 && Number.isFinite(v);
  if (!x.every(positive) || !y.every(positive)) return null;
  const logX = x.map(Math.log);
  const logY = y.map(Math.log);
  const nm = n * m;
  const diffs = new Float64Array(nm);
  for (let j = 0; j < m; j++) for (let i = 0; i < n; i++) diffs[j * n + i] = logY[j] - logX[i];
  diffs.sort();
  const cdf = uNullCdf(n, m);
  const alpha = 1 - confidence;
  // t = k − 1 order statistics trimmed from each end; t = 0 is the widest interval [min, max].
  let t = 0;
  const maxT = Math.floor((nm - 1) / 2);
  while (t < maxT && 2 * cdf(t + 1) <= alpha * (1 + 1e-12)) t++;
  return {
    ratio: Math.exp(sortedMedian(diffs)),
    low: Math.exp(diffs[t]),
    high: Math.exp(diffs[nm - 1 - t]),
    confidence: 1 - 2 * cdf(t),
  };
}

/**
 * Two-sided exact p of a statistic observed at `observed` under the null distribution given as
 * counts[s] = ways to reach s: min(1, 2·min(P(S ≤ observed), P(S ≥ observed))).
 */
export function twoSidedP(counts: Float64Array, observed: number): number {
  let lower = 0;
  let upper = 0;
  let total = 0;
  for (let s = 0; s < counts.length; s++) {
    const c = counts[s];
    if (c === 0) continue;
    total += c;
    if (s <= observed) lower += c;
    if (s >= observed) upper += c;
  }
  return Math.min(1, (2 * Math.min(lower, upper)) / total);
}

// ---------------------------------------------------------------------------------------
// Internals

/** rank2 = doubled midrank = 2·start + size + 1, start = 0-based index of the group's first item. */
type TieGroup = { size: number; rank2: number };

function sortedMedian(sorted: Float64Array): number {
  const len = sorted.length;
  if (len === 0) return NaN;
  const mid = len >> 1;
  return len % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function assertFinite(xs: readonly number[], name: string): void {
  const bad = xs.find((v) => !Number.isFinite(v));
  if (bad !== undefined) throw new RangeError(`mannWhitney: non-finite value in ${name}: ${bad}`);
}

/** Tie groups of the pooled sample and twice the midrank sum of x. */
function rankPooled(x: readonly number[], y: readonly number[]) {
  const pooled = [...x.map((v) => ({ v, fromX: true })), ...y.map((v) => ({ v, fromX: false }))];
  pooled.sort((a, b) => a.v - b.v);
  const groups: TieGroup[] = [];
  let rankSum2X = 0;
  for (let start = 0; start < pooled.length; ) {
    let end = start;
    let inX = 0;
    while (end < pooled.length && pooled[end].v === pooled[start].v) {
      if (pooled[end].fromX) inX++;
      end++;
    }
    const g = { size: end - start, rank2: 2 * start + (end - start) + 1 };
    groups.push(g);
    rankSum2X += inX * g.rank2;
    start = end;
  }
  return { groups, rankSum2X };
}

/**
 * counts[s] = number of ways to choose k of the pooled items whose doubled ranks sum to s
 * (choosing c of a group of size t contributes C(t, c) ways and c·rank2). null when too costly.
 */
function rankSumCounts(groups: readonly TieGroup[], k: number): Float64Array | null {
  const N = groups.reduce((acc, g) => acc + g.size, 0);
  const maxS = 2 * k * N;
  if (N * k * maxS > EXACT_WORK_LIMIT) return null;
  const dp = Array.from({ length: k + 1 }, () => new Float64Array(maxS + 1));
  dp[0][0] = 1;
  let reach = 0;
  for (const { size, rank2 } of groups) {
    reach = Math.min(maxS, reach + Math.min(size, k) * rank2);
    // Descending j: rows j − c (c ≥ 1) still hold the counts from before this group.
    for (let j = k; j >= 1; j--) {
      const dst = dp[j];
      for (let c = 1; c <= Math.min(size, j); c++) {
        const w = binomial(size, c);
        const off = c * rank2;
        const src = dp[j - c];
        for (let s = off; s <= reach; s++) dst[s] += w * src[s - off];
      }
    }
  }
  return dp[k];
}

/** q ↦ P(U ≤ q) under H0 without ties, for sample sizes n and m. */
function uNullCdf(n: number, m: number): (q: number) => number {
  const nm = n * m;
  const k = Math.min(n, m);
  const groups = Array.from({ length: n + m }, (_, i) => ({ size: 1, rank2: 2 * (i + 1) }));
  const counts = rankSumCounts(groups, k);
  if (counts === null) {
    const sd = Math.sqrt((nm * (n + m + 1)) / 12);
    return (q) => normalCdf((Math.floor(q) + 0.5 - nm / 2) / sd);
  }
  const cumulative = new Float64Array(nm + 1);
  const base = k * (k + 1); // doubled rank sum when U = 0
  let total = 0;
  for (let u = 0; u <= nm; u++) {
    total += counts[base + 2 * u];
    cumulative[u] = total;
  }
  return (q) => (q < 0 ? 0 : q >= nm ? 1 : cumulative[Math.floor(q)] / total);
}

/** C(n, k) as a double; each partial product is itself a binomial coefficient. */
function binomial(n: number, k: number): number {
  const kk = Math.min(k, n - k);
  let r = 1;
  for (let i = 1; i <= kk; i++) r = (r * (n - kk + i)) / i;
  return r < 2 ** 53 ? Math.round(r) : r;
}

/** Standard normal CDF via erfc (Numerical Recipes erfcc; relative error < 1.2e-7). */
function normalCdf(z: number): number {
  const a = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.5 * a);
  const poly = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  const erfc = t * Math.exp(-a * a + poly);
  return z >= 0 ? 1 - erfc / 2 : erfc / 2;
}
