// The run plan: scenarios × targets × repetitions, ordered as randomised interleaved rounds
// (RMIT) of blocks: every round runs each scenario once on each target, the scenarios in a fresh
// seeded shuffle and, within a scenario's block, its targets back to back in a shuffled order. A
// block's trials thus share the machine's state of that moment (the pairs of src/compare/paired.ts)
// and slow drifts of a noisy machine fall on all targets alike.
import type { RestartSpec, ScenarioSpec } from '../schema/types';

export interface PlannedTrial {
  scenario: ScenarioSpec;
  target: string;
  /** Index of this trial among its scenario × target's trials. */
  trial: number;
  /** Position in the whole run. */
  order: number;
}

/** mulberry32: a small, well-mixed seeded PRNG, so a seed reproduces the order exactly. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fisher-Yates on a copy. */
export function shuffled<T>(xs: readonly T[], random: () => number): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

export function buildPlan(scenarios: ScenarioSpec[], targets: string[], repetitions: number, seed: number): PlannedTrial[] {
  const random = rng(seed);
  const plan: PlannedTrial[] = [];
  for (let round = 0; round < repetitions; round++) {
    for (const scenario of shuffled(scenarios, random)) {
      for (const target of shuffled(targets, random)) plan.push({ scenario, target, trial: round, order: plan.length });
    }
  }
  return plan;
}

/** A node restart: stop (~6 s: the image stops RabbitMQ through its CLI) + boot (~8 s) of a
 *  near-empty node on 2 cores, plus declaring, recovering, listing and deleting the queues (a quorum
 *  queue is a Ra cluster: several times a classic one) and their messages. Measured with 3.10.8:
 *  1000 classic queues ~22 s, 100 quorum queues ~17 s per trial. */
export function restartEstimateSeconds(r: RestartSpec): number {
  const perQueue = r.queueType === 'quorum' ? 0.025 : 0.007;
  return 15 + r.queues * perQueue + r.queues * r.messagesPerQueue * 0.0002;
}

/** Expected seconds of one trial's work: warm-up + window, or a restart's own estimate (which
 *  ignores the window: a restart takes what it takes). */
export function trialSeconds(s: ScenarioSpec): number {
  return s.kind === 'restart' ? restartEstimateSeconds(s.restart) : s.warmupSeconds + s.durationSeconds;
}

/** Expected wall time of a plan in seconds (each trial's work + set-up allowance per trial: vhost,
 *  connections, clean-up, freezing; 0.2–0.4 s measured in `pr` A/A runs, more with many clients). */
export function estimateSeconds(plan: PlannedTrial[], perTrialOverhead = 0.5): number {
  return plan.reduce((s, t) => s + trialSeconds(t.scenario) + perTrialOverhead, 0);
}
