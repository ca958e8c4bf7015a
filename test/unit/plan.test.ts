// The randomised interleaved trial order (RMIT): every round has each cell once, seeds reproduce.
import { describe, expect, it } from 'vitest';
import { buildPlan } from '../../src/plan/plan';
import { spec } from '../support/broker';

describe('plan', () => {
  const scenarios = [spec('a', {}), spec('b', {})];
  it('each round runs every scenario × target once, in a seeded shuffle', () => {
    const p = buildPlan(scenarios, ['x', 'y'], 5, 42);
    expect(p).toHaveLength(20);
    for (let r = 0; r < 5; r++) {
      const round = p.slice(r * 4, r * 4 + 4).map((t) => `${t.scenario.id}/${t.target}`).sort();
      expect(round).toEqual(['a/x', 'a/y', 'b/x', 'b/y']);
      expect(p.slice(r * 4, r * 4 + 4).every((t) => t.trial === r)).toBe(true);
    }
    expect(p.map((t) => t.order)).toEqual([...Array(20).keys()]);
    const again = buildPlan(scenarios, ['x', 'y'], 5, 42).map((t) => `${t.scenario.id}/${t.target}`);
    expect(again).toEqual(p.map((t) => `${t.scenario.id}/${t.target}`));
    const other = buildPlan(scenarios, ['x', 'y'], 5, 43).map((t) => `${t.scenario.id}/${t.target}`);
    expect(other).not.toEqual(again);
  });
  it('A goes first in some rounds and B in others', () => {
    const p = buildPlan([spec('a', {})], ['A', 'B'], 20, 7);
    const firsts = new Set(Array.from({ length: 20 }, (_, r) => p[r * 2].target));
    expect(firsts).toEqual(new Set(['A', 'B']));
  });
});
