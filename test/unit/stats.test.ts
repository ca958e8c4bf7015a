// Tests for src/compare/stats.ts and src/compare/holm.ts. Reference values come from published
// sources (R and SciPy documentation examples, textbook critical-value tables, the Holm
// example from the literature) or from a brute-force enumeration of all C(n+m, n) splits
// written here independently of the dynamic programme under test.
import { describe, expect, it } from 'vitest';
import { holm } from '../../src/compare/holm';
import { rng } from '../../src/plan/plan';
import { hodgesLehmannRatio, mannWhitneyExact, mannWhitneyNormal, median, minAttainableP } from '../../src/compare/stats';

// --- independent reference implementation ------------------------------------------------

/** U for a: pairs with a_i > b_j, ties counting 1/2 (no ranks involved). */
function pairwiseU(a: number[], b: number[]): number {
  let u = 0;
  for (const p of a) for (const q of b) u += p > q ? 1 : p === q ? 0.5 : 0;
  return u;
}

/** All k-subsets of {0..n-1}. */
function* subsets(n: number, k: number, start = 0, acc: number[] = []): Generator<number[]> {
  if (acc.length === k) {
    yield acc;
    return;
  }
  for (let i = start; i <= n - (k - acc.length); i++) yield* subsets(n, k, i + 1, [...acc, i]);
}

/** Exact two-sided permutation p by enumerating every relabelling of the pooled sample. */
function bruteForce(x: number[], y: number[]): { u: number; p: number; uCounts: Map<number, number> } {
  const pooled = [...x, ...y];
  const u0 = pairwiseU(x, y);
  let lower = 0;
  let upper = 0;
  let total = 0;
  const uCounts = new Map<number, number>();
  for (const idx of subsets(pooled.length, x.length)) {
    const chosen = new Set(idx);
    const a = idx.map((i) => pooled[i]);
    const b = pooled.filter((_, i) => !chosen.has(i));
    const u = pairwiseU(a, b);
    uCounts.set(u, (uCounts.get(u) ?? 0) + 1);
    total++;
    if (u <= u0) lower++;
    if (u >= u0) upper++;
  }
  return { u: u0, p: Math.min(1, (2 * Math.min(lower, upper)) / total), uCounts };
}

/** Sample of size n (in x) and m (in y) with exactly U = u (u ≤ m·n spread over x's). */
function sampleWithU(n: number, m: number, u: number): { x: number[]; y: number[] } {
  const y = Array.from({ length: m }, (_, j) => j + 1);
  // x_i sits above a_i of the y values; a is non-decreasing, each ≤ m, sum = u.
  const a = new Array<number>(n).fill(0);
  let left = u;
  for (let i = n - 1; i >= 0 && left > 0; i--) {
    a[i] = Math.min(m, left);
    left -= a[i];
  }
  const x = a.map((ai, i) => ai + 0.5 + i * 0.001);
  return { x, y };
}

// --- median / minAttainableP ----------------------------------------------------------------

describe('median', () => {
  it('handles odd, even and empty inputs without mutating the input', () => {
    const xs = [3, 1, 2];
    expect(median(xs)).toBe(2);
    expect(xs).toEqual([3, 1, 2]);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
    expect(median([])).toBeNaN();
  });
});

