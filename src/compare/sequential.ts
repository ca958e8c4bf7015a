// Group-sequential decisions for the same-run paired A/B: the looks (pair counts at which a
// scenario's gating metrics are judged before the cap), the nominal level of each one-sided claim
// at a look, whether a look decides, and the stopping policy of a run (SequentialRun: which
// rounds still run, who stopped where, fail-fast) that the pipeline's trial loop consults and the
// replay bench reuses. The rule at a look is the fixed design's rule (src/compare/compare.ts:
// exact signed-rank, Hodges-Lehmann CI, red only when the whole CI lies beyond the tolerance,
// green once its bad end lies inside the equivalence margin) with α replaced by the nominal level.
//
// The nominal level follows Pocock (1977): one level at every look, chosen so that the chance of a
// false claim at any look is α. It is calibrated on the exact joint null distribution of the
// Wilcoxon signed-rank statistics at nested sample sizes, which is free of the data's
// distribution: for continuous differences symmetric about the null value, the signs are fair
// coins independent of the |d|, and the ranks of an i.i.d. sequence are a uniformly random order.
// One seeded Monte Carlo over signs and orders therefore gives it for any data; the one-sided
// p-values are the exact ones of each look's n. Group-sequential designs are standard in clinical
// trials (Jennison & Turnbull, "Group Sequential Methods with Applications to Clinical Trials",
// 2000); the nonparametric version here needs no normality.
import { buildPlan, estimateSeconds, rng } from '../plan/plan';
import type { Comparison, RunReport, ScenarioSpec, SequentialSummary } from '../schema/types';
import { ALPHA, answerFor, compareSameRun, defaultRepetitions, trialsNeeded } from './compare';
import { minAttainablePairedP, signedRankNullCdf } from './paired';

/** Pairs at which a same-run A/B looks by default; the last is the cap. */
export const DEFAULT_LOOKS: readonly number[] = [8, 12, 16, 24, 32];
/** Monte Carlo sequences behind a calibration (seeded: the same level on every run). */
const SEQUENCES = 200_000;

const cache = new Map<string, Float64Array>();

/**
 * Under the null, each simulated sequence's smallest one-sided exact p over the looks, sorted.
 * V_n (the sum of the ranks of the positive differences among the first n) is updated as each
 * pair arrives: the new pair adds its own rank if positive, and raises by one the rank of every
 * earlier positive difference larger than it.
 */
function minPOverLooks(looks: readonly number[]): Float64Array {
  const key = looks.join(',');
  const hit = cache.get(key);
  if (hit) return hit;
  const cap = looks.at(-1)!;
  const cdfs = looks.map((n) => signedRankNullCdf(n));
  const random = rng(20261125);
  const u = new Float64Array(cap);
  const pos = new Uint8Array(cap);
  const out = new Float64Array(SEQUENCES);
  for (let s = 0; s < SEQUENCES; s++) {
    let v = 0;
    let look = 0;
    let best = 1;
    for (let k = 0; k < cap; k++) {
      u[k] = random();
      pos[k] = random() < 0.5 ? 1 : 0;
      let below = 0;
      for (let j = 0; j < k; j++) {
        if (u[j] < u[k]) below++;
        else if (pos[j]) v++;
      }
      if (pos[k]) v += below + 1;
      if (k + 1 === looks[look]) {
        best = Math.min(best, cdfs[look](v));
        look++;
      }
    }
    out[s] = best;
  }
  out.sort();
  cache.set(key, out);
  return out;
}

/**
 * The nominal one-sided level of every look such that P(a false claim at any look) ≤ alpha: the
 * largest attainable p-value g with P(min over looks of p ≤ g) ≤ alpha under the null. With a
 * single look it is alpha itself.
 */
export function nominalLevel(alpha: number = ALPHA, looks: readonly number[] = DEFAULT_LOOKS): number {
  if (looks.length <= 1) return alpha;
  const sorted = minPOverLooks(looks);
  // Count of sequences with min p ≤ g is the index just past g's last occurrence.
  let k = Math.floor(alpha * sorted.length);
  while (k > 0 && k < sorted.length && sorted[k] === sorted[k - 1]) k--;
  return k > 0 ? sorted[k - 1] : 0;
}

/** The chance, under the null, of a claim at any look when every look uses level `g`. */
export function familyRate(g: number, looks: readonly number[] = DEFAULT_LOOKS): number {
  const sorted = minPOverLooks(looks);
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] <= g) lo = mid + 1;
    else hi = mid;
  }
  return lo / sorted.length;
}

/**
 * A scenario is decided at a look when every gating metric has an answer: a regression (the whole
 * CI beyond the tolerance), or no regression beyond its equivalence margin (the CI's bad end
 * inside it; src/compare/margins.ts). The margin doubles as the futility stop of a binding
 * design: it ends a scenario that can no longer show a regression the gate is built to catch,
 * it never adds a fail, so the false-fail bound holds.
 */
export function decidedAtLook(comparisons: readonly Comparison[]): boolean {
  const gating = comparisons.filter((c) => c.gating);
  return gating.length > 0 && gating.every((c) => answerFor(c) !== 'undecided');
}

/** Fail-fast: a gating metric failed at this look, so the run's verdict is a fail whatever the
 *  scenarios still undecided would show; they stop at this look too. */
export function failedAtLook(comparisons: readonly Comparison[]): boolean {
  return comparisons.some((c) => c.gating && c.verdict === 'fail');
}

/** A sequential A/B's plan: looks (the last one the cap), nominal level, Bonferroni family. */
export interface SequentialDesign {
  looks: number[];
  level: number;
  family: number;
  /** The fixed design's pairs it replaces (for the time saved). */
  fixedPairs: number;
}

