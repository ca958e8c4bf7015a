// The power bench's trial order: every arm's trial next to a trial of the reference, as in the
// product's own A/B (src/plan/plan.ts runs a round's two targets back to back). With one
// reference and several arms that takes two reference trials per round and scenario: a block
// [B1, A, B2] (the arms on either side of A, sides shuffled) and a block [A, A2] for the A/A arm
// (shuffled), the two blocks and the scenarios in a seeded random order. The A/A arm's reference
// trial is stored as `A0`, so A2 is compared with the A trial next to it.
import { rng, shuffled, type PlannedTrial } from '../../src/plan/plan';
import type { ScenarioSpec } from '../../src/schema/types';

export interface PowerTrial extends PlannedTrial {
  /** Where the trial's values go: its target id, or `A0` for the A/A arm's reference trial. */
  slot: string;
}

/** `arms` are the slowed targets (one or two: A has two neighbours); `aa` the A/A twin of `ref`. */
export function powerPlan(scenarios: ScenarioSpec[], ref: string, aa: string, arms: string[], rounds: number, seed: number): PowerTrial[] {
  if (arms.length < 1 || arms.length > 2) throw new Error(`the power plan puts at most two slowed arms next to A, got ${arms.length}`);
  const random = rng(seed);
  const plan: PowerTrial[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const scenario of shuffled(scenarios, random)) {
      const sides = shuffled(arms, random);
      const slowed = [sides[0], ref, ...sides.slice(1)].map((t) => [t, t]);
      const twin = shuffled(
        [
          [ref, 'A0'],
          [aa, aa],
        ],
        random,
      );
      for (const block of shuffled([slowed, twin], random)) {
        for (const [target, slot] of block) plan.push({ scenario, target, slot, trial: round, order: plan.length });
      }
    }
  }
  return plan;
}