describe('minAttainableP', () => {
  it('equals 2 / C(n+m, n) (complete separation)', () => {
    expect(minAttainableP(5, 5)).toBeCloseTo(2 / 252, 12); // 0.0079365
    expect(minAttainableP(5, 5)).toBeCloseTo(0.00794, 5);
    expect(minAttainableP(4, 4)).toBeCloseTo(2 / 70, 12); // 0.02857
    expect(minAttainableP(6, 6)).toBeCloseTo(2 / 924, 12); // 0.0021645
    expect(minAttainableP(3, 7)).toBeCloseTo(2 / 120, 12);
    expect(minAttainableP(7, 3)).toBeCloseTo(2 / 120, 12);
  });

  it('matches the benchstat figures quoted in the statistics reference (section 2)', () => {
    expect(minAttainableP(4, 4)).toBeCloseTo(0.029, 3);
    expect(minAttainableP(5, 5)).toBeCloseTo(0.0079, 4);
    expect(minAttainableP(6, 6)).toBeCloseTo(0.0022, 4);
  });

  it('supports the sample-size rule of section 5: n ≥ 7 for ≤17 tests, n ≥ 8 for ≤64 at α = 0.01', () => {
    expect(minAttainableP(7, 7)).toBeLessThan(0.01 / 17);
    expect(minAttainableP(6, 6)).toBeGreaterThan(0.01 / 17);
    expect(minAttainableP(8, 8)).toBeLessThan(0.01 / 64);
    expect(minAttainableP(7, 7)).toBeGreaterThan(0.01 / 64);
  });

  it('is 1 for empty sides and tiny samples, and rejects bad sizes', () => {
    expect(minAttainableP(0, 5)).toBe(1);
    expect(minAttainableP(5, 0)).toBe(1);
    expect(minAttainableP(1, 1)).toBe(1); // 2 / C(2,1) = 1
    expect(minAttainableP(1, 2)).toBeCloseTo(2 / 3, 12);
    expect(() => minAttainableP(-1, 3)).toThrow(RangeError);
    expect(() => minAttainableP(2.5, 3)).toThrow(RangeError);
  });
});

// --- Mann-Whitney -------------------------------------------------------------------------

