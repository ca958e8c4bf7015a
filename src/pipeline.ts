// The pipeline shared by the CLI and the action: configuration → broker → workload → metrics →
// compare. It resolves scenarios, starts (or attaches to) every target, runs the interleaved
// trial plan, always stops what it started, and returns one RunReport; the targets boot side by
// side (src/broker/boot.ts). Reporting and GitHub are the callers' business. Scenarios a target
// cannot run (a node restart on a broker it did not start) are skipped on every target, with a
// warning and a note in the report's errors. A check with an anchored stored baseline and no
// reference starts the baseline's broker as its reference (src/broker/anchor.ts); a same-run A/B
// with looks stops each scenario once decided (src/compare/sequential.ts), and all of them at the
// look where one fails (fail-fast, unless turned off); asked for, a failing
// scenario of an A/B of containers gets a differential flame graph before the brokers stop
// (src/workload/profile-window.ts). Every run first sweeps up the containers of runs whose
// process is gone and watches the machine's other load at its start and across each trial
// (src/broker/machine-watch.ts). A run that stops early (interrupted, time limit) says so and
// records what a resume needs; given such a report, a run goes on with its plan, its trials kept,
// once its restarted brokers proved the same (src/broker/resume.ts).
import { randomBytes } from 'node:crypto';
import type { Baseline, Comparison, MachineLoad, RunError, RunReport, ScenarioSpec, SequentialSummary, TargetInfo, TargetSpec, TrialResult } from './schema/types';
import { SCHEMA_VERSION } from './schema/types';
import type { Ui } from './schema/ui';
import { resolveScenarios } from './config/catalogue';
import { describeError, GateError } from './schema/errors';
import { bootTargets } from './broker/boot';
import { containerLogsOf } from './broker/docker';
import { assertDockerAvailable } from './broker/docker-cli';
import type { BrokerHandle } from './broker/provider';
import { type Capable, type Unmet, unmetNeed } from './broker/capabilities';
import { pluginsFor } from './broker/endpoints';
import { focusOn, type Focus } from './broker/focus';
import type { VhostConfig } from './broker/vhost-config';
import { effectDiff, unmatchedPolicies } from './broker/effective';
import { buildPlan, estimateSeconds } from './plan/plan';
import { shardScenarios, type Shard } from './plan/shard';
import { abortReason, runTrial } from './workload/trial';
import { MachineWatch } from './broker/machine-watch';
import { checkSameBrokers, keptTrials, resumeRecord } from './broker/resume';
import { flameGraphs } from './workload/profile-window';
import { perfUnavailable } from './broker/profile';
import type { FlameGraph } from './metrics/flame';
import { fingerprint, TOOL, TOOL_VERSION } from './metrics/fingerprint';
import { isRunScope, judge, type Judgement } from './compare/judge';
import { storedMismatch, trialValues } from './compare/baseline-file';
import { anchoredReference, anchorOf, movedTagNote } from './broker/anchor';
import { type SequentialDesign, sequentialDesign, SequentialRun } from './compare/sequential';
import { answerFor, defaultRepetitions, trialsNeeded } from './compare/compare';

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

export type { Ui };

/** Thrown inside the run when a signal came before any trial could start: straight to the report. */
class StoppedBeforeTrials extends Error {}
/** Errors thrown because a target could not be started, by the target's id (see startFailedTarget). */
const failedStarts = new WeakMap<object, string>();

function startFailure(target: string, error: unknown): unknown {
  const e = error !== null && typeof error === 'object' ? error : new Error(String(error));
  failedStarts.set(e, target);
  return e;
}

/** The id of the target whose start made runPipeline throw `e` (the image could not be pulled, or
 *  the broker did not boot), or undefined for any other error: a bisect skips such a candidate. */
export function startFailedTarget(e: unknown): string | undefined {
  return e !== null && typeof e === 'object' ? failedStarts.get(e) : undefined;
}

/** The candidate of a run could not be pulled or started while Docker itself answers (a bisect
 *  skips such an image; Docker being down ends the search instead). */
export async function candidateCouldNotStart(e: unknown, candidate = 'candidate'): Promise<boolean> {
  return startFailedTarget(e) === candidate && (await assertDockerAvailable().then(() => true, () => false));
}

export function newRunId(): string {
  return randomBytes(4).toString('hex');
}

