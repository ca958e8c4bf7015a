// Change points in a series of nightly results: E-divisive means (Matteson & James, "A
// Nonparametric Approach for Multiple Change Point Analysis of Multivariate Data", JASA 2014), the
// detector Apache Otava (formerly Hunter, MongoDB's signal-processing-algorithms before it) runs
// over performance histories. Pure: numbers in, change points out; the caller says which series.
//
// The statistic: for a split of a segment into a left part X (m points) and a right part Y (n
// points), the energy distance between them scaled by mn/(m+n),
//   Q = mn/(m+n) · ( 2/(mn)·Σ|x−y| − 1/C(m,2)·Σ_{i<k}|x_i−x_k| − 1/C(n,2)·Σ_{j<l}|y_j−y_l| ),
// which is large when the two parts differ in distribution (exponent 1: in mean and more). The
// segment's best split maximises Q over τ with the right part running to the segment's end, as
// MongoDB's signal-processing-algorithms and Otava compute it; the paper also searches that end κ
// (option `kappa`), which finds a dip that recovers inside a long segment, but its larger null
// maximum costs power where nightly steps are new — at the series' end: a −5 % step three nights
// before the end of 33 at σ = 1 % is found 100 % of the time with κ at the end, 68 % with κ
// searched (bench/changepoint.mjs). Run night by night, each edge of a dip is at the end when it
// is new, and is found then. Hierarchically: the best split over all current segments is kept when
// a permutation test says it is no accident — the values are shuffled within each current segment
// (seeded, so the same series always gives the same answer), the best Q recomputed, and the
// p-value is (1 + shuffles reaching the observed Q) / (1 + shuffles) — then each part is searched
// again, until a split is not significant. A kept split is reported as a step only when its
// magnitude (the mean after over the mean before, adjacent segments) reaches a minimum: a step of
// 0.5 % can be real and still not worth anyone's evening.
import { rng } from '../plan/plan';

export interface ChangePointOptions {
  /** A split is kept when its permutation p-value is at most this (default 0.001). */
  pValue?: number;
  /** Shuffles per test (default 9999). 999 is the fewest at which p ≤ 0.001 is reachable at all,
   *  but then a single shuffle reaching the observed Q rejects, and a step whose exact p is
   *  0.0004 (three nights after it in a history of thirty) is missed a third of the time; with
   *  9999 up to nine may, and it is found. */
  permutations?: number;
  /** Fewest points on each side of a split (default 3). */
  minSize?: number;
  /** Smallest |mean after / mean before − 1| reported as a step (default 0.03). */
  minMagnitude?: number;
  /** Seed of the shuffles (default fixed): the same series gives the same answer. */
  seed?: number;
  /** Search the right part's end κ too (Matteson & James), not only the segment's end (default
   *  false, as signal-processing-algorithms and Otava): see the module comment for the trade. */
  kappa?: boolean;
}

export const CHANGE_DEFAULTS = { pValue: 0.001, permutations: 9999, minSize: 3, minMagnitude: 0.03, seed: 20140101, kappa: false } as const;

export interface ChangePoint {
  /** Index of the first point after the step. */
  index: number;
  pValue: number;
  /** Means of the adjacent segments, and their bounds [from, to). */
  before: { from: number; to: number; mean: number };
  after: { from: number; to: number; mean: number };
  /** after.mean / before.mean − 1. */
  magnitude: number;
}

export interface ChangePointResult {
  /** The steps: significant splits whose magnitude reaches the minimum, in series order. */
  points: ChangePoint[];
  /** Every significant split (including those below the minimum magnitude), sorted. */
  splits: number[];
}

/** Scratch space (sums per point, or column prefix sums), grown as needed. */
let leftSums = new Float64Array(64);
let rightSums = new Float64Array(64);
let prefix = new Float64Array(64 * 65);

/** The best split of v[from..to) by Q with κ at the segment's end, as an absolute index, or
 *  undefined when the segment is shorter than 2·minSize. O(L²). */
function bestSplitToEnd(v: ArrayLike<number>, from: number, to: number, minSize: number): { at: number; q: number } | undefined {
  const L = to - from;
  if (L < 2 * minSize) return undefined;
  if (leftSums.length < L) {
    leftSums = new Float64Array(2 * L);
    rightSums = new Float64Array(2 * L);
  }
  // left[t] = Σ_{i<t} |v_i − v_t|, right[t] = Σ_{j>t} |v_t − v_j| (relative to `from`).
  const left = leftSums;
  const right = rightSums;
  left.fill(0, 0, L);
  let all = 0;
  for (let i = 0; i < L; i++) {
    const vi = v[from + i];
    let r = 0;
    for (let j = i + 1; j < L; j++) {
      const d = Math.abs(vi - v[from + j]);
      left[j] += d;
      r += d;
    }
    right[i] = r;
    all += r;
  }
  let within = 0; // Σ over pairs inside [0, t)
  let withinRight = all; // Σ over pairs inside [t, L)
  let best: { at: number; q: number } | undefined;
  for (let t = 1; t < L; t++) {
    within += left[t - 1];
    withinRight -= right[t - 1];
    const m = t;
    const n = L - t;
    if (m < minSize || n < minSize) continue;
    const between = all - within - withinRight;
    const e = (2 * between) / (m * n) - within / ((m * (m - 1)) / 2) - withinRight / ((n * (n - 1)) / 2);
    const q = ((m * n) / (m + n)) * e;
    if (!best || q > best.q) best = { at: from + t, q };
  }
  return best;
}

