// The margins every verdict is read against, in one place: per metric kind, the tolerance (a
// regression is red only when the whole CI lies beyond it), the equivalence margin (green, "no
// regression of X % or more", when the CI's bad end — a one-sided 95 % bound — lies inside it;
// it is also where a sequential scenario stops when it cannot be red), and the allowance a stored
// baseline adds to both for drift between jobs. Scenario files override the tolerance per metric;
// the margin is never tighter than the tolerance, so every stop is either red or green. The
// measured error rates of these margins are in docs/statistics.md ("Three answers").
import type { MetricKind } from '../schema/types';
import { metricDef } from '../metrics/definitions';

/**
 * Default tolerance per metric kind, as a fraction: the smallest change that matters. Throughput
 * is 5 %: paired same-run trials resolve it on a 2-core runner (docs/statistics.md), and a 10 %
 * tolerance could never fail a true 10 % regression (half its CIs reach above −10 %).
 */
export const DEFAULT_TOLERANCE: Record<MetricKind, number> = {
  throughput: 0.05,
  churn: 0.1,
  latency: 0.25,
  duration: 0.15,
  memory: 0.15,
  // Sanity counts (a trial with a wrong count is invalid, so valid trials agree exactly).
  count: 0.01,
  // Broker evidence only explains; a change beyond 10 % is worth showing next to a failing metric.
  evidence: 0.1,
};

/**
 * Default equivalence margin per metric kind: a gating metric is green once its CI's bad end lies
 * inside it. 10 % for throughput and churn — the regression the pr preset is built to catch in
 * ≥ 90 % of runs, and what its A/As rule out at the first look in most runs here; the kinds with
 * a wider tolerance use the tolerance. The answer names the bound actually reached (often well
 * inside the margin), never just "not significant".
 */
export const DEFAULT_EQUIVALENCE: Record<MetricKind, number> = {
  throughput: 0.1,
  churn: 0.1,
  latency: 0.25,
  duration: 0.15,
  memory: 0.15,
  count: 0.01,
  evidence: 0.1,
};

/**
 * Added to both margins when the reference is a stored baseline: it was recorded in another job,
 * and drift between jobs on a matching runner (other tenants, a different host of the same CPU
 * model) moves every trial of a run together, which the within-run CI cannot see. Same-run A/B
 * needs no allowance: both targets share the runner's state, pair by pair. Throughput and churn
 * +20 points: on a shared 2-core runner a check a minute after the refresh, same broker, came out
 * −20.6 % [−25.7, −16.9] (5 + 5 one-second trials). See docs/statistics.md.
 */
export const STORED_ALLOWANCE: Record<MetricKind, number> = {
  throughput: 0.2,
  churn: 0.2,
  latency: 0.25,
  duration: 0.15,
  memory: 0.1,
  count: 0,
  evidence: 0.25,
};

export interface Margins {
  /** Red only when the whole CI lies beyond this (a fraction in the bad direction). */
  tolerance: number;
  /** Green once the CI's bad end lies inside this; ≥ tolerance. */
  equivalence: number;
}

/** A metric's margins: the scenario's (or preset's) overrides or the kind's defaults, the
 *  equivalence margin never below the tolerance, both widened by the stored-baseline allowance. */
export function marginsFor(id: string, tolerances: Record<string, number>, stored = false, margins: Record<string, number> = {}): Margins {
  const kind = metricDef(id).kind;
  const tolerance = tolerances[id] ?? DEFAULT_TOLERANCE[kind];
  const extra = stored ? STORED_ALLOWANCE[kind] : 0;
  return { tolerance: tolerance + extra, equivalence: Math.max(tolerance, margins[id] ?? DEFAULT_EQUIVALENCE[kind]) + extra };
}

export function toleranceFor(id: string, overrides: Record<string, number>, stored = false): number {
  return marginsFor(id, overrides, stored).tolerance;
}
