// The three answers at each margin's edge (src/compare/margins.ts, decide() in compare.ts): a CI
// that just touches the tolerance or the equivalence margin, from either side, for a metric where
// higher is better (throughput) and one where lower is better (latency), same-run and stored.
import { describe, expect, it } from 'vitest';
import { answerFor, decide, overallAnswer } from '../../src/compare/compare';
import { DEFAULT_EQUIVALENCE, DEFAULT_TOLERANCE, marginsFor, STORED_ALLOWANCE } from '../../src/compare/margins';
import type { Comparison } from '../../src/schema/types';

/** A gating comparison with the given CI (as ratios candidate / baseline) and adjusted p. */
function at(metric: string, ciLow: number, ciHigh: number, p: number, stored = false): Comparison {
  const m = marginsFor(metric, {}, stored);
  const c = {
    scenario: 's',
    metric,
    unit: '',
    direction: metric === 'consumed_rate' ? 'higher' : 'lower',
    against: stored ? 'stored' : 'A',
    baselineLabel: 'A',
    candidateLabel: 'B',
    nBaseline: 20,
    nCandidate: 20,
    baselineMedian: 1,
    candidateMedian: 1,
    ratio: Math.sqrt(ciLow * ciHigh),
    ciLow,
    ciHigh,
    pValue: p,
    pAdjusted: p,
    ...m,
    change: 'unknown',
    verdict: 'inconclusive',
    reason: '',
    gating: true,
    paired: !stored,
  } as Comparison;
  c.bound = Math.max(c.direction === 'higher' ? 1 / ciLow : ciHigh, c.direction === 'higher' ? 1 / ciHigh : ciLow) - 1;
  decide(c);
  return c;
}
const SIG = 0.001;
const NS = 0.5;
const tiny = 1e-6;

describe('margins', () => {
  it('one place: the equivalence margin is never tighter than the tolerance, and the stored allowance widens both', () => {
    for (const kind of Object.keys(DEFAULT_TOLERANCE) as Array<keyof typeof DEFAULT_TOLERANCE>) expect(DEFAULT_EQUIVALENCE[kind]).toBeGreaterThanOrEqual(DEFAULT_TOLERANCE[kind]);
    expect(marginsFor('consumed_rate', {})).toEqual({ tolerance: 0.05, equivalence: 0.1 });
    expect(marginsFor('consumed_rate', {}, true)).toEqual({ tolerance: 0.05 + STORED_ALLOWANCE.throughput, equivalence: 0.1 + STORED_ALLOWANCE.throughput });
    expect(marginsFor('consumed_rate', { consumed_rate: 0.2 })).toEqual({ tolerance: 0.2, equivalence: 0.2 }); // never below the tolerance
    expect(marginsFor('consumed_rate', {}, false, { consumed_rate: 0.05 })).toEqual({ tolerance: 0.05, equivalence: 0.05 });
    expect(marginsFor('latency_p50_ms', {})).toEqual({ tolerance: 0.25, equivalence: 0.25 });
  });
});