/** The design for a selection: its looks, from the first at which significance is reachable across
 *  `family` gating metrics (earlier looks could not decide anything). */
export function sequentialDesign(looks: readonly number[], family: number, fixedPairs: number): SequentialDesign {
  const m = Math.max(1, family);
  // Drop the looks whose exact test cannot reach significance at the level (which rises as looks
  // are dropped, so repeat until none is); if none is left, one look at the fixed design's n.
  let used = [...looks];
  for (;;) {
    const level = nominalLevel(ALPHA, used);
    const kept = used.filter((n) => minAttainablePairedP(n) * m < level);
    if (kept.length === used.length) break;
    used = kept;
  }
  if (!used.length) used = [Math.max(trialsNeeded(m, true), looks.at(-1) ?? 0)];
  return { looks: used, level: nominalLevel(ALPHA, used), family: m, fixedPairs };
}

/** The report's summary: where each scenario stopped, the trial time saved against the fixed design,
 *  and (fail-fast) which scenario's fail ended the run. */
export function sequentialSummary(d: SequentialDesign, stopped: Map<string, number>, seconds: (scenarioId: string) => number, failedFast?: SequentialSummary['failedFast']): SequentialSummary {
  let saved = 0;
  for (const [id, n] of stopped) saved += (d.fixedPairs - n) * 2 * seconds(id);
  return {
    looks: d.looks,
    level: d.level,
    family: d.family,
    stopped: Object.fromEntries(stopped),
    fixedPairs: d.fixedPairs,
    savedSeconds: Math.round(saved),
    ...(failedFast ? { failedFast } : {}),
  };
}

/** What happened at a look of one scenario (SequentialRun.look). */
export interface LookEvent {
  /** The scenario stops here: 'decided' (every gating metric answered), 'cap' (the last look). */
  stop?: 'decided' | 'cap';
  /** Fail-fast fired at this look: the scenarios still undecided stop at it too. */
  failFast: boolean;
}

/**
 * The stopping policy of one sequential A/B, in one object: the trial loop asks it whether a
 * round still runs and tells it each look's comparisons; the replay bench (bench/sequential.ts)
 * drives the same object with recorded pairs.
 */
export class SequentialRun {
  /** scenario id → the pairs it ran when it stopped (decided, at the cap, or cut by fail-fast). */
  readonly stopped = new Map<string, number>();
  /** Fail-fast: the scenario whose fail ended the run, and the look it failed at. */
  failedFast?: { scenario: string; pairs: number };

  constructor(
    readonly design: SequentialDesign,
    readonly failFast = true,
  ) {}

  /** Whether round `trial` (0-based) of the scenario still runs. */
  runs(scenario: string, trial: number): boolean {
    return !this.stopped.has(scenario) && !(this.failedFast && trial >= this.failedFast.pairs);
  }

  isLook(pairs: number): boolean {
    return this.design.looks.includes(pairs);
  }

  /** A scenario's comparisons after `pairs` completed rounds, at the design's level (Bonferroni
   *  over the selection's family). */
  compareAt(scenario: ScenarioSpec, trials: RunReport['trials'], candidate: { id: string; label: string }, reference: { id: string; label: string }): Comparison[] {
    return compareSameRun(
      [scenario],
      trials.filter((t) => t.scenario === scenario.id),
      candidate,
      reference,
      { alpha: this.design.level, bonferroni: this.design.family },
    );
  }

  /** Records a look of `scenario` after `pairs` pairs, given its comparisons there (compareAt). */
  look(scenario: string, pairs: number, comparisons: readonly Comparison[]): LookEvent {
    const stop = decidedAtLook(comparisons) ? ('decided' as const) : pairs >= this.design.looks.at(-1)! ? ('cap' as const) : undefined;
    if (stop) this.stopped.set(scenario, pairs);
    const failFast = this.failFast && !this.failedFast && failedAtLook(comparisons);
    if (failFast) this.failedFast = { scenario, pairs };
    return { ...(stop ? { stop } : {}), failFast };
  }

  /** After the loop, fail-fast: the scenarios that ran but had not stopped stop at the look that
   *  failed (or where they were, if fewer); returns their ids. */
  finish(ranPairs: ReadonlyMap<string, number>): string[] {
    if (!this.failedFast) return [];
    const cut = [...ranPairs.keys()].filter((id) => !this.stopped.has(id) && ranPairs.get(id)! > 0);
    for (const id of cut) this.stopped.set(id, Math.min(this.failedFast.pairs, ranPairs.get(id)!));
    return cut;
  }

  /** The report's summary (sequentialSummary). */
  summary(seconds: (scenarioId: string) => number): SequentialSummary {
    return sequentialSummary(this.design, this.stopped, seconds, this.failedFast);
  }
}

/** A same-run A/B's planned pairs and wall-time estimate for a selection: the fixed design's, and
 *  with looks the sequential range from every scenario stopping at the first look to all at the cap. */
export function abEstimate(scenarios: ScenarioSpec[], pairs?: number, looks?: readonly number[]): { pairs: number; seconds: number; looks?: number[]; firstSeconds?: number; capSeconds?: number } {
  const fixed = defaultRepetitions(scenarios, true, pairs);
  const secs = (n: number) => Math.round(estimateSeconds(buildPlan(scenarios, ['candidate', 'reference'], n, 1)));
  if (!looks?.length) return { pairs: fixed, seconds: secs(fixed) };
  const d = sequentialDesign(
    looks,
    scenarios.reduce((m, s) => m + s.gate.length, 0),
    fixed,
  );
  return { pairs: fixed, seconds: secs(fixed), looks: d.looks, firstSeconds: secs(d.looks[0]), capSeconds: secs(d.looks.at(-1)!) };
}