export async function runPipeline(given: RunOptions, ui: Ui): Promise<RunReport> {
  const started = Date.now();
  const runId = given.runId ?? newRunId();
  const prior = given.resume?.report;
  const seed = prior ? prior.seed : given.seed ?? randomBytes(4).readUInt32BE(0);
  const selection = prior ? { name: prior.preset, scenarios: prior.scenarios } : resolveScenarios(given.scenarios, given.cwd);
  const anchoring = given.mode === 'check' && !given.reference && given.stored && given.anchor !== false;
  const anchor = anchoring ? await anchoredReference(given.stored!) : undefined;
  if (anchor) (anchor.degraded ? ui.warn : ui.info)(`Stored baseline: ${anchor.note}.`);
  const opts: RunOptions = { ...given, reference: given.reference ?? anchor?.reference };
  // From the whole selection (not this shard's part), so every shard runs the same n.
  const looks = opts.reference && opts.sequential !== false ? opts.looks ?? (opts.repetitions === undefined ? selection.looks : undefined) : undefined;
  // A resumed run takes its design, repetitions and (sharded, skipped) scenarios as recorded.
  let design: SequentialDesign | undefined = prior ? (prior.sequential && designOf(prior.sequential)) : looks?.length ? sequentialDesign(looks, selection.scenarios.reduce((m, s) => m + s.gate.length, 0),
    opts.repetitions ?? defaultRepetitions(selection.scenarios, true, selection.pairs)) : undefined;
  let repetitions = prior ? prior.repetitions : design ? design.looks.at(-1)! : opts.repetitions ?? defaultRepetitions(selection.scenarios, opts.reference !== undefined, selection.pairs);
  let scenarios = prior ? prior.scenarios : shardScenarios(selection.scenarios.map((s) => ({
    ...s,
    durationSeconds: opts.duration ?? s.durationSeconds,
    warmupSeconds: opts.warmup ?? s.warmupSeconds,
  })), opts.shard, repetitions);
  if (!(repetitions >= 1)) throw new GateError(`repetitions must be at least 1, got ${repetitions}`, { field: 'repetitions' });
  const specs = [opts.candidate, ...(opts.reference ? [opts.reference] : [])];
  const errors: RunError[] = [];
  const handles: BrokerHandle[] = [];
  const trials: TrialResult[] = [];
  /** Each target's vhost-scoped configuration, as its trials inherit it. */
  const inheritedBy = new Map<string, VhostConfig | undefined>();
  const limit = runTimeLimit(opts.timeLimitSeconds);
  const trialSignal = AbortSignal.any([limit.signal, ...(opts.signal ? [opts.signal] : [])]);
  let planned = scenarios.length * specs.length * repetitions;
  let focus: Focus | undefined;
  /** The trials kept from the interrupted run (resume), by plan order; and the last trial this run started. */
  let kept = new Map<number, TrialResult>();
  let lastRun: TrialResult | undefined;
  /** Sequential A/B: the stopping policy (who stopped where, fail-fast), set once the targets are up. */
  let seq: SequentialRun | undefined;
  // Flame graphs need perf on this runner and profilable containers on both sides.
  const noProfile = !opts.flameGraph ? undefined : !opts.reference ? 'no flame graph: it compares the two targets of a same-run A/B, and this run has one'
    : specs.some((x) => x.kind !== 'docker') ? 'no flame graph: only brokers this tool starts as containers can be profiled'
    : await perfUnavailable().then((why) => (why ? `no flame graph: ${why}` : undefined));
  const profiling = opts.flameGraph === true && !noProfile;
  let flames: FlameGraph[] = [];
  let flameNote = noProfile;
  if (noProfile) ui.warn(noProfile);
  const watch = await MachineWatch.begin(ui, trialSignal);
  /** The report of what has run so far; `stop`: why the run ended early, and the trial it cut short. */
  const packaged = (stop?: { why: string; cut?: TrialResult }, moved?: string, checkpoint = false): RunReport => {
    const message = stop && `Stopped early: ${stop.why} after ${trials.length} of ${planned} planned trials${stop.cut ? ' (the last one cut short)' : ''}; ${planned - trials.length} did not start.`;
    const targetNote = [opts.targetNote, anchor?.note, moved].filter(Boolean).join('; ') || undefined;
    const report = assembleReport({
      opts: { ...opts, targetNote }, scenarios, handles, trials, errors: message ? [...errors, { scope: 'run', message }] : [...errors],
      seed, repetitions, preset: selection.name, started, frozen: focus?.freezing === true, design, checkpoint,
    });
    if (seq) report.sequential = seq.summary((id) => estimateSeconds(buildPlan(scenarios.filter((s) => s.id === id), ['x'], 1, 0)));
    report.machine = watch.summary([...kept.values()].map((t) => t.machine).filter((m): m is MachineLoad => m !== undefined));
    if (prior) {
      report.createdAt = prior.createdAt;
      report.durationSeconds += prior.durationSeconds;
      report.resumed = [...(prior.resumed ?? []), { at: new Date(started).toISOString(), kept: kept.size }];
    }
    if (stop) {
      report.resume = resumeRecord({
        candidate: given.candidate, reference: given.reference, freezeIdle: opts.freezeIdle !== false, anchor: opts.anchor !== false,
        failFast: opts.failFast !== false, flameGraph: opts.flameGraph === true, targetNote: given.targetNote, targetDiff: given.targetDiff,
        planned, ...(stop.cut ? { cut: stop.cut.order } : {}),
      });
    }
    return report;
  };
  try {
    if (trialSignal.aborted) throw new StoppedBeforeTrials();
    if (specs.length > 1) ui.info(`Starting brokers ${specs.map((s) => s.label).join(' and ')} side by side`);
    const booted = await bootTargets(specs, { runId, profile: profiling, plugins: pluginsFor(scenarios) });
    // Every broker that came up is stopped in `finally`, whichever of them failed.
    for (const b of booted) if (b.handle) handles.push(b.handle);
    for (const b of booted) {
      const { spec } = b;
      await ui.group(`Starting broker ${spec.label}`, async () => { for (const l of b.startLines) if (l.warn) ui.warn(l.text); else ui.info(l.text); });
      for (const l of b.readLines) if (l.warn) ui.warn(l.text); else ui.info(l.text);
      if (b.error && trialSignal.aborted) continue; // its containers were removed by the signal: no boot error to tell
      for (const message of b.configWarnings) errors.push({ scope: `${spec.label}: configuration`, message });
      if (b.error) {
        const logs = containerLogsOf(b.error);
        if (logs?.length) await ui.group(`Last log lines of ${spec.label}`, async () => ui.info(logs.join('\n')));
        if (!anchor || spec !== anchor.reference || b.handle) throw startFailure(spec.id, b.error);
        // The recorded broker did not come up: the stored trials decide, as without an anchor.
        anchor.note = `the stored baseline's broker could not be started again (${(b.error as Error).message}): compared with the baseline's stored trials`;
        ui.warn(`Stored baseline: ${anchor.note}.`);
        specs.pop();
        opts.reference = undefined;
        design = undefined;
        repetitions = opts.repetitions ?? defaultRepetitions(selection.scenarios, false, selection.pairs);
        continue;
      }
      inheritedBy.set(spec.id, b.inherited);
    }
    if (trialSignal.aborted) throw new StoppedBeforeTrials();
    if (prior?.trials.length) checkSameBrokers(prior, handles.map((h) => h.info), given.resume!.file);
    await watch.adopt(runId);
    scenarios = skipUnrunnable(scenarios, handles, errors, ui);
    if (opts.reference || (opts.stored && opts.mode === 'check')) warnIfUnderpowered(scenarios, repetitions, ui, opts.reference !== undefined);
    const plan = buildPlan(scenarios, specs.map((s) => s.id), repetitions, seed);
    planned = plan.length;
    focus = focusOn(handles, ui.warn, opts.freezeIdle !== false);
    let remaining = estimateSeconds(plan);
    if (prior) {
      kept = keptTrials(prior, plan, given.resume!.file);
      ui.info(`Resuming ${given.resume!.file}: ${kept.size} trial(s) of the interrupted run are kept, the rest of its plan runs now`);
    }
    ui.info(`Running ${plan.length} trials (${scenarios.length} scenarios × ${specs.length} targets × ${repetitions}), about ${Math.round(remaining)} s, seed ${seed}`
      + (design ? `; group-sequential: each scenario judged after ${design.looks.join(', ')} pairs and stopped once decided` : ''));
    seq = design && opts.reference ? new SequentialRun(design, opts.failFast !== false) : undefined;
    for (const [i, p] of plan.entries()) {
      if (trialSignal.aborted) break;
      if (seq && !seq.runs(p.scenario.id, p.trial)) continue;
      let result = kept.get(p.order);
      if (!result) {
        const handle = handles[specs.findIndex((s) => s.id === p.target)];
        await focus.on(handle);
        watch.trialStarts();
        result = await runTrial(p, handle, runId, trialSignal);
        const machine = await watch.trialEnds();
        if (machine) result.machine = machine;
        lastRun = result;
      }
      trials.push(result);
      remaining -= estimateSeconds([p]);
      if (result === lastRun) {
        ui.trialDone(trials.length, planned, result, Math.max(0, remaining));
        // Should the process be killed, what ran so far is written and can be resumed.
        // Not judged (the comparisons grow with every trial): the run judges once at its end.
        given.checkpoint?.(packaged({ why: "the run's process ended" }, undefined, true));
      }
      if (result.error) errors.push({ scope: `${p.scenario.id} on ${p.target}, trial ${p.trial + 1}`, message: result.error });
      if (!seq || !opts.reference || !seq.isLook(p.trial + 1) || !roundDone(trials, p, specs.length)) continue;
      const comparisons = seq.compareAt(p.scenario, trials, opts.candidate, opts.reference);
      const event = seq.look(p.scenario.id, p.trial + 1, comparisons);
      if (event.stop) ui.info(`${p.scenario.id}: ${lookLine(comparisons, p.trial + 1, design!, event.stop)}`);
      if (event.stop || event.failFast) {
        // What is left of the plan: the rounds the policy still runs.
        const rest = plan.slice(i + 1).filter((q) => seq!.runs(q.scenario.id, q.trial));
        planned = trials.length + rest.length;
        remaining = estimateSeconds(rest);
      }
    }
    const ran = new Map(scenarios.map((s) => [s.id, trials.filter((t) => t.scenario === s.id && t.target === opts.candidate.id).length]));
    const cut = seq?.finish(ran) ?? [];
    if (cut.length) ui.info(`fail-fast: ${seq!.failedFast!.scenario} failed after ${seq!.failedFast!.pairs} pairs, so ${cut.join(', ')} stopped there too (fail-fast: false runs each until decided)`);
    // Before the brokers stop: a differential flame graph of each scenario the A/B fails.
    if (profiling && opts.reference && handles.length === 2 && !trialSignal.aborted) {
      const provisional = judgementOf({ opts, scenarios, handles, trials, errors, seed, repetitions, preset: selection.name, started, frozen: focus.freezing, design });
      const failing = scenarios.filter((s) => provisional.comparisons.some((c) => c.scenario === s.id && c.gating && c.verdict === 'fail' && c.against === opts.reference!.id)).slice(0, 2);
      if (failing.length) {
        const made = await ui.group(`Flame graphs of ${failing.map((s) => s.id).join(', ')}`, () => flameGraphs(failing, handles[0], handles[1], focus!, runId, trialSignal));
        flames = made.flames;
        flameNote = made.note;
        if (made.note) ui.warn(made.note);
      }
    }
    for (const spec of specs) {
      for (const p of unmatchedPolicies(inheritedBy.get(spec.id), trials.filter((t) => t.target === spec.id))) {
        const message = `${p} is in effect on no queue of this run's scenarios, so it shaped nothing that was measured. Fix: check its pattern and apply-to against the scenarios' queue names, or its priority against other policies`;
        ui.warn(`${spec.label}: ${message}`);
        errors.push({ scope: `${spec.label}: configuration`, message });
      }
    }
  } catch (e) {
    if (!(e instanceof StoppedBeforeTrials)) throw e;
  } finally {
    limit.clear();
    for (const h of handles) await h.stop().catch((e) => ui.warn(`could not stop ${h.info.label}: ${describeError(e)}`));
  }
  // A run that stopped early says so once, as a run-level error: the verdict cannot be a pass.
  const why = opts.signal?.aborted ? abortReason(opts.signal) : limit.signal.aborted ? `the run's time limit of ${limit.text} was reached` : undefined;
  const cut = why && lastRun && trials.at(-1) === lastRun && !lastRun.valid ? lastRun : undefined;
  const moved = movedTagNote(opts.stored?.anchor, handles.find((h) => h.info.id === opts.candidate.id)?.info);
  if (moved) ui.info(moved);
  const report = packaged(why ? { why, cut } : undefined, moved);
  if (flames.length) report.flames = flames;
  if (flameNote) report.flameNote = flameNote;
  const candInfo = report.targets.find((t) => t.id === report.candidate);
  if (opts.mode === 'refresh' && candInfo) report.anchor = await anchorOf(opts.candidate, candInfo).catch(() => undefined);
  return report;
}

