// Verdict logic per metric direction, Holm across gating metrics, and the too-few-trials rule.
import { describe, expect, it } from 'vitest';
import { compareSamples, overallVerdict, trialsNeeded } from '../../src/compare/compare';
import { spec } from '../support/broker';
import { warnIfUnderpowered } from '../../src/pipeline';

const s = { ...spec('one_fast', {}), gate: ['consumed_rate', 'latency_p99_ms'] };
const base = [1000, 1010, 990, 1005, 995, 1002, 998];

function run(candidate: Record<string, number[]>, reference: Record<string, number[]>, mayNotFail?: string) {
  return compareSamples({
    scenarios: [s], against: 'stored', mayNotFail,
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
    const noisy = [700, 1300, 900, 1200, 800, 1100, 1000];
    const c = run({ consumed_rate: [...noisy].reverse() }, { consumed_rate: noisy })[0];
    expect(c.verdict).toBe('inconclusive');
    expect(c.reason).toMatch(/too noisy/);
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
    const cs = run({ consumed_rate: scale(base, 0.7), latency_p99_ms: scale(base, 1.5), latency_p50_ms: scale(base, 2) },
      { consumed_rate: base, latency_p99_ms: base, latency_p50_ms: base });
    const gating = cs.filter((c) => c.gating);
    expect(gating).toHaveLength(2);
    for (const c of gating) expect(c.pAdjusted!).toBeGreaterThan(c.pValue!);
    const info = cs.find((c) => c.metric === 'latency_p50_ms')!;
    expect(info.pAdjusted).toBe(info.pValue);
    expect(overallVerdict(cs.filter((c) => !c.gating))).toBe('inconclusive');
  });
});

describe('warning before an underpowered run', () => {
  const warned = (scenarios: typeof s[], reps: number) => {
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