describe('mannWhitneyExact', () => {
  it('gives 2 / C(n+m, n) for complete separation (n = m = 4, 5, 6)', () => {
    const cases: Array<[number, number]> = [
      [4, 2 / 70],
      [5, 2 / 252],
      [6, 2 / 924],
    ];
    for (const [n, expected] of cases) {
      const low = Array.from({ length: n }, (_, i) => i + 1);
      const high = low.map((v) => v + 100);
      const below = mannWhitneyExact(low, high);
      expect(below).toEqual({ u: 0, p: expect.closeTo(expected, 12), exact: true });
      const above = mannWhitneyExact(high, low);
      expect(above.u).toBe(n * n);
      expect(above.p).toBeCloseTo(expected, 12);
    }
  });

  it('reproduces R ?wilcox.test / Hollander & Wolfe permeability example (W = 35)', () => {
    // R: wilcox.test(x, y, alternative = "g") → W = 35, p-value = 0.1272; two-sided is twice that.
    const x = [0.8, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46];
    const y = [1.15, 0.88, 0.9, 0.74, 1.21];
    const r = mannWhitneyExact(x, y);
    expect(r.u).toBe(35);
    expect(r.exact).toBe(true);
    expect(r.p).toBeCloseTo(2 * 0.1272, 3);
    expect(r.p).toBeCloseTo(0.2544122544, 9); // SciPy mannwhitneyu(x, y, method='exact')
  });

  it("reproduces SciPy's mannwhitneyu documentation example (U1 = 17, p = 1/9)", () => {
    const males = [19, 22, 16, 29, 24];
    const females = [20, 11, 17, 12];
    const r = mannWhitneyExact(males, females);
    expect(r.u).toBe(17);
    expect(r.p).toBeCloseTo(0.1111111111111111, 12);
    expect(r.exact).toBe(true);
  });

  it('agrees with textbook two-sided α = 0.05 critical values of U', () => {
    // Critical U (reject when U ≤ crit): n1 = n2 = 5 → 2, 6 → 5, 7 → 8, 8 → 13, 10 → 23,
    // 20 → 127; n1 = 5, n2 = 10 → 8.
    const table: Array<[number, number, number]> = [
      [5, 5, 2],
      [6, 6, 5],
      [7, 7, 8],
      [8, 8, 13],
      [10, 10, 23],
      [20, 20, 127],
      [5, 10, 8],
    ];
    for (const [n, m, crit] of table) {
      const at = sampleWithU(n, m, crit);
      const above = sampleWithU(n, m, crit + 1);
      expect(mannWhitneyExact(at.x, at.y).u).toBe(crit);
      expect(mannWhitneyExact(at.x, at.y).p).toBeLessThanOrEqual(0.05);
      expect(mannWhitneyExact(above.x, above.y).p).toBeGreaterThan(0.05);
    }
  });

  it('handles ties exactly: hand-enumerated x = [1, 2], y = [2, 3]', () => {
    // Pooled midranks 1, 2.5, 2.5, 4. The 6 choices of x's ranks give rank sums
    // 3.5, 3.5, 5, 5, 6.5, 6.5; observed 3.5 (U = 0.5). P(≤) = 2/6, P(≥) = 6/6 → p = 4/6.
    const r = mannWhitneyExact([1, 2], [2, 3]);
    expect(r).toEqual({ u: 0.5, p: expect.closeTo(2 / 3, 12), exact: true });
  });

  it('matches brute-force enumeration without ties (random samples, sizes up to 6 + 7)', () => {
    const rand = rng(1);
    for (let trial = 0; trial < 40; trial++) {
      const n = 1 + Math.floor(rand() * 6);
      const m = 1 + Math.floor(rand() * 7);
      const shift = rand() * 2;
      const x = Array.from({ length: n }, () => rand());
      const y = Array.from({ length: m }, () => rand() + shift);
      const ref = bruteForce(x, y);
      const r = mannWhitneyExact(x, y);
      expect(r.u).toBe(ref.u);
      expect(r.p).toBeCloseTo(ref.p, 12);
      expect(r.exact).toBe(true);
    }
  });

  it('matches brute-force enumeration with heavy ties (exact conditional distribution)', () => {
    const rand = rng(2);
    for (let trial = 0; trial < 40; trial++) {
      const n = 1 + Math.floor(rand() * 6);
      const m = 1 + Math.floor(rand() * 6);
      const x = Array.from({ length: n }, () => 1 + Math.floor(rand() * 4));
      const y = Array.from({ length: m }, () => 1 + Math.floor(rand() * 4) + (rand() < 0.5 ? 1 : 0));
      const ref = bruteForce(x, y);
      const r = mannWhitneyExact(x, y);
      expect(r.u).toBe(ref.u);
      expect(r.p).toBeCloseTo(ref.p, 12);
      expect(r.exact).toBe(true);
    }
  });

  it('is symmetric in its arguments: same p, U swapped to nm − U', () => {
    const x = [1, 2, 2, 3, 5];
    const y = [2, 3, 3, 4, 6, 6];
    const a = mannWhitneyExact(x, y);
    const b = mannWhitneyExact(y, x);
    expect(b.p).toBeCloseTo(a.p, 12);
    expect(b.u).toBe(30 - a.u);
    expect(a.p).toBeCloseTo(bruteForce(x, y).p, 12);
  });

  it('gives p = 1 for all-equal values, identical samples and n = 1 each', () => {
    expect(mannWhitneyExact([3, 3, 3], [3, 3])).toEqual({ u: 3, p: 1, exact: true });
    expect(mannWhitneyExact([1, 2, 3], [1, 2, 3])).toEqual({ u: 4.5, p: 1, exact: true });
    const same = [10.5, 11.2, 9.8, 10.1, 10.9];
    expect(mannWhitneyExact(same, [...same]).p).toBe(1);
    expect(mannWhitneyExact([1], [2])).toEqual({ u: 0, p: 1, exact: true });
    expect(mannWhitneyExact([2], [1])).toEqual({ u: 1, p: 1, exact: true });
    expect(mannWhitneyExact([5], [5])).toEqual({ u: 0.5, p: 1, exact: true });
    // n = 1 against 9: the best possible is 2 / C(10, 1) = 0.2.
    expect(mannWhitneyExact([0], [1, 2, 3, 4, 5, 6, 7, 8, 9]).p).toBeCloseTo(0.2, 12);
  });

  it('returns p = 1 (exact, U = 0) when a side is empty', () => {
    expect(mannWhitneyExact([], [1, 2, 3])).toEqual({ u: 0, p: 1, exact: true });
    expect(mannWhitneyExact([1, 2, 3], [])).toEqual({ u: 0, p: 1, exact: true });
    expect(mannWhitneyExact([], [])).toEqual({ u: 0, p: 1, exact: true });
  });

  it('rejects non-finite values', () => {
    expect(() => mannWhitneyExact([1, NaN], [2])).toThrow(RangeError);
    expect(() => mannWhitneyExact([1], [Infinity])).toThrow(RangeError);
  });

  it('stays exact for n = m = 50 with ties, and is close to the normal approximation there', () => {
    const rand = rng(3);
    const x = Array.from({ length: 50 }, () => Math.floor(rand() * 20));
    const y = Array.from({ length: 50 }, () => Math.floor(rand() * 20) + 2);
    const r = mannWhitneyExact(x, y);
    expect(r.exact).toBe(true);
    expect(r.u).toBe(pairwiseU(x, y));
    expect(Math.abs(r.p - mannWhitneyNormal(x, y).p)).toBeLessThan(0.01);
  });

  it('falls back to the normal approximation for large samples', () => {
    const rand = rng(4);
    const x = Array.from({ length: 150 }, () => Math.floor(rand() * 30));
    const y = Array.from({ length: 150 }, () => Math.floor(rand() * 30) + 1);
    const r = mannWhitneyExact(x, y);
    expect(r.exact).toBe(false);
    expect(r.u).toBe(pairwiseU(x, y));
    expect(r.p).toBe(mannWhitneyNormal(x, y).p);
  });
});

