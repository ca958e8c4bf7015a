// What a test may assert about the validity of an A/B's trials on this shared machine: every trial
// valid, except whole pairs the machine disturbed (dropped by the pair-disturbance rule in
// src/metrics/machine.ts and named so). One place, so no test counts "all valid" on its own.
import { expect } from 'vitest';
import { disturbedPair } from '../../src/metrics/machine';

interface TrialLike {
  valid: boolean;
  invalidReason?: string;
}

/** Asserts `total` trials, each valid or dropped as a disturbed pair; returns how many are valid. */
export function expectValidUnlessDisturbed(trials: TrialLike[], total: number): number {
  expect(trials).toHaveLength(total);
  for (const t of trials) expect(t.valid || disturbedPair(t.invalidReason), t.invalidReason).toBe(true);
  const valid = trials.filter((t) => t.valid).length;
  expect(valid % 2, 'a disturbed pair drops both of its trials').toBe(total % 2);
  return valid;
}
