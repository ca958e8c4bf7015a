// The paired statistics (src/compare/paired.ts) against published reference values (R's
// wilcox.test documentation example, Hollander & Wolfe) and brute-force enumeration of all 2^n
// sign patterns: exact p with and without ties, zeros dropped, the Walsh-average interval's
// order statistics and achieved confidence, and the edge cases (n = 1, all zero, identical).
import { describe, expect, it } from 'vitest';
import { hodgesLehmannPairedRatio, minAttainablePairedP, signedRankExact } from '../../src/compare/paired';

/** Two-sided p by enumerating every sign pattern of the nonzero |d| with midranks. */
function bruteP(d: number[]): number {
  const nz = d.filter((v) => v !== 0);
  const abs = nz.map(Math.abs);
  const rank = abs.map((a) => {
    const less = abs.filter((b) => b < a).length;
    const same = abs.filter((b) => b === a).length;
    return less + (same + 1) / 2;
  });
  const observed = nz.reduce((s, v, i) => s + (v > 0 ? rank[i] : 0), 0);
  let lower = 0;
  let upper = 0;
  const total = 2 ** nz.length;
  for (let mask = 0; mask < total; mask++) {
    let v = 0;
    for (let i = 0; i < nz.length; i++) if (mask & (1 << i)) v += rank[i];
    if (v <= observed + 1e-9) lower++;
    if (v >= observed - 1e-9) upper++;
  }
  return Math.min(1, (2 * Math.min(lower, upper)) / total);
}

const walsh = (d: number[]) => d.flatMap((a, i) => d.slice(i).map((b) => (a + b) / 2)).sort((a, b) => a - b);
const exp = (xs: number[]) => xs.map(Math.exp);

describe('signedRankExact', () => {
  it("matches R's ?wilcox.test example (Hollander & Wolfe depression data): V = 40, p = 0.03906", () => {
    const x = [1.83, 0.5, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.3];
    const y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29];
    const r = signedRankExact(x.map((v, i) => v - y[i]));
    expect(r.v).toBe(40);
    expect(r.p).toBeCloseTo(0.0390625, 10); // 20/512
    expect(r.nonZero).toBe(9);
  });

  it('equals brute-force enumeration, with ties and zeros (zeros dropped)', () => {
    const cases = [
      [0.1, -0.2, 0.3, 0.4, 0.5, -0.05, 0.25],
      [1, 1, -1, 2, 2, 2, -3, 0, 0, 4],
      [0.5, 0.5, 0.5, 0.5, -0.5, 0.5],
      [-3, -1, -2, -4, -5, -6, -7, -8],
    ];
    for (const d of cases) expect(signedRankExact(d).p).toBeCloseTo(bruteP(d), 12);
  });

  it('complete separation of n pairs gives the smallest attainable p, 2 / 2^n', () => {
    for (const n of [1, 5, 6, 8, 10]) {
      expect(signedRankExact(Array.from({ length: n }, (_, i) => i + 1)).p).toBeCloseTo(minAttainablePairedP(n), 12);
    }
    expect(minAttainablePairedP(5)).toBe(0.0625);
    expect(minAttainablePairedP(8)).toBeCloseTo(0.0078125, 12);
  });

  it('all-zero differences (identical samples) give p = 1; non-finite input throws', () => {
    expect(signedRankExact([0, 0, 0])).toEqual({ v: 0, p: 1, nonZero: 0 });
    expect(signedRankExact([])).toEqual({ v: 0, p: 1, nonZero: 0 });
    expect(() => signedRankExact([1, NaN])).toThrow(RangeError);
  });
});

describe('hodgesLehmannPairedRatio', () => {
  it('is exp(median of the Walsh averages of log ratios), interval [W(6), W(40)] for n = 9 (R qsignrank(0.025, 9) = 6)', () => {
    const a = [1.83, 0.5, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.3];
    const b = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29];
    // log(y) − log(x) = b − a, so the estimate works on the differences b − a.
    const r = hodgesLehmannPairedRatio(exp(a), exp(b))!;
    const w = walsh(b.map((v, i) => v - a[i]));
    expect(w).toHaveLength(45);
    expect(Math.log(r.ratio)).toBeCloseTo(w[22], 10);
    expect(Math.log(r.ratio)).toBeCloseTo(-0.46, 10); // R: (pseudo)median 0.46 for x − y
    expect(Math.log(r.low)).toBeCloseTo(w[5], 10);
    expect(Math.log(r.high)).toBeCloseTo(w[39], 10);
    expect(r.confidence).toBeCloseTo(1 - 20 / 512, 10); // 1 − 2·P(V ≤ 5) = 1 − 2·10/512
  });

  it('n = 6: the widest interval that holds 95 % is [min, max] of the Walsh averages (1 − 2/64)', () => {
    const r = hodgesLehmannPairedRatio([1, 1, 1, 1, 1, 1], [1.1, 1.2, 0.9, 1.15, 1.05, 1.12])!;
    expect(r.low).toBeCloseTo(0.9, 12);
    expect(r.high).toBeCloseTo(1.2, 12);
    expect(r.confidence).toBeCloseTo(1 - 2 / 64, 12);
  });

  it('n too small for 95 %: the widest interval with its lower achieved confidence; n = 1 is a point', () => {
    const r = hodgesLehmannPairedRatio([1, 1, 1], [2, 3, 4])!;
    expect([r.low, r.high]).toEqual([2, 4]);
    expect(r.confidence).toBeCloseTo(0.75, 12);
    const one = hodgesLehmannPairedRatio([2], [3])!;
    expect(one.ratio).toBeCloseTo(1.5, 12);
    expect([one.low, one.high].map((v) => v.toFixed(6))).toEqual(['1.500000', '1.500000']);
  });

  it('identical samples give exactly 1 [1, 1]; bad input is null or throws', () => {
    expect(hodgesLehmannPairedRatio([5, 6, 7, 8, 9, 10], [5, 6, 7, 8, 9, 10])).toMatchObject({ ratio: 1, low: 1, high: 1 });
    expect(hodgesLehmannPairedRatio([], [])).toBeNull();
    expect(hodgesLehmannPairedRatio([1, 0], [1, 1])).toBeNull();
    expect(() => hodgesLehmannPairedRatio([1], [1, 2])).toThrow(RangeError);
  });
});