describe('mannWhitneyNormal', () => {
  it("reproduces SciPy's documented asymptotic p for the males/females example", () => {
    // SciPy docs: mannwhitneyu(males, females, method="asymptotic") → p = 0.11134688653314041
    const r = mannWhitneyNormal([19, 22, 16, 29, 24], [20, 11, 17, 12]);
    expect(r.u).toBe(17);
    expect(r.p).toBeCloseTo(0.11134688653314041, 6);
    expect(r.exact).toBe(false);
  });

  it('applies the tie correction to the variance (hand computation)', () => {
    // x = [1, 2, 2, 3, 5], y = [2, 3, 3, 4, 6, 6]; N = 11, U = 7, nm/2 = 15.
    // Tie groups of size 3 ("2"), 3 ("3"), 2 ("6"): Σ(t³ − t) = 24 + 24 + 6 = 54.
    // σ² = 30/12 · (12 − 54/110) = 28.7727…; z = (7 − 15 + 0.5)/σ = −1.39819…
    // p = 2Φ(−1.39819) = 0.16205 (SciPy method='asymptotic' prints 0.1620516143696369).
    const r = mannWhitneyNormal([1, 2, 2, 3, 5], [2, 3, 3, 4, 6, 6]);
    expect(r.u).toBe(7);
    expect(r.p).toBeCloseTo(0.1620516143696369, 6);
  });

  it('gives p = 1 for all-equal values (zero variance) and empty sides', () => {
    expect(mannWhitneyNormal([2, 2, 2], [2, 2]).p).toBe(1);
    expect(mannWhitneyNormal([], [1]).p).toBe(1);
  });
});

// --- Hodges-Lehmann ratio -------------------------------------------------------------------

