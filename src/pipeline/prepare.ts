// Stage 1 of a run — prepare: what will run, before any broker starts. The scenarios (a preset,
// files or ids, this shard's part), the seed, the reference (the caller's, or the stored
// baseline's own broker: src/broker/anchor.ts), the sequential design or the fixed repetitions, the
// time limit, whether flame graphs can be made, and the machine watch's first reading. A resumed
// run takes all of it from the interrupted run's report instead.
import { randomBytes } from 'node:crypto';
import { anchoredReference } from '../broker/anchor';
import { MachineWatch } from '../broker/machine-watch';
import { perfUnavailable } from '../broker/profile';
import { defaultRepetitions } from '../compare/compare';
import { type SequentialDesign, sequentialDesign } from '../compare/sequential';
import { resolveScenarios } from '../config/catalogue';
import { shardScenarios } from '../plan/shard';
import { GateError } from '../schema/errors';
import type { SequentialSummary } from '../schema/types';
import type { Ui } from '../schema/ui';
import type { RunOptions, RunState, TimeLimit } from './state';

export function newRunId(): string {
  return randomBytes(4).toString('hex');
}

export async function prepare(given: RunOptions, ui: Ui): Promise<RunState> {
  const started = Date.now();
  const runId = given.runId ?? newRunId();
  const prior = given.resume?.report;
  const seed = prior ? prior.seed : (given.seed ?? randomBytes(4).readUInt32BE(0));
  const selection = prior ? { name: prior.preset, scenarios: prior.scenarios } : resolveScenarios(given.scenarios, given.cwd);
  const anchoring = given.mode === 'check' && !given.reference && given.stored && given.anchor !== false;
  const anchor = anchoring ? await anchoredReference(given.stored!) : undefined;
  if (anchor) (anchor.degraded ? ui.warn : ui.info)(`Stored baseline: ${anchor.note}.`);
  const opts: RunOptions = { ...given, reference: given.reference ?? anchor?.reference };
  // From the whole selection (not this shard's part), so every shard runs the same n.
  const looks = opts.reference && opts.sequential !== false ? (opts.looks ?? (opts.repetitions === undefined ? selection.looks : undefined)) : undefined;
  // A resumed run takes its design, repetitions and (sharded, skipped) scenarios as recorded.
  const design: SequentialDesign | undefined = prior
    ? prior.sequential && designOf(prior.sequential)
    : looks?.length
      ? sequentialDesign(
          looks,
          selection.scenarios.reduce((m, s) => m + s.gate.length, 0),
          opts.repetitions ?? defaultRepetitions(selection.scenarios, true, selection.pairs),
        )
      : undefined;
  const repetitions = prior ? prior.repetitions : design ? design.looks.at(-1)! : (opts.repetitions ?? defaultRepetitions(selection.scenarios, opts.reference !== undefined, selection.pairs));
  const scenarios = prior
    ? prior.scenarios
    : shardScenarios(
        selection.scenarios.map((s) => ({
          ...s,
          durationSeconds: opts.duration ?? s.durationSeconds,
          warmupSeconds: opts.warmup ?? s.warmupSeconds,
          ...(opts.thresholds?.[s.id] ? { tolerances: { ...s.tolerances, ...opts.thresholds[s.id] }, margins: { ...s.margins, ...opts.thresholds[s.id] } } : {}),
        })),
        opts.shard,
        repetitions,
      );
  if (!(repetitions >= 1)) throw new GateError(`repetitions must be at least 1, got ${repetitions}`, { field: 'repetitions' });
  const specs = [opts.candidate, ...(opts.reference ? [opts.reference] : [])];
  const limit = runTimeLimit(opts.timeLimitSeconds);
  const trialSignal = AbortSignal.any([limit.signal, ...(opts.signal ? [opts.signal] : [])]);
  // Flame graphs need perf on this runner and profilable containers on both sides.
  const noProfile = !opts.flameGraph
    ? undefined
    : !opts.reference
      ? 'no flame graph: it compares the two targets of a same-run A/B, and this run has one'
      : specs.some((x) => x.kind !== 'docker')
        ? 'no flame graph: only brokers this tool starts as containers can be profiled'
        : await perfUnavailable().then((why) => (why ? `no flame graph: ${why}` : undefined));
  if (noProfile) ui.warn(noProfile);
  return {
    given,
    ui,
    runId,
    started,
    prior,
    seed,
    selection,
    anchor,
    opts,
    design,
    repetitions,
    scenarios,
    specs,
    errors: [],
    handles: [],
    trials: [],
    inheritedBy: new Map(),
    limit,
    trialSignal,
    planned: scenarios.length * specs.length * repetitions,
    kept: new Map(),
    watch: await MachineWatch.begin(ui, trialSignal),
    profiling: opts.flameGraph === true && !noProfile,
    flames: [],
    flameNote: noProfile,
  };
}

/** The design a sequential A/B ran with, from its report. */
function designOf(q: SequentialSummary): SequentialDesign {
  return { looks: q.looks, level: q.level, family: q.family, fixedPairs: q.fixedPairs };
}

/** The per-run time limit as an AbortSignal whose reason says what happened. */
function runTimeLimit(seconds: number | undefined): TimeLimit {
  const c = new AbortController();
  const text = !seconds ? 'none' : seconds % 60 === 0 ? `${seconds / 60} min` : `${Math.round(seconds)} s`;
  if (!seconds || !(seconds > 0)) return { signal: c.signal, text, clear: () => undefined };
  const timer = setTimeout(() => c.abort(new Error(`the run's time limit of ${text} was reached`)), seconds * 1000);
  timer.unref();
  return { signal: c.signal, text, clear: () => clearTimeout(timer) };
}