/** Drops each scenario some target cannot run (src/broker/capabilities.ts: a node restart, a
 *  protocol listener, a RabbitMQ version) on every target, so that A/B stays paired: one warning
 *  per reason, and one error per scenario whose scope is its id (not 'run', so a skip alone never
 *  changes the verdict). */
export function skipUnrunnable(scenarios: ScenarioSpec[], handles: Capable[], errors: RunError[], ui: Pick<Ui, 'warn'>): ScenarioSpec[] {
  const byReason = new Map<string, { unmet: Unmet; specs: ScenarioSpec[] }>();
  for (const s of scenarios) {
    const unmet = unmetNeed(s, handles);
    if (unmet) (byReason.get(unmet.why) ?? byReason.set(unmet.why, { unmet, specs: [] }).get(unmet.why)!).specs.push(s);
  }
  if (!byReason.size) return scenarios;
  const skipped = new Set<ScenarioSpec>();
  for (const { unmet, specs } of byReason.values()) {
    const able = handles.filter((h) => !unmetNeed(specs[0], [h])).length;
    const both = handles.length > 1 ? ` on both targets${able ? ', to keep the A/B paired' : ''}` : '';
    ui.warn(`Skipping ${specs.map((s) => s.id).join(', ')}${both}: ${specs.length > 1 ? 'each' : 'it'} ${unmet.why}.`);
    for (const s of specs) {
      errors.push({ scope: s.id, message: `Skipped${both}: this scenario ${unmet.why}. ${unmet.fix}` });
      skipped.add(s);
    }
  }
  return scenarios.filter((s) => !skipped.has(s));
}

