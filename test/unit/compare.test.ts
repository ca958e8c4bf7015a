// Verdict logic per metric direction, Holm across gating metrics, and the too-few-trials rule.
import { describe, expect, it } from 'vitest';
import { compareSamples, CONFIDENCE, overallVerdict, trialsNeeded } from '../../src/compare/compare';
import { hodgesLehmannPairedRatio } from '../../src/compare/paired';
import { spec } from '../support/broker';
import { warnIfUnderpowered } from '../../src/pipeline/boot';
import { STORED_ALLOWANCE, toleranceFor } from '../../src/compare/margins';

const s = { ...spec('one_fast', {}), gate: ['consumed_rate', 'latency_p99_ms'] };
const base = [1000, 1010, 990, 1005, 995, 1002, 998];

function run(candidate: Record<string, number[]>, reference: Record<string, number[]>, mayNotFail?: string) {
  return compareSamples({
    scenarios: [s],
    against: 'stored',
    mayNotFail,
    candidate: { label: 'now', values: { one_fast: candidate } },
    reference: { label: 'baseline', values: { one_fast: reference } },
  });
}
const scale = (xs: number[], f: number) => xs.map((x) => x * f);

describe('verdicts', () => {
  it('throughput down 30 % with a tight CI fails; the same drop in latency passes as better', () => {
    const cs = run({ consumed_rate: scale(base, 0.7), latency_p99_ms: scale(base, 0.7) }, { consumed_rate: base, latency_p99_ms: base });
    const tput = cs.find((c) => c.metric === 'consumed_rate')!;
    const lat = cs.find((c) => c.metric === 'latency_p99_ms')!;
    expect(tput.verdict).toBe('fail');
    expect(tput.change).toBe('worse');
    expect(tput.ratio!).toBeCloseTo(0.7, 2);
    expect(tput.ciLow!).toBeLessThanOrEqual(tput.ratio!);
    expect(tput.ciHigh!).toBeLessThan(0.9);
    expect(lat.verdict).toBe('pass');
    expect(lat.change).toBe('better');
    expect(overallVerdict(cs)).toBe('fail');
  });

  it('latency up 60 % fails (lower is better)', () => {
    const cs = run({ consumed_rate: base, latency_p99_ms: scale(base, 1.6) }, { consumed_rate: base, latency_p99_ms: base });
    expect(cs.find((c) => c.metric === 'latency_p99_ms')!.verdict).toBe('fail');
  });

  it('a significant 5 % drop within the 10 % tolerance warns, it does not fail', () => {
    const cs = run({ consumed_rate: scale(base, 0.95) }, { consumed_rate: base });
    const c = cs[0];
    expect(c.pAdjusted!).toBeLessThan(0.05);
    expect(c.verdict).toBe('warn');
  });

  it('identical samples pass; overlapping noisy samples whose CI reaches past tolerance are inconclusive', () => {
    expect(run({ consumed_rate: base }, { consumed_rate: base })[0].verdict).toBe('pass');
    const noisy = [500, 1600, 700, 1400, 600, 1250, 1000];
    const c = run({ consumed_rate: [...noisy].reverse() }, { consumed_rate: noisy })[0];
    expect(c.verdict).toBe('inconclusive');
    expect(c.reason).toMatch(/not decided.*\(about \d+ trials per side would likely decide it; this run had 7\)/);
  });

  it('too few trials to ever reach significance is inconclusive and says how many are needed', () => {
    const c = run({ consumed_rate: [500, 510, 505] }, { consumed_rate: [1000, 1010, 990] })[0];
    expect(c.verdict).toBe('inconclusive');
    expect(c.reason).toMatch(/at least 4 per side/);
    expect(trialsNeeded(3)).toBe(5);
    expect(run({ consumed_rate: [] }, { consumed_rate: base })[0].verdict).toBe('inconclusive');
  });

  it('a fail against a stored baseline from another machine becomes a warn, with the reason', () => {
    const c = run({ consumed_rate: scale(base, 0.5) }, { consumed_rate: base }, 'the runner differs: CPU model')[0];
    expect(c.verdict).toBe('warn');
    expect(c.reason).toMatch(/not failing because the runner differs/);
  });

  it('Holm adjusts across gating metrics only', () => {
    const cs = run({ consumed_rate: scale(base, 0.7), latency_p99_ms: scale(base, 1.5), latency_p50_ms: scale(base, 2) }, { consumed_rate: base, latency_p99_ms: base, latency_p50_ms: base });
    const gating = cs.filter((c) => c.gating);
    expect(gating).toHaveLength(2);
    for (const c of gating) expect(c.pAdjusted!).toBeGreaterThan(c.pValue!);
    const info = cs.find((c) => c.metric === 'latency_p50_ms')!;
    expect(info.pAdjusted).toBe(info.pValue);
    expect(overallVerdict(cs.filter((c) => !c.gating))).toBe('inconclusive');
  });
});