describe('hodgesLehmannRatio', () => {
  it("reproduces R's wilcox.test(x, y, conf.int = TRUE) on the permeability example (via logs)", () => {
    // R: estimate (difference in location) = 0.305; 95% CI = [diffs[9], diffs[42]] with
    // qu = qwilcox(0.025, 10, 5) = 9, i.e. [-0.15, 0.76]; achieved level 1 − 2·P(W ≤ 8)
    // = 1 − 2·60/3003 = 0.96004 (the count 60 is checked by brute-force enumeration below).
    const x = [0.8, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46];
    const y = [1.15, 0.88, 0.9, 0.74, 1.21];
    // Our differences are log(candidate) − log(baseline); R's are x − y.
    const r = hodgesLehmannRatio(y.map(Math.exp), x.map(Math.exp));
    expect(r).not.toBeNull();
    expect(Math.log(r!.ratio)).toBeCloseTo(0.305, 10);
    expect(Math.log(r!.low)).toBeCloseTo(-0.15, 10);
    expect(Math.log(r!.high)).toBeCloseTo(0.76, 10);
    expect(r!.confidence).toBeCloseTo(1 - 120 / 3003, 12);
    let atMost8 = 0;
    for (const [u, c] of bruteForce([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [11, 12, 13, 14, 15]).uCounts) {
      if (u <= 8) atMost8 += c;
    }
    expect(atMost8).toBe(60);
  });

  it('returns ratio 1.2 with CI [1.2, 1.2] when every ratio is exactly 1.2', () => {
    const r = hodgesLehmannRatio([100, 100, 100, 100, 100, 100], [120, 120, 120, 120, 120, 120])!;
    expect(r.ratio).toBeCloseTo(1.2, 12);
    expect(r.low).toBeCloseTo(1.2, 12);
    expect(r.high).toBeCloseTo(1.2, 12);
    expect(r.confidence).toBeGreaterThanOrEqual(0.95);
  });

  it('returns ratio 1.2 with a CI symmetric (in logs) around it when y = 1.2·x exactly', () => {
    // The differences are log 1.2 + log(x_j / x_i): symmetric about log 1.2 but not constant,
    // so the interval is not degenerate unless x is constant; low · high = 1.2².
    const x = [100, 103, 98, 110, 95, 101, 99, 104, 97, 102];
    const r = hodgesLehmannRatio(
      x,
      x.map((v) => v * 1.2),
    )!;
    expect(r.ratio).toBeCloseTo(1.2, 12);
    expect(r.low).toBeLessThan(1.2);
    expect(r.high).toBeGreaterThan(1.2);
    expect(r.low * r.high).toBeCloseTo(1.44, 12);
    expect(r.confidence).toBeGreaterThanOrEqual(0.95);
  });

  it('uses the table critical value for n = m = 5 (k = 3, achieved 1 − 8/252)', () => {
    // Critical U = 2 → CI = [D(3), D(23)] of the 25 sorted differences.
    const x = [1, 2, 3, 4, 5];
    const y = [10, 20, 30, 40, 50];
    const r = hodgesLehmannRatio(x, y)!;
    const logs = x.flatMap((a) => y.map((b) => Math.log(b) - Math.log(a))).sort((a, b) => a - b);
    expect(r.low).toBeCloseTo(Math.exp(logs[2]), 12);
    expect(r.high).toBeCloseTo(Math.exp(logs[22]), 12);
    expect(r.ratio).toBeCloseTo(Math.exp(logs[12]), 12);
    expect(r.confidence).toBeCloseTo(1 - 8 / 252, 12);
  });

  it('matches the brute-force U distribution: largest k whose level reaches the request', () => {
    const rand = rng(5);
    for (const [n, m] of [
      [3, 4],
      [5, 5],
      [4, 7],
      [6, 6],
    ] as const) {
      const counts = bruteForce(
        Array.from({ length: n }, (_, i) => i),
        Array.from({ length: m }, (_, j) => n + j),
      ).uCounts;
      const total = [...counts.values()].reduce((a, b) => a + b, 0);
      const cdf = (q: number) => [...counts].reduce((a, [u, c]) => a + (u <= q ? c : 0), 0) / total;
      for (const conf of [0.8, 0.9, 0.95, 0.99]) {
        const x = Array.from({ length: n }, () => 1 + rand());
        const y = Array.from({ length: m }, () => 1 + rand());
        const r = hodgesLehmannRatio(x, y, conf)!;
        const logs = x.flatMap((a) => y.map((b) => Math.log(b) - Math.log(a))).sort((a, b) => a - b);
        let t = 0; // trimmed from each end
        while (2 * cdf(t + 1) <= 1 - conf) t++;
        expect(r.confidence).toBeCloseTo(1 - 2 * cdf(t), 12);
        expect(r.low).toBeCloseTo(Math.exp(logs[t]), 12);
        expect(r.high).toBeCloseTo(Math.exp(logs[n * m - 1 - t]), 12);
      }
    }
  });

  it('keeps low ≤ ratio ≤ high and achieved ≥ requested confidence whenever attainable', () => {
    const rand = rng(6);
    for (let trial = 0; trial < 60; trial++) {
      const n = 1 + Math.floor(rand() * 12);
      const m = 1 + Math.floor(rand() * 12);
      const conf = [0.8, 0.9, 0.95, 0.99][trial % 4];
      const x = Array.from({ length: n }, () => Math.exp(rand()));
      const y = Array.from({ length: m }, () => Math.exp(rand() + 0.2));
      const r = hodgesLehmannRatio(x, y, conf)!;
      expect(r.low).toBeLessThanOrEqual(r.ratio);
      expect(r.ratio).toBeLessThanOrEqual(r.high);
      const widest = 1 - minAttainableP(n, m);
      if (widest >= conf) expect(r.confidence).toBeGreaterThanOrEqual(conf);
      else expect(r.confidence).toBeCloseTo(widest, 12);
    }
  });

  it('returns the widest interval with its lower achieved confidence for tiny samples', () => {
    // n = m = 2: the best level is 1 − 2/C(4,2) = 2/3 < 0.95, so CI = [min, max] of ratios.
    const r = hodgesLehmannRatio([10, 20], [11, 30])!;
    expect(r.confidence).toBeCloseTo(2 / 3, 12);
    expect(r.low).toBeCloseTo(11 / 20, 12);
    expect(r.high).toBeCloseTo(30 / 10, 12);
    // n = m = 1: a single ratio, achieved confidence 0.
    const one = hodgesLehmannRatio([4], [5])!;
    expect(one.ratio).toBeCloseTo(1.25, 12);
    expect(one.low).toBeCloseTo(1.25, 12);
    expect(one.high).toBeCloseTo(1.25, 12);
    expect(one.confidence).toBeCloseTo(0, 12);
  });

  it('gives ratio 1 for identical samples', () => {
    const x = [5, 6, 7, 8, 9, 10];
    const r = hodgesLehmannRatio(x, [...x])!;
    expect(r.ratio).toBeCloseTo(1, 12);
    expect(r.low).toBeLessThan(1);
    expect(r.high).toBeGreaterThan(1);
  });

  it('covers the true ratio at about the achieved rate (seeded simulation, true ratio 1.1)', () => {
    const rand = rng(7);
    const normal = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
    let covered = 0;
    const reps = 2000;
    let level = 0;
    for (let i = 0; i < reps; i++) {
      const x = Array.from({ length: 8 }, () => 100 * Math.exp(0.05 * normal()));
      const y = Array.from({ length: 8 }, () => 110 * Math.exp(0.05 * normal()));
      const r = hodgesLehmannRatio(x, y)!;
      level = r.confidence;
      if (r.low <= 1.1 && 1.1 <= r.high) covered++;
    }
    expect(level).toBeGreaterThanOrEqual(0.95);
    // Binomial sd at 0.95 over 2000 reps is ≈ 0.005; allow 3 sd below the achieved level.
    expect(covered / reps).toBeGreaterThan(level - 0.015);
  });

  it('returns null for empty sides and non-positive or non-finite values', () => {
    expect(hodgesLehmannRatio([], [1])).toBeNull();
    expect(hodgesLehmannRatio([1], [])).toBeNull();
    expect(hodgesLehmannRatio([1, 0], [1])).toBeNull();
    expect(hodgesLehmannRatio([1], [-2])).toBeNull();
    expect(hodgesLehmannRatio([1, NaN], [1])).toBeNull();
    expect(hodgesLehmannRatio([1], [Infinity])).toBeNull();
  });

  it('rejects a confidence outside (0, 1)', () => {
    expect(() => hodgesLehmannRatio([1], [2], 1)).toThrow(RangeError);
    expect(() => hodgesLehmannRatio([1], [2], 0)).toThrow(RangeError);
  });
});

// --- Holm -----------------------------------------------------------------------------------

describe('holm', () => {
  it('reproduces the textbook example p = [0.01, 0.04, 0.03, 0.005]', () => {
    const adj = holm([0.01, 0.04, 0.03, 0.005]);
    const expected = [0.03, 0.06, 0.06, 0.02];
    adj.forEach((v, i) => {
      expect(v).toBeCloseTo(expected[i], 12);
    });
  });

  it('enforces monotonicity (hand-computed like R p.adjust(p, "holm"))', () => {
    // Sorted p·(5,4,3,2,1) = 0.05, 0.08, 0.09, 0.08, 0.05 → running max 0.05, 0.08, 0.09, 0.09, 0.09.
    const adj = holm([0.05, 0.01, 0.04, 0.02, 0.03]);
    const expected = [0.09, 0.05, 0.09, 0.08, 0.09];
    adj.forEach((v, i) => {
      expect(v).toBeCloseTo(expected[i], 12);
    });
  });

  it('caps at 1 and handles trivial inputs', () => {
    expect(holm([0.5, 0.6])).toEqual([1, 1]);
    expect(holm([0.2])).toEqual([0.2]);
    expect(holm([])).toEqual([]);
    expect(holm([0, 1])).toEqual([0, 1]);
  });

  it('rejects values outside [0, 1]', () => {
    expect(() => holm([0.1, 1.5])).toThrow(RangeError);
    expect(() => holm([NaN])).toThrow(RangeError);
  });
});
