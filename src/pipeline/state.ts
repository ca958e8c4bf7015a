// What a run carries from one stage of the pipeline to the next (prepare → boot → execute →
// profile → assemble, src/pipeline/run.ts): the plan's inputs fixed by prepare, the brokers boot
// starts, the trials execute records, and what the report is assembled from. The options a run
// takes (RunOptions) live here too, since every stage reads them.
import type { AnchorChoice } from '../broker/anchor';
import type { Focus } from '../broker/focus';
import type { MachineWatch } from '../broker/machine-watch';
import type { BrokerHandle } from '../broker/provider';
import type { VhostConfig } from '../broker/vhost-config';
import type { SequentialDesign, SequentialRun } from '../compare/sequential';
import type { Selection } from '../config/catalogue';
import type { FlameGraph } from '../metrics/flame';
import type { Shard } from '../plan/shard';
import type { Baseline, RunError, RunReport, ScenarioSpec, TargetSpec, TrialResult } from '../schema/types';
import type { Ui } from '../schema/ui';

export interface RunOptions {
  /** Preset name, scenario file or folder, or comma-separated scenario ids. */
  scenarios: string;
  candidate: TargetSpec;
  /** A same-run reference target; when given, it decides the verdict. */
  reference?: TargetSpec;
  /** Trials per scenario and target; default: defaultRepetitions() of the whole selection. */
  repetitions?: number;
  seed?: number;
  mode: RunReport['mode'];
  /** The stored baseline to compare with (check mode), if one could be read. */
  stored?: Baseline;
  /** Override every scenario's measured window / warm-up, in seconds. */
  duration?: number;
  /** scenario → metric → one threshold as both tolerance and equivalence margin (a bisect step
   *  judged at the midpoint its ends check measured, src/compare/bisect.ts). */
  thresholds?: Record<string, Record<string, number>>;
  warmup?: number;
  cwd?: string;
  runId?: string;
  signal?: AbortSignal;
  /** How the targets were chosen and how they differ (recorded in the report). */
  targetNote?: string;
  targetDiff?: string;
  /** Run only this shard's balanced subset of the scenarios (src/plan/shard.ts). */
  shard?: Shard;
  /** Per-run time limit in seconds (broker start included): no trial starts after it and the
   *  running one is cut short; the report says how many trials ran. 0 or absent = none. */
  timeLimitSeconds?: number;
  /** Freeze the idle target during each trial of a same-run A/B (docker targets); default true. */
  freezeIdle?: boolean;
  /** A check without a reference starts the stored baseline's recorded broker next to the
   *  candidate and A/Bs against it (src/broker/anchor.ts); default true. */
  anchor?: boolean;
  /** A same-run A/B judged at these pairs, each scenario stopping once decided (the last is the
   *  cap; src/compare/sequential.ts). Default: the preset's `looks` unless `repetitions` is given. */
  looks?: number[];
  /** false: the fixed design even where the preset has looks. */
  sequential?: boolean;
  /** Sequential A/B: once a scenario fails at a look the verdict is a fail, so the scenarios
   *  still undecided stop at that look too (default true); false: each runs until decided. */
  failFast?: boolean;
  /** A same-run A/B on containers: start them profilable (`+JPperf true`) and, for each failing
   *  scenario (at most two), record a differential flame graph with perf (src/broker/profile.ts). */
  flameGraph?: boolean;
  /** Go on with a run that stopped early: its report (scenarios, seed, repetitions, sequential
   *  design, trials, resume record) and file. Its targets are started again and must prove the
   *  same brokers (src/broker/resume.ts); its trials are kept, the one cut short runs again. */
  resume?: { report: RunReport; file: string };
  /** Called after each trial with the report so far (a stop "the run's process ended", and what a
   *  resume needs), for the caller to save: a killed run can then be resumed too. */
  checkpoint?: (report: RunReport) => void;
}

/** The per-run time limit as an AbortSignal whose reason says what happened. */
export interface TimeLimit {
  signal: AbortSignal;
  text: string;
  clear(): void;
}

export interface RunState {
  /** The options as the caller gave them (a resume record keeps these). */
  readonly given: RunOptions;
  readonly ui: Ui;
  readonly runId: string;
  readonly started: number;
  /** The interrupted run this one resumes. */
  readonly prior?: RunReport;
  readonly seed: number;
  readonly selection: Selection;
  /** The stored baseline's broker as the reference of a check (src/broker/anchor.ts). */
  readonly anchor?: AnchorChoice;
  /** The options in effect: the anchor's broker as the reference when there is one. Boot drops
   *  the reference if the anchored broker does not come up. */
  opts: RunOptions;
  /** A group-sequential A/B's design (looks, level, family), or undefined for a fixed design. */
  design?: SequentialDesign;
  repetitions: number;
  /** The scenarios this run (or shard) runs; boot drops those a target cannot run. */
  scenarios: ScenarioSpec[];
  /** The targets: the candidate, then the reference of an A/B. */
  specs: TargetSpec[];
  readonly errors: RunError[];
  /** Every broker that came up, in the order of `specs`; stopped whatever happens. */
  readonly handles: BrokerHandle[];
  readonly trials: TrialResult[];
  /** Each target's vhost-scoped configuration, as its trials inherit it. */
  readonly inheritedBy: Map<string, VhostConfig | undefined>;
  readonly limit: TimeLimit;
  /** Aborted by the caller's signal or the time limit: no trial starts after it. */
  readonly trialSignal: AbortSignal;
  /** Trials the run expects in all (shrinks as scenarios stop at a look). */
  planned: number;
  focus?: Focus;
  /** The trials kept from the interrupted run (resume), by plan order. */
  kept: Map<number, TrialResult>;
  /** The last trial this run itself started. */
  lastRun?: TrialResult;
  /** Sequential A/B: the stopping policy (who stopped where, fail-fast), set once the targets are up. */
  seq?: SequentialRun;
  readonly watch: MachineWatch;
  /** Flame graphs were asked for and can be made (perf, two containers). */
  readonly profiling: boolean;
  flames: FlameGraph[];
  flameNote?: string;
}