describe('warning before an underpowered run', () => {
  const warned = (scenarios: (typeof s)[], reps: number) => {
    const lines: string[] = [];
    warnIfUnderpowered(scenarios, reps, { warn: (m) => lines.push(m) });
    return lines;
  };
  it('says how many trials per side the run needs when Holm puts significance out of reach', () => {
    const seven = Array.from({ length: 7 }, (_, i) => ({ ...s, id: `s${i}` })); // 14 gating metrics
    const [line, ...rest] = warned(seven, 5);
    expect(rest).toEqual([]);
    expect(line).toContain('5 trials per side cannot reach significance across 14 gating metrics');
    expect(line).toContain(`repetitions ≥ ${trialsNeeded(14)}`);
    expect(warned(seven, trialsNeeded(14))).toEqual([]);
    expect(warned([s], 5)).toEqual([]);
  });
});

describe('paired by round (same-run A/B)', () => {
  // Rounds drift by ±30 % (the machine), the candidate is 15 % slower within each round.
  const drift = [1.0, 1.3, 0.7, 1.2, 0.8, 1.25, 0.75, 1.1];
  const ref = drift.map((d) => 1000 * d);
  const cand = drift.map((d, i) => 1000 * d * 0.85 * (i % 2 ? 1.01 : 0.99));
  const paired = (candidate: number[], reference: number[], gate = ['consumed_rate']) =>
    compareSamples({
      scenarios: [{ ...s, gate }],
      against: 'baseline',
      paired: true,
      candidate: { label: 'head', values: { one_fast: { consumed_rate: candidate } } },
      reference: { label: 'base', values: { one_fast: { consumed_rate: reference } } },
    })[0];

  it('a drop hidden by drift between rounds fails when paired, not when the samples are taken as independent', () => {
    const c = paired(cand, ref);
    expect(c.paired).toBe(true);
    expect(c.verdict).toBe('fail');
    expect(c.ratio!).toBeCloseTo(0.85, 2);
    expect(c.ciHigh!).toBeLessThan(0.9);
    expect(c.reason).toMatch(/paired by round, signed-rank, n = 8 pairs/);
    const independent = run({ consumed_rate: cand }, { consumed_rate: ref })[0];
    expect(independent.paired).toBe(false);
    expect(independent.verdict).not.toBe('fail');
  });

  it('a round with an invalid trial on either side is left out of the pairs', () => {
    const c = paired([NaN, ...cand.slice(1)], [...ref.slice(0, 7), NaN]);
    expect([c.nBaseline, c.nCandidate]).toEqual([6, 6]);
  });

  it('too few pairs for significance is inconclusive and says how many pairs are needed', () => {
    const c = paired(cand.slice(0, 5), ref.slice(0, 5));
    expect(c.verdict).toBe('inconclusive');
    expect(c.reason).toMatch(/too few valid pairs .* at least 6 pairs are needed/);
    expect(trialsNeeded(1, true)).toBe(6);
    expect(trialsNeeded(5, true)).toBe(8);
    expect(trialsNeeded(5)).toBe(5);
  });

  it('the CI is the 90 % interval (each end a one-sided 95 % bound): a 10 % drop whose 95 % interval still reaches inside the 5 % tolerance fails', () => {
    // Per-round ratios around 0.90 with ±5 % scatter (tolerance 5 %).
    const r = [0.82, 0.96, 0.88, 0.98, 0.85, 0.9, 0.87, 0.94];
    const c = paired(
      r.map((f, i) => ref[i] * f),
      ref,
    );
    const at = (conf: number) =>
      hodgesLehmannPairedRatio(
        ref,
        r.map((f, i) => ref[i] * f),
        conf,
      )!;
    expect(CONFIDENCE).toBeCloseTo(0.9, 12);
    expect([c.ciLow, c.ciHigh]).toEqual([at(0.9).low, at(0.9).high]);
    expect(at(0.95).high).toBeGreaterThan(0.95); // the two-sided 95 % interval straddles the tolerance…
    expect(c.ciHigh!).toBeLessThan(0.95); // …its 90 % interval does not
    expect(c.verdict).toBe('fail');
    expect(c.reason).toMatch(/\(90 % CI\)/);
  });

  it('identical rounds pass with ratio 1', () => {
    const c = paired(ref, ref);
    expect(c.verdict).toBe('pass');
    expect(c.ratio).toBe(1);
  });
});