/** Holm's correction over many gating metrics puts significance out of reach of small samples:
 *  say so before the run rather than after it (every gating metric would be inconclusive). */
export function warnIfUnderpowered(scenarios: ScenarioSpec[], repetitions: number, ui: Pick<Ui, 'warn'>, paired = false): void {
  const gating = scenarios.reduce((sum, s) => sum + s.gate.length, 0);
  const needed = trialsNeeded(gating, paired);
  if (gating === 0 || repetitions >= needed) return;
  ui.warn(`${repetitions} ${paired ? 'paired rounds' : 'trials per side'} cannot reach significance across ${gating} gating metrics (Holm's correction): `
    + `every gating metric will be inconclusive. Use repetitions ≥ ${needed}, or fewer scenarios.`);
}

/** The per-run time limit as an AbortSignal whose reason says what happened. */
function runTimeLimit(seconds: number | undefined): { signal: AbortSignal; text: string; clear(): void } {
  const c = new AbortController();
  const text = !seconds ? 'none' : seconds % 60 === 0 ? `${seconds / 60} min` : `${Math.round(seconds)} s`;
  if (!seconds || !(seconds > 0)) return { signal: c.signal, text, clear: () => undefined };
  const timer = setTimeout(() => c.abort(new Error(`the run's time limit of ${text} was reached`)), seconds * 1000);
  timer.unref();
  return { signal: c.signal, text, clear: () => clearTimeout(timer) };
}

