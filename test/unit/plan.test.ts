// The randomised interleaved trial order (RMIT in blocks): every round has each cell once, a
// scenario's targets run back to back in a shuffled order, seeds reproduce.
import { describe, expect, it } from 'vitest';
import { buildPlan } from '../../src/plan/plan';
import { spec } from '../support/broker';

describe('plan', () => {
  const scenarios = [spec('a', {}), spec('b', {}), spec('c', {})];
  const key = (t: { scenario: { id: string }; target: string }) => `${t.scenario.id}/${t.target}`;

  it('each round runs every scenario × target once, in a seeded shuffle', () => {
    const p = buildPlan(scenarios, ['x', 'y'], 5, 42);
    expect(p).toHaveLength(30);
    for (let r = 0; r < 5; r++) {
      const round = p.slice(r * 6, r * 6 + 6);
      expect(round.map(key).sort()).toEqual(['a/x', 'a/y', 'b/x', 'b/y', 'c/x', 'c/y']);
      expect(round.every((t) => t.trial === r)).toBe(true);
    }
    expect(p.map((t) => t.order)).toEqual([...Array(30).keys()]);
    const again = buildPlan(scenarios, ['x', 'y'], 5, 42).map(key);
    expect(again).toEqual(p.map(key));
    expect(buildPlan(scenarios, ['x', 'y'], 5, 43).map(key)).not.toEqual(again);
  });

  it("a scenario's targets run back to back (a block), so a round's pair shares the machine's state", () => {
    const p = buildPlan(scenarios, ['x', 'y', 'z'], 8, 3);
    for (let b = 0; b < p.length; b += 3) {
      const block = p.slice(b, b + 3);
      expect(new Set(block.map((t) => t.scenario.id)).size).toBe(1);
      expect(block.map((t) => t.target).sort()).toEqual(['x', 'y', 'z']);
    }
  });

  it('targets take turns going first, and scenario order changes between rounds', () => {
    const p = buildPlan([spec('a', {})], ['A', 'B'], 20, 7);
    const firsts = Array.from({ length: 20 }, (_, r) => p[r * 2].target);
    expect(new Set(firsts)).toEqual(new Set(['A', 'B']));
    const q = buildPlan(scenarios, ['A'], 10, 7);
    const orders = new Set(
      Array.from({ length: 10 }, (_, r) =>
        q
          .slice(r * 3, r * 3 + 3)
          .map((t) => t.scenario.id)
          .join(),
      ),
    );
    expect(orders.size).toBeGreaterThan(1);
  });
});
