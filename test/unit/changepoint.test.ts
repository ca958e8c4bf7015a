// E-divisive means on synthetic series with known steps: where it puts them, what it costs a
// series without one (nothing), the minimum magnitude, determinism, and its precision and recall
// on a batch of series stated and held (bench/changepoint.mjs measures the full curves).
import { describe, expect, it } from 'vitest';
import { CHANGE_DEFAULTS, eDivisive } from '../../src/compare/changepoint';
import { rng } from '../../src/plan/plan';

function gaussian(seed: number): () => number {
  const r = rng(seed);
  return () => {
    let u = 0;
    while (u === 0) u = r();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r());
  };
}

/** `n` nights of a ratio around 1 with noise `sigma`, multiplied by `f` from each step's index on. */
function series(n: number, sigma: number, steps: Array<{ at: number; f: number }>, seed: number): number[] {
  const g = gaussian(seed);
  return Array.from({ length: n }, (_, i) => steps.filter((s) => i >= s.at).reduce((v, s) => v * s.f, 1) * (1 + sigma * g()));
}

describe('eDivisive', () => {
  it('finds one clear step where it is, with its magnitude and p-value', () => {
    const xs = series(40, 0.01, [{ at: 25, f: 0.9 }], 1);
    const { points, splits } = eDivisive(xs);
    expect(splits).toEqual([25]);
    expect(points).toHaveLength(1);
    expect(points[0].index).toBe(25);
    expect(points[0].magnitude).toBeGreaterThan(-0.12);
    expect(points[0].magnitude).toBeLessThan(-0.08);
    expect(points[0].pValue).toBeLessThanOrEqual(0.001);
    expect(points[0].before).toMatchObject({ from: 0, to: 25 });
    expect(points[0].after).toMatchObject({ from: 25, to: 40 });
  });

  it('a dip that recovers: both edges, searched night by night as they arrive (κ at the end), or afterwards with κ searched', () => {
    const xs = series(
      60,
      0.01,
      [
        { at: 20, f: 0.92 },
        { at: 40, f: 1 / 0.92 },
      ],
      2,
    );
    // Three nights after each edge, the edge is at the series' end.
    expect(eDivisive(xs.slice(0, 23)).points.map((p) => p.index)).toEqual([20]);
    expect(eDivisive(xs.slice(0, 43)).points.map((p) => p.index)).toEqual([20, 40]);
    const { points } = eDivisive(xs, { kappa: true });
    expect(points.map((p) => p.index)).toEqual([20, 40]);
    expect(points[0].magnitude).toBeLessThan(0);
    expect(points[1].magnitude).toBeGreaterThan(0);
  });

  it('a step three nights before the end of thirty-three is found (the nightly case)', () => {
    const { points } = eDivisive(series(33, 0.01, [{ at: 30, f: 0.95 }], 3));
    expect(points.map((p) => p.index)).toEqual([30]);
  });

  it('a series without a step raises nothing: normal and heavy-tailed noise, many seeds', () => {
    for (let seed = 0; seed < 40; seed++) {
      expect(eDivisive(series(60, 0.02, [], seed)).points, `normal, seed ${seed}`).toEqual([]);
      // Student-t with 3 degrees of freedom: outliers a normal would not have.
      const g = gaussian(seed + 1000);
      const t3 = Array.from({ length: 60 }, () => 1 + (0.01 * g()) / Math.sqrt((g() ** 2 + g() ** 2 + g() ** 2) / 3));
      expect(eDivisive(t3).points, `t3, seed ${seed}`).toEqual([]);
    }
  });

  it('a significant split smaller than the minimum magnitude is kept as a split, not reported', () => {
    const xs = series(40, 0.001, [{ at: 20, f: 0.99 }], 4);
    const r = eDivisive(xs);
    expect(r.splits).toEqual([20]);
    expect(r.points).toEqual([]);
    expect(eDivisive(xs, { minMagnitude: 0.005 }).points.map((p) => p.index)).toEqual([20]);
  });

  it('the same series gives the same answer (seeded shuffles); too short a series has none', () => {
    const xs = series(36, 0.015, [{ at: 30, f: 0.95 }], 5);
    expect(eDivisive(xs)).toEqual(eDivisive(xs));
    expect(eDivisive([1, 0.5, 1, 0.5, 1]).points).toEqual([]);
    expect(() => eDivisive([1, Number.NaN, 1])).toThrow(/finite/);
  });

  it('precision and recall on 200 synthetic series with one −5 % step (σ = 1 %, 30 nights before it), searched on the nights after it as they arrive', () => {
    // The nightly question: by the third night after the step, has it been flagged, and where?
    let found = 0;
    let reported = 0;
    let correct = 0;
    for (let c = 0; c < 200; c++) {
      const xs = series(33, 0.01, [{ at: 30, f: 0.95 }], 100 + c);
      let hit = false;
      for (let n = 31; n <= 33; n++) {
        const { points } = eDivisive(xs.slice(0, n), { seed: CHANGE_DEFAULTS.seed + n });
        reported += points.length;
        correct += points.filter((p) => Math.abs(p.index - 30) <= 1).length;
        if (points.some((p) => Math.abs(p.index - 30) <= 1)) hit = true;
      }
      if (hit) found++;
    }
    const recall = found / 200;
    const precision = reported ? correct / reported : 1;
    // Measured 100 % and 100 % (bench/changepoint.mjs has the curve over σ).
    expect(recall).toBeGreaterThanOrEqual(0.95);
    expect(precision).toBeGreaterThanOrEqual(0.95);
  });
});
