// Sharding: splits a resolved scenario list into n deterministic, balanced shards (input
// `shard: i/n`), so a big matrix can run on n runners and be merged afterwards (mode: merge).
// Pure functions: the same scenarios, n and repetitions always give the same shards; every
// scenario lands in exactly one shard; greedy longest-first bin packing on expected duration.
import type { ScenarioSpec } from '../schema/types';
import { GateError } from '../schema/errors';

export interface Shard {
  /** 1-based shard number. */
  index: number;
  count: number;
}

export const MAX_SHARDS = 256;

/** Parses "i/n" (1 ≤ i ≤ n ≤ 256). */
export function parseShard(text: string, field = 'shard'): Shard {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || index < 1 || count < 1 || index > count || count > MAX_SHARDS) {
    throw new GateError(`"${text}" is not a shard`, { field }, `use i/n with 1 ≤ i ≤ n ≤ ${MAX_SHARDS}, e.g. 1/3 (a matrix of shards: \${{ matrix.shard }}/3)`);
  }
  return { index, count };
}

/** Expected measured wall time of one scenario: (warm-up + window) × repetitions. */
export function expectedSeconds(s: ScenarioSpec, repetitions: number): number {
  return (s.warmupSeconds + s.durationSeconds) * repetitions;
}

/** All n shards: longest first into the least-loaded bin (ties: id, then lowest bin); each bin keeps the input order. */
export function shardBins(scenarios: ScenarioSpec[], count: number, repetitions: number): ScenarioSpec[][] {
  const order = scenarios.map((s, i) => ({ s, i, w: expectedSeconds(s, repetitions) })).sort((a, b) => b.w - a.w || (a.s.id < b.s.id ? -1 : a.s.id > b.s.id ? 1 : a.i - b.i));
  const load = new Array<number>(count).fill(0);
  const member = new Array<number>(scenarios.length);
  for (const { i, w } of order) {
    let bin = 0;
    for (let b = 1; b < count; b++) if (load[b] < load[bin]) bin = b;
    load[bin] += w;
    member[i] = bin;
  }
  return Array.from({ length: count }, (_, b) => scenarios.filter((_, i) => member[i] === b));
}

/** The scenarios of one shard, or all of them when there is no shard. */
export function shardScenarios(scenarios: ScenarioSpec[], shard: Shard | undefined, repetitions: number): ScenarioSpec[] {
  if (!shard || shard.count === 1) return scenarios;
  return shardBins(scenarios, shard.count, repetitions)[shard.index - 1];
}