interface Assembly {
  opts: RunOptions;
  scenarios: RunReport['scenarios'];
  handles: BrokerHandle[];
  trials: TrialResult[];
  errors: RunError[];
  seed: number;
  repetitions: number;
  preset: string;
  started: number;
  /** The idle target was frozen during each trial. */
  frozen: boolean;
  /** A group-sequential A/B: compared at its nominal level, Bonferroni over the selection. */
  design?: SequentialDesign;
  /** A checkpoint saved after a trial: the trials and what a resume needs, not judged. */
  checkpoint?: boolean;
}

/** The design a sequential A/B ran with, from its report. */
function designOf(q: SequentialSummary): SequentialDesign {
  return { looks: q.looks, level: q.level, family: q.family, fixedPairs: q.fixedPairs };
}

/** Both targets have run this trial's round of its scenario. */
function roundDone(trials: TrialResult[], p: { scenario: ScenarioSpec; trial: number }, targets: number): boolean {
  return trials.filter((t) => t.scenario === p.scenario.id && t.trial === p.trial).length === targets;
}

/** One log line for a scenario that stopped at a look: its answers, why, and the pairs it took. */
function lookLine(cs: Comparison[], pairs: number, d: SequentialDesign, stop: 'decided' | 'cap'): string {
  const k = d.looks.indexOf(pairs) + 1;
  const gating = cs.filter((c) => c.gating);
  const answers = gating.map((c) => `${c.metric} ${answerFor(c)}${c.bound !== null && c.bound !== undefined && answerFor(c) !== 'regression' ? ` (bound ${(100 * Math.max(0, c.bound)).toFixed(1)} %)` : ''}`).join(', ');
  if (stop === 'cap') return `ran to the cap, ${pairs} pairs, not decided: ${answers}`;
  return `decided at look ${k} of ${d.looks.length}, after ${pairs} pairs: ${answers}${k < d.looks.length ? '; its remaining rounds are skipped' : ''}`;
}