describe('stored-baseline allowance', () => {
  it('a tight 12 % drop fails same-run but only warns against a stored baseline (drift between runs is unseen by the CI)', () => {
    const ref = [1000, 1010, 990, 1005, 995, 1002, 998, 1001];
    const cand = ref.map((v) => v * 0.88);
    const stored = run({ consumed_rate: cand }, { consumed_rate: ref })[0];
    expect(stored.tolerance).toBeCloseTo(toleranceFor('consumed_rate', {}) + STORED_ALLOWANCE.throughput, 12);
    expect(stored.verdict).toBe('warn');
    expect(stored.reason).toMatch(/stored-baseline allowance/);
    const sameRun = compareSamples({
      scenarios: [s],
      against: 'baseline',
      paired: true,
      candidate: { label: 'head', values: { one_fast: { consumed_rate: cand } } },
      reference: { label: 'base', values: { one_fast: { consumed_rate: ref } } },
    })[0];
    expect(sameRun.tolerance).toBe(toleranceFor('consumed_rate', {}));
    expect(sameRun.verdict).toBe('fail');
  });

  it('a scenario file tolerance moves both thresholds; the allowance still applies to the stored one', () => {
    expect(toleranceFor('consumed_rate', { consumed_rate: 0.2 })).toBe(0.2);
    expect(toleranceFor('consumed_rate', { consumed_rate: 0.2 }, true)).toBeCloseTo(0.2 + STORED_ALLOWANCE.throughput, 12);
    expect(toleranceFor('recovered_queues', {}, true)).toBe(toleranceFor('recovered_queues', {}));
  });
});

describe('stored-only comparisons state their power (failsBeyond)', () => {
  // A noisier baseline, as stored from another job: ±8 %.
  const noisy = [1000, 1080, 930, 1050, 960, 1020, 990, 1070];
  const cycle = (xs: number[], n: number, f: number) => Array.from({ length: n }, (_, i) => xs[i % xs.length] * f);

  it('is the smallest move of the baseline itself that this rule fails, in 1 % steps, for either direction', () => {
    for (const n of [5, 8]) {
      const cs = run({ consumed_rate: cycle(noisy, n, 1), latency_p99_ms: cycle(noisy, n, 1) }, { consumed_rate: noisy, latency_p99_ms: noisy });
      for (const metric of ['consumed_rate', 'latency_p99_ms']) {
        const f = cs.find((c) => c.metric === metric)!.failsBeyond!;
        expect(typeof f).toBe('number');
        const up = metric === 'latency_p99_ms';
        expect(up ? f > 1 : f < 1).toBe(true);
        // Beyond the tolerance with the drift allowance ("worse" as a factor: 1/f for throughput),
        // and not absurdly far.
        expect((up ? f : 1 / f) - 1).toBeGreaterThan(toleranceFor(metric, {}, true));
        expect((up ? f : 1 / f) - 1).toBeLessThan(toleranceFor(metric, {}, true) + 0.3);
        // Consistent with the rule: a candidate moved by exactly f fails; one step less does not
        // (the other metric unchanged, as in the search).
        const at = (g: number) =>
          run({ consumed_rate: cycle(noisy, n, up ? 1 : g), latency_p99_ms: cycle(noisy, n, up ? g : 1) }, { consumed_rate: noisy, latency_p99_ms: noisy }).find((c) => c.metric === metric)!.verdict;
        expect(at(f)).toBe('fail');
        expect(at(up ? f - 0.01 : f + 0.01)).not.toBe('fail');
      }
    }
  });

  it('null when the runner may only warn, or there are too few trials; absent for same-run comparisons', () => {
    const warnOnly = run({ consumed_rate: base, latency_p99_ms: base }, { consumed_rate: base, latency_p99_ms: base }, 'the runner differs');
    expect(warnOnly.map((c) => c.failsBeyond)).toEqual([null, null]);
    const few = run({ consumed_rate: base.slice(0, 2), latency_p99_ms: base.slice(0, 2) }, { consumed_rate: base, latency_p99_ms: base });
    expect(few.map((c) => c.failsBeyond)).toEqual([null, null]);
    const paired = compareSamples({
      scenarios: [s],
      against: 'b',
      paired: true,
      candidate: { label: 'now', values: { one_fast: { consumed_rate: base } } },
      reference: { label: 'ref', values: { one_fast: { consumed_rate: base } } },
    });
    expect(paired[0].failsBeyond).toBeUndefined();
  });
});