/**
 * The best split of v[from..to) by Q over τ and κ: X = [from, τ), Y = [τ, κ), from + minSize ≤ τ,
 * τ + minSize ≤ κ ≤ to (the paper's κ, which also finds a dip followed by a recovery inside one
 * segment). O(L²) with column prefix sums P[j][i] = Σ_{i' < i} |v_i' − v_j|.
 */
function bestSplitKappa(v: ArrayLike<number>, from: number, to: number, minSize: number): { at: number; q: number } | undefined {
  const L = to - from;
  if (L < 2 * minSize) return undefined;
  const W = L + 1;
  if (prefix.length < L * W) prefix = new Float64Array(2 * L * W);
  const P = prefix;
  for (let j = 0; j < L; j++) {
    const vj = v[from + j];
    const row = j * W;
    P[row] = 0;
    for (let i = 0; i < L; i++) P[row + i + 1] = P[row + i] + Math.abs(v[from + i] - vj);
  }
  let best: { at: number; q: number } | undefined;
  let within = 0; // Σ over pairs inside X = [0, τ)
  for (let t = 1; t <= L - minSize; t++) {
    within += P[(t - 1) * W + (t - 1)];
    const m = t;
    if (m < minSize) continue;
    const wx = within / ((m * (m - 1)) / 2);
    let between = 0; // Σ over X × Y
    let withinY = 0; // Σ over pairs inside Y = [τ, κ)
    for (let k = t; k < L; k++) {
      const row = k * W; // Y grows by point k
      between += P[row + t];
      withinY += P[row + k] - P[row + t];
      const n = k + 1 - t;
      if (n < minSize) continue;
      const e = (2 * between) / (m * n) - wx - withinY / ((n * (n - 1)) / 2);
      const q = ((m * n) / (m + n)) * e;
      if (!best || q > best.q) best = { at: from + t, q };
    }
  }
  return best;
}

/** The best split over the segments bounded by `cuts` (sorted, 0 and n included). */
function bestOver(values: ArrayLike<number>, cuts: number[], minSize: number, kappa: boolean): { at: number; q: number } | undefined {
  let best: { at: number; q: number } | undefined;
  const split = kappa ? bestSplitKappa : bestSplitToEnd;
  for (let k = 0; k + 1 < cuts.length; k++) {
    const s = split(values, cuts[k], cuts[k + 1], minSize);
    if (s && (!best || s.q > best.q)) best = s;
  }
  return best;
}

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * E-divisive means over a series of finite numbers. Splits are tested one at a time, the most
 * pronounced first; each permutation test stops as soon as its p-value can no longer reach the
 * level (at p ≤ 0.001 with 9999 shuffles: at the tenth shuffle reaching the observed Q), so a
 * series without a step costs a few dozen shuffles.
 */
export function eDivisive(series: readonly number[], options: ChangePointOptions = {}): ChangePointResult {
  const o = { ...CHANGE_DEFAULTS, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) };
  if (series.some((x) => !Number.isFinite(x))) throw new Error('eDivisive: the series holds a value that is not a finite number');
  const n = series.length;
  const cuts = [0, n];
  const pValues = new Map<number, number>();
  const random = rng(o.seed);
  // At most this many shuffles may reach the observed Q for p ≤ level.
  const allowed = Math.floor(o.pValue * (o.permutations + 1) - 1 + 1e-9);
  const work = Float64Array.from(series);
  for (;;) {
    const best = bestOver(series, cuts, o.minSize, o.kappa);
    if (!best || !(best.q > 0)) break;
    let reached = 0;
    for (let r = 0; r < o.permutations && reached <= allowed; r++) {
      for (let k = 0; k + 1 < cuts.length; k++) {
        // Fisher-Yates within each segment.
        for (let i = cuts[k + 1] - 1; i > cuts[k]; i--) {
          const j = cuts[k] + Math.floor(random() * (i - cuts[k] + 1));
          const t = work[i];
          work[i] = work[j];
          work[j] = t;
        }
      }
      const shuffled = bestOver(work, cuts, o.minSize, o.kappa);
      if (shuffled && shuffled.q >= best.q) reached++;
    }
    const p = (1 + reached) / (1 + o.permutations);
    if (reached > allowed || p > o.pValue) break;
    pValues.set(best.at, p);
    cuts.push(best.at);
    cuts.sort((a, b) => a - b);
    // Shuffles start from the series each round (the segments changed).
    work.set(series);
  }
  const splits = cuts.slice(1, -1);
  const points: ChangePoint[] = [];
  for (let k = 1; k + 1 < cuts.length; k++) {
    const before = { from: cuts[k - 1], to: cuts[k], mean: mean(series.slice(cuts[k - 1], cuts[k])) };
    const after = { from: cuts[k], to: cuts[k + 1], mean: mean(series.slice(cuts[k], cuts[k + 1])) };
    const magnitude = after.mean / before.mean - 1;
    if (Number.isFinite(magnitude) && Math.abs(magnitude) >= o.minMagnitude) {
      points.push({ index: cuts[k], pValue: pValues.get(cuts[k])!, before, after, magnitude });
    }
  }
  return { points, splits };
}