describe('throughput (higher is better): tolerance 5 %, margin 10 %', () => {
  it('red only when the whole CI lies beyond the tolerance: touching it is not enough', () => {
    const beyond = at('consumed_rate', 0.85, 1 / 1.05 - tiny, SIG);
    expect([beyond.verdict, beyond.answer]).toEqual(['fail', 'regression']);
    expect(beyond.reason).toMatch(/^a regression: the whole CI lies beyond the 5 % tolerance/);
    const touching = at('consumed_rate', 0.92, 1 / 1.05, SIG);
    expect(touching.verdict).toBe('warn');
    expect(touching.answer).toBe('no-regression'); // bad end −8 %: inside the 10 % margin
    expect(touching.reason).toMatch(/^no regression of 8 % or more, but significantly worse by 4\.8 % to 8 %/); // shown as the throughput's drop
  });
  it('green when the bad end touches the margin; grey a hair beyond it', () => {
    const inside = at('consumed_rate', 1 / 1.1, 1.04, NS);
    expect([inside.verdict, inside.answer]).toEqual(['pass', 'no-regression']);
    expect(inside.reason).toMatch(/^no regression of 9\.1 % or more \(the CI's bad end, a one-sided 95 % bound, is inside the 10 % equivalence margin\)/); // 1/1.1 = −9.1 %
    const beyond = at('consumed_rate', 1 / 1.1 - tiny, 1.04, NS);
    expect([beyond.verdict, beyond.answer]).toEqual(['inconclusive', 'undecided']);
    expect(beyond.reason).toMatch(
      /^not decided: no significant change, and the CI still reaches a regression of 9\.1 %, past the 10 % equivalence margin \(about \d+ pairs would likely decide it; this run had 20\)/,
    );
  });
  it('a significant slowdown whose CI straddles the tolerance and passes the margin is grey', () => {
    const c = at('consumed_rate', 0.88, 0.99, SIG);
    expect([c.verdict, c.answer]).toEqual(['warn', 'undecided']);
  });
  it('better, even at the bad end: green, and it says so', () => {
    const c = at('consumed_rate', 1.02, 1.1, SIG);
    expect([c.verdict, c.answer, c.change]).toEqual(['pass', 'no-regression', 'better']);
    expect(c.reason).toMatch(/^no regression at all \(better by at least 2 %\)/);
  });
});

describe('no CI, no answer', () => {
  it('a comparison without an interval is never green, whatever its point estimate', () => {
    const c = at('consumed_rate', 0.99, 1.01, NS);
    Object.assign(c, { ciLow: null, ciHigh: null, ratio: 1, bound: null });
    decide(c);
    expect([c.verdict, c.answer]).toEqual(['inconclusive', 'undecided']);
    expect(c.reason).toMatch(/^not decided: no confidence interval could be formed/);
  });
});

describe('latency (lower is better): tolerance 25 %, margin 25 %', () => {
  it('red beyond the tolerance, warn touching it; green touching the margin, grey past it', () => {
    expect(at('latency_p50_ms', 1.25 + tiny, 1.6, SIG).answer).toBe('regression');
    const touching = at('latency_p50_ms', 1.25, 1.6, SIG);
    expect([touching.verdict, touching.answer]).toEqual(['warn', 'undecided']);
    expect(at('latency_p50_ms', 0.9, 1.25, NS).answer).toBe('no-regression');
    expect(at('latency_p50_ms', 0.9, 1.25 + tiny, NS).answer).toBe('undecided');
  });
});

describe('stored baseline: both margins widened by the allowance', () => {
  it('throughput 25 % / 30 %', () => {
    expect(at('consumed_rate', 0.7, 1 / 1.25 - tiny, SIG, true).answer).toBe('regression');
    expect(at('consumed_rate', 1 / 1.3, 1.1, NS, true).answer).toBe('no-regression');
    expect(at('consumed_rate', 1 / 1.3 - tiny, 1.1, NS, true).answer).toBe('undecided');
  });
});

describe('the run', () => {
  const c = (answer: Comparison['answer'], gating = true) => ({ answer, gating }) as Comparison;
  it('red if any gating metric is; green only when every one is; grey otherwise', () => {
    expect(overallAnswer([c('no-regression'), c('regression')])).toBe('regression');
    expect(overallAnswer([c('no-regression'), c('no-regression'), c('undecided', false)])).toBe('no-regression');
    expect(overallAnswer([c('no-regression'), c('undecided')])).toBe('undecided');
    expect(overallAnswer([c('no-regression', false)])).toBe('undecided');
  });
  it('older reports without answers: derived from the verdict', () => {
    expect(answerFor({ verdict: 'fail' } as Comparison)).toBe('regression');
    expect(answerFor({ verdict: 'pass' } as Comparison)).toBe('no-regression');
    expect(answerFor({ verdict: 'warn' } as Comparison)).toBe('undecided');
  });
});