/** Two targets read back from their brokers: identical in effect, or where they differ. */
function effectOfTargets(infos: TargetInfo[]): { effectNote?: string; effectDiff?: string[] } {
  const [x, y] = infos;
  if (infos.length !== 2 || !x.effective || !y.effective) return {};
  const diff = effectDiff(x.effective, y.effective, [x.label, y.label]);
  const partial = !x.effective.node || !y.effective.node ? ' as far as the management API shows (node settings were not readable on both)' : '';
  if (diff.length) return { effectNote: `${x.label} and ${y.label} differ in effect${partial}: ${diff.length === 1 ? diff[0] : `${diff.length} differences`}`, effectDiff: diff };
  const files = x.configDigest && y.configDigest && x.configDigest !== y.configDigest ? ' — their files differ, but read back from the brokers every setting, feature flag, plugin and policy is the same' : '';
  return { effectNote: `${x.label} and ${y.label} are identical in effect${partial}: nothing the broker runs changed${files}` };
}

/** The run's judgement (src/compare/judge.ts): the same-run reference decides when present, the
 *  stored baseline otherwise. */
function judgementOf(a: Assembly, fp = fingerprint()): Judgement {
  const candidate = a.opts.candidate.id;
  const candInfo = a.handles.find((h) => h.info.id === candidate)?.info;
  const candSample = { label: a.opts.candidate.label, values: trialValues({ trials: a.trials }, candidate) };
  const stored = a.opts.stored && a.opts.mode === 'check' && candInfo ? a.opts.stored : undefined;
  return judge({
    scenarios: a.scenarios, trials: a.trials, candidate: { id: candidate, ...candSample },
    sameRun: a.opts.reference && {
      ...a.opts.reference,
      how: `: both targets ran on this runner, each round's pair back to back${a.frozen ? ', the idle one frozen' : ''}, compared pair by pair`
        + (a.design ? `, group-sequential (looks at ${a.design.looks.join(', ')} pairs)` : ''),
      ...(a.design ? { level: { alpha: a.design.level, bonferroni: a.design.family } } : {}),
    },
    independent: stored && {
      sample: { label: 'stored baseline', values: Object.fromEntries(Object.entries(stored.scenarios).map(([k, v]) => [k, v.metrics])) },
      against: 'stored', mayNotFail: storedMismatch(stored, fp, candInfo!, a.scenarios), what: 'stored baseline', matching: ', recorded on a matching runner',
    },
    judged: a.opts.mode === 'check' || a.opts.reference !== undefined,
    incomplete: a.errors.some((e) => isRunScope(e.scope)),
  });
}

/** Compares and packages a run. */
function assembleReport(a: Assembly): RunReport {
  const fp = fingerprint();
  const candidate = a.opts.candidate.id;
  const effect = effectOfTargets(a.handles.map((h) => h.info));
  const judgement: Judgement = a.checkpoint
    ? { comparisons: [], decidedBy: 'not judged yet: saved after a trial of a run still going (run --resume DIR goes on and judges it)', verdict: 'inconclusive', answer: 'undecided', regressions: 0, improvements: 0 }
    : judgementOf(a, fp);
  return {
    schemaVersion: SCHEMA_VERSION,
    tool: { name: TOOL, version: TOOL_VERSION },
    createdAt: new Date(a.started).toISOString(),
    mode: a.opts.mode,
    fingerprint: fp,
    preset: a.preset,
    repetitions: a.repetitions,
    seed: a.seed,
    scenarios: a.scenarios,
    targets: a.handles.map((h) => h.info),
    candidate,
    trials: a.trials,
    ...judgement,
    targetNote: a.opts.targetNote,
    targetDiff: a.opts.targetDiff,
    ...effect,
    errors: a.errors,
    durationSeconds: Math.round((Date.now() - a.started) / 1000),
  };
}
