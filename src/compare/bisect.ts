// The bisect search: given an ordered list of images whose first is known good and whose last is
// known bad, which image to A/B next, what each A/B's verdict makes of it, where the search
// stands, and its state file (written atomically after every step, so a search cut by its time
// limit or Ctrl-C resumes where it was). Testable without a broker: the A/B itself is passed in
// (the CLI and the action pass the pipeline).
//
// The rules. First the ends check: the known-bad end A/B'd against the known-good end. Any gating
// metric significantly worse there — beyond the tolerance or not (fail or warn): the user named it
// bad, the check only confirms and sizes the step — makes it bad; no regression (every CI's bad
// end inside its margin, nothing significantly worse) ends the search with nothing to find;
// otherwise it is undecided and repeated like any step. A regression sizes it: later steps A/B only
// the scenarios that regressed, each regressed gating metric judged at the geometric midpoint of
// the step the ends showed (tolerance = equivalence margin = that midpoint), so an image that is
// like one end or the other is told apart at the first looks rather than against the fixed 5 %
// tolerance and 10 % margin (which a good image of a noisy metric often cannot reach). A search
// started before the ends check existed goes on without it; an ends check that stays undecided
// or cannot boot leaves the later steps at the scenarios' own margins.
// Each step is a same-run paired A/B of one image against the good end (the run's
// judge() answer): regression → bad, no regression → good, not decided → undecided, never guessed: the
// same image is A/B'd again with its cap widened by one more cap of pairs (fresh brokers, a fresh
// order), up to `attempts` times, and then left out like a skipped image. An image that cannot be
// pulled or booted is skipped and said, like `git bisect skip`: the next image tried is the
// untested one nearest the middle. The last good and the first bad only move inwards, so the
// search ends with the first bad image — or, when only skipped or undecided images are left
// between them, with the list of images the first bad one could be.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { Answer, BisectCalibration, BisectOutcome, BisectReport, BisectState, BisectStatus, BisectStep, Comparison, DockerTargetSpec, RunReport, Verdict } from '../schema/types';
import { SCHEMA_VERSION } from '../schema/types';
import { GateError } from '../schema/errors';
import { fingerprint, TOOL, TOOL_VERSION } from '../metrics/fingerprint';
import { metricDef } from '../metrics/definitions';
import { resolveScenarios } from '../config/catalogue';
import { commitsBetween } from '../config/bisect-range';
import { writeFileAtomic } from './stored';
import { answerFor, defaultRepetitions } from './compare';
import { isRunScope } from './judge';

export const BISECT_STATE_KIND = 'rabbitmq-perf-gate/bisect-state';
/** A/Bs an image gets before it is left undecided: the first, and one repeat with a wider cap. */
export const DEFAULT_ATTEMPTS = 2;

/** What defines a search; a state file is resumed only by the same one. */
export type BisectDefinition = Pick<BisectState, 'images' | 'scenarios' | 'duration' | 'warmup' | 'looks' | 'repetitions' | 'range'> & { attempts?: number };

/** What a step's A/B makes of its image: its answer (src/compare/compare.ts) — a regression is
 *  bad, "no regression of X % or more" good (a significant slowdown inside the margin too), not
 *  decided undecided; reports without an answer go by their verdict. */
export function outcomeOf(verdict: Verdict, answer?: Answer): BisectOutcome {
  const a = answerFor({ answer, verdict });
  return a === 'regression' ? 'bad' : a === 'no-regression' ? 'good' : 'undecided';
}

function keyOf(d: BisectDefinition): string {
  const what = { images: d.images.map((i) => i.image), scenarios: d.scenarios, duration: d.duration ?? null, warmup: d.warmup ?? null, looks: d.looks ?? null, repetitions: d.repetitions ?? null };
  return `sha256:${createHash('sha256').update(JSON.stringify(what)).digest('hex')}`;
}

export function newState(d: BisectDefinition, now = new Date()): BisectState {
  if (d.images.length < 2) throw new GateError('a bisect needs at least two images: the known-good end first, the known-bad end last', { field: 'images' });
  return {
    schemaVersion: SCHEMA_VERSION,
    kind: BISECT_STATE_KIND,
    key: keyOf(d),
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
    images: d.images,
    scenarios: d.scenarios,
    duration: d.duration,
    warmup: d.warmup,
    looks: d.looks,
    repetitions: d.repetitions,
    attempts: d.attempts ?? DEFAULT_ATTEMPTS,
    range: d.range,
    steps: [],
    seconds: 0,
  };
}

/**
 * The state to continue from: the file's, when it holds this very search (same images, scenarios
 * and design; `attempts` may be raised on resume), else a new one. A file of another search, or
 * one that is not a bisect state, is an error rather than silently overwritten.
 */
export function openState(file: string, d: BisectDefinition): { state: BisectState; resumed: boolean } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { state: newState(d), resumed: false };
    throw new GateError(`cannot read the bisect state file (${(e as NodeJS.ErrnoException).code})`, { file, field: 'state' }, 'check its permissions');
  }
  let data: BisectState;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new GateError(`the bisect state file is not valid JSON (${(e as Error).message})`, { file, field: 'state' }, 'delete it to start the search afresh');
  }
  if (!data || data.kind !== BISECT_STATE_KIND || !Array.isArray(data.steps) || !Array.isArray(data.images)) {
    throw new GateError('this file is not a bisect state file', { file, field: 'state' }, 'give another --state path, or delete the file');
  }
  if (data.schemaVersion > SCHEMA_VERSION)
    throw new GateError(
      `the bisect state file has schema version ${data.schemaVersion}, newer than this version understands`,
      { file, field: 'state' },
      'resume it with the release that wrote it, or delete it',
    );
  const fresh = newState(d);
  if (data.key !== fresh.key) {
    throw new GateError(
      `the bisect state file belongs to another search (${data.images.length} images from ${data.images[0]?.image} to ${data.images.at(-1)?.image}, scenarios ${data.scenarios})`,
      { file, field: 'state' },
      'delete it to start this search, or give this search its own --state file',
    );
  }
  return { state: { ...data, attempts: Math.max(data.attempts ?? DEFAULT_ATTEMPTS, d.attempts ?? 0) }, resumed: true };
}

export function saveState(file: string, s: BisectState): void {
  writeFileAtomic(file, JSON.stringify({ ...s, updatedAt: new Date().toISOString() }, null, 1) + '\n');
}

/** Whether the search runs the ends check: a new one does; one started without it (a state file
 *  from before it existed) goes on without it. */
const checksEnds = (s: BisectState) => s.steps.length === 0 || s.steps.some((x) => x.ends);

/** The ends check still to run: none recorded with a decision or a skip, and attempts left. */
function endsDue(s: BisectState): boolean {
  if (!checksEnds(s)) return false;
  const ends = s.steps.filter((x) => x.ends);
  return !ends.some((x) => x.outcome !== 'undecided') && ends.length < s.attempts;
}

/** What the ends check measured: the regressed gating metrics, each with the geometric midpoint of
 *  its step as the threshold later steps are judged at; undefined until it showed a regression. */
export function calibrationOf(s: BisectState): BisectCalibration | undefined {
  const ends = s.steps.find((x) => x.ends && x.outcome === 'bad');
  const steps = (ends?.gating ?? [])
    .filter((g) => worseAtEnds(g.verdict) && g.ratio !== null && g.ratio > 0)
    .map((g) => {
      // The worseness ratio (> 1 = worse) the margins are read against, and its square root.
      const worseness = metricDef(g.metric).direction === 'higher' ? 1 / g.ratio! : g.ratio!;
      return { scenario: g.scenario, metric: g.metric, ratio: g.ratio!, threshold: Math.round((Math.sqrt(worseness) - 1) * 10_000) / 10_000 };
    })
    .filter((x) => x.threshold > 0);
  if (!steps.length) return undefined;
  const thresholds: BisectCalibration['thresholds'] = {};
  for (const x of steps) (thresholds[x.scenario] ??= {})[x.metric] = x.threshold;
  return { thresholds, steps };
}

/** A gating verdict that says significantly worse: beyond the tolerance (fail) or not (warn). */
const worseAtEnds = (v: Verdict) => v === 'fail' || v === 'warn';

/** The ends check's outcome: bad when any gating metric is significantly worse, good when the A/B
 *  answered no regression with nothing significantly worse, else undecided. */
export function endsOutcome(step: BisectStep): BisectOutcome {
  if (step.gating?.some((g) => worseAtEnds(g.verdict))) return 'bad';
  return step.outcome === 'good' ? 'good' : 'undecided';
}

/** Where the search stands: the last good and first bad so far, what is left, and the culprit. */
export function bisectStatus(s: BisectState): BisectStatus {
  const calibration = calibrationOf(s);
  const withCalibration = (st: BisectStatus): BisectStatus => (calibration ? { ...st, calibration } : st);
  const verdictCount = s.steps.filter((x) => x.outcome !== 'skipped').length;
  const last = s.images.length - 1;
  if (s.steps.some((x) => x.ends && x.outcome === 'good')) {
    return { state: 'no-regression', lastGood: 0, firstBad: last, suspects: [], skipped: [], undecided: [], verdicts: verdictCount };
  }
  if (endsDue(s)) {
    return { state: 'running', lastGood: 0, firstBad: last, suspects: Array.from({ length: last }, (_, k) => k + 1), skipped: [], undecided: [], verdicts: verdictCount };
  }
  return withCalibration(searchStatus(s));
}

function searchStatus(s: BisectState): BisectStatus {
  let lastGood = 0;
  let firstBad = s.images.length - 1;
  for (const step of s.steps) {
    if (step.index <= lastGood || step.index >= firstBad) continue;
    if (step.outcome === 'good') lastGood = step.index;
    else if (step.outcome === 'bad') firstBad = step.index;
  }
  const skipped = new Set(s.steps.filter((x) => x.outcome === 'skipped').map((x) => x.index));
  const tries = new Map<number, number>();
  for (const x of s.steps) if (x.outcome === 'undecided') tries.set(x.index, (tries.get(x.index) ?? 0) + 1);
  const exhausted = new Set([...tries].filter(([i, n]) => n >= s.attempts && !skipped.has(i)).map(([i]) => i));
  const between = Array.from({ length: Math.max(0, firstBad - lastGood - 1) }, (_, k) => lastGood + 1 + k);
  const left = between.filter((i) => !skipped.has(i) && !exhausted.has(i));
  const verdicts = s.steps.filter((x) => x.outcome !== 'skipped').length;
  const inRange = (set: Set<number>) => between.filter((i) => set.has(i));
  if (left.length)
    return { state: 'running', lastGood, firstBad, suspects: [...between, firstBad], skipped: [...skipped].sort((a, b) => a - b), undecided: [...exhausted].sort((a, b) => a - b), verdicts };
  if (!between.length)
    return { state: 'found', lastGood, firstBad, culprit: firstBad, suspects: [firstBad], skipped: [...skipped].sort((a, b) => a - b), undecided: [...exhausted].sort((a, b) => a - b), verdicts };
  return {
    state: 'ambiguous',
    lastGood,
    firstBad,
    suspects: [...inRange(skipped), ...inRange(exhausted), firstBad].sort((a, b) => a - b),
    skipped: [...skipped].sort((a, b) => a - b),
    undecided: [...exhausted].sort((a, b) => a - b),
    verdicts,
  };
}

/** The image to A/B next: the known-bad end while the ends check is due, then the untested one
 *  nearest the middle of the last good and the first bad (the lower one on a tie); undefined when
 *  the search is over. */
export function nextProbe(s: BisectState): number | undefined {
  const st = bisectStatus(s);
  if (st.state !== 'running') return undefined;
  if (endsDue(s)) return s.images.length - 1;
  const out = new Set([...st.skipped, ...st.undecided]);
  const mid = (st.lastGood + st.firstBad) / 2;
  let best: number | undefined;
  for (let i = st.lastGood + 1; i < st.firstBad; i++) {
    if (out.has(i)) continue;
    if (best === undefined || Math.abs(i - mid) < Math.abs(best - mid)) best = i;
  }
  return best;
}

/** The design of an image's `attempt`-th A/B: the base looks (or fixed pairs), widened by one more
 *  cap of pairs per repeat — looks 10,…,40 become 10,…,40,80 on the second attempt. */
export function stepDesign(base: { looks?: number[]; repetitions?: number }, attempt: number): { looks?: number[]; repetitions?: number } {
  if (base.looks?.length) {
    const cap = base.looks.at(-1)!;
    return { looks: [...base.looks, ...Array.from({ length: attempt - 1 }, (_, k) => cap * (k + 2))] };
  }
  return { repetitions: base.repetitions === undefined ? undefined : base.repetitions * attempt };
}

/** How much worse a comparison is, > 1 = worse (its ratio or CI end mapped so). */
const worse = (c: Comparison, r: number | null) => (r === null ? 0 : c.direction === 'higher' ? 1 / r : r);

/** A finished A/B as a bisect step: its verdict, outcome, and the gating comparison that says most. */
export function stepFromReport(r: RunReport, index: number, image: string, attempt: number, seconds: number, startedAt: string): BisectStep {
  const gating = r.comparisons.filter((c) => c.gating && c.paired);
  const fails = gating.filter((c) => c.verdict === 'fail');
  const badEnd = (c: Comparison) => worse(c, c.direction === 'higher' ? c.ciLow : c.ciHigh) || worse(c, c.ratio);
  const head = (fails.length ? fails : gating).reduce<Comparison | undefined>((a, c) => (!a || badEnd(c) > badEnd(a) ? c : a), undefined);
  const outcome = outcomeOf(r.verdict, r.answer);
  const pairs = (c: Comparison) => Math.min(c.nBaseline, c.nCandidate);
  const undecided = gating.filter((c) => c.verdict === 'warn' || c.verdict === 'inconclusive');
  return {
    index,
    image,
    attempt,
    outcome,
    verdict: r.verdict,
    ...(head ? { scenario: head.scenario, metric: head.metric, ratio: head.ratio, ciLow: head.ciLow, ciHigh: head.ciHigh, pairs: pairs(head) } : {}),
    ...(r.sequential ? { looks: r.sequential.looks } : { repetitions: r.repetitions }),
    seed: r.seed,
    seconds: Math.round(seconds),
    startedAt,
    ...(outcome === 'undecided'
      ? { note: undecided.length ? `${undecided.map((c) => `${c.scenario} ${c.metric} ${c.verdict}`).join(', ')}: ${undecided[0].reason}` : `verdict ${r.verdict}: ${r.decidedBy}` }
      : {}),
    gating: gating.map((c) => ({ scenario: c.scenario, metric: c.metric, ratio: c.ratio, ciLow: c.ciLow, ciHigh: c.ciHigh, verdict: c.verdict, pairs: pairs(c) })),
  };
}

/** One A/B of a step: the candidate image against the good end, with this design and time left. */
export interface AbRequest {
  image: string;
  reference: string;
  /** Calibrated by the ends check: only these scenarios (comma-separated ids), and the thresholds
   *  their regressed metrics are judged at (tolerance = equivalence margin). */
  scenarios?: string;
  thresholds?: BisectCalibration['thresholds'];
  looks?: number[];
  repetitions?: number;
  /** Seconds this A/B may take (0 = no limit). */
  timeLimitSeconds: number;
  /** The step's number in the whole search (1-based), e.g. for a seed. */
  step: number;
}

export interface SearchDeps {
  /** Runs one same-run paired A/B (the pipeline) and returns its report. */
  runAb(req: AbRequest): Promise<RunReport>;
  /** The A/B failed because its candidate could not be pulled or started (a skip), not the
   *  reference or the environment (which end the search). */
  candidateFailed(e: unknown): boolean | Promise<boolean>;
  /** Called after every step with the new state (the caller writes the state file). */
  save(s: BisectState): void;
  log(message: string): void;
  /** The base design: looks, or fixed pairs. */
  design: { looks?: number[]; repetitions?: number };
  /** Seconds this session may take (0 = no limit). */
  timeLimitSeconds: number;
  signal?: AbortSignal;
  /** Writes a step's report somewhere and returns its path for the state (optional). */
  keepReport?(r: RunReport, step: BisectStep, n: number): string | undefined;
  describe(e: unknown): string;
  now?(): number;
}

/** Runs the search from `state` until it ends, its time is up, or it is interrupted; the state is
 *  saved after every step. Returns the state and why it stopped early, if it did. */
export async function searchBisect(state: BisectState, deps: SearchDeps): Promise<{ state: BisectState; stopped?: string }> {
  const now = deps.now ?? Date.now;
  const started = now();
  const limitMs = deps.timeLimitSeconds > 0 ? deps.timeLimitSeconds * 1000 : Number.POSITIVE_INFINITY;
  let s = state;
  for (;;) {
    if (deps.signal?.aborted) return { state: s, stopped: 'interrupted' };
    const index = nextProbe(s);
    if (index === undefined) return { state: s };
    const left = limitMs - (now() - started);
    if (left < 1000) return { state: s, stopped: `the time limit of ${Math.round((limitMs / 60000) * 10) / 10} min was reached` };
    const image = s.images[index].image;
    const ends = endsDue(s);
    const attempt = 1 + s.steps.filter((x) => x.index === index && x.outcome === 'undecided' && !!x.ends === ends).length;
    const design = stepDesign(deps.design, attempt);
    const st = bisectStatus(s);
    const again = attempt > 1 ? `, attempt ${attempt}: undecided before, so again with ${design.looks ? `looks ${design.looks.join(', ')}` : `${design.repetitions} pairs`}` : '';
    deps.log(
      ends
        ? `Bisect step ${s.steps.length + 1}: the ends check, ${image} (the known-bad end) against the known-good end: does the range regress, and by how much?${again}`
        : `Bisect step ${s.steps.length + 1}: ${image} (image ${index + 1} of ${s.images.length}; first bad between ${st.lastGood + 2} and ${st.firstBad + 1})${again}`,
    );
    const cal = ends ? undefined : st.calibration;
    const t0 = now();
    const startedAt = new Date(t0).toISOString();
    let report: RunReport;
    try {
      report = await deps.runAb({
        image,
        reference: s.images[0].image,
        ...design,
        ...(cal ? { scenarios: Object.keys(cal.thresholds).join(','), thresholds: cal.thresholds } : {}),
        timeLimitSeconds: Number.isFinite(left) ? Math.floor(left / 1000) : 0,
        step: s.steps.length + 1,
      });
    } catch (e) {
      if (deps.signal?.aborted) return { state: s, stopped: 'interrupted' };
      if (!(await deps.candidateFailed(e))) throw e;
      const step: BisectStep = {
        index,
        image,
        ...(ends ? { ends: true } : {}),
        attempt,
        outcome: 'skipped',
        seconds: Math.round((now() - t0) / 1000),
        startedAt,
        note: `could not be pulled or started: ${deps.describe(e)}${ends ? '; the search goes on without the ends check, at the scenarios’ own margins' : ''}`,
      };
      deps.log(`Skipping ${image}: ${step.note}`);
      s = { ...s, steps: [...s.steps, step], seconds: s.seconds + step.seconds };
      deps.save(s);
      continue;
    }
    // A step cut short (time limit, Ctrl-C) decided nothing: it is not recorded and runs again on resume.
    const cut = report.errors.find((e) => isRunScope(e.scope));
    if (deps.signal?.aborted) return { state: { ...s, seconds: s.seconds + Math.round((now() - t0) / 1000) }, stopped: 'interrupted' };
    if (cut) return { state: { ...s, seconds: s.seconds + Math.round((now() - t0) / 1000) }, stopped: `the time limit was reached during the A/B of ${image} (${cut.message})` };
    const step = stepFromReport(report, index, image, attempt, (now() - t0) / 1000, startedAt);
    if (ends) {
      step.ends = true;
      step.outcome = endsOutcome(step);
      if (step.outcome !== 'undecided') delete step.note;
    }
    const kept = deps.keepReport?.(report, step, s.steps.length + 1);
    if (kept) step.report = kept;
    deps.log(`${image}: ${step.outcome} (verdict ${step.verdict}${step.ratio != null ? `, ${step.metric} ratio ${step.ratio.toFixed(3)}` : ''}, ${step.seconds} s)`);
    s = { ...s, steps: [...s.steps, step], seconds: s.seconds + step.seconds };
    deps.save(s);
    if (ends) logEnds(s, deps.log);
  }
}

/** What the ends check decided, in one line. */
function logEnds(s: BisectState, log: (m: string) => void): void {
  const st = bisectStatus(s);
  if (st.state === 'no-regression') log('The known-bad end shows no regression against the known-good end: nothing to search.');
  else if (st.calibration) log(`The ends: ${calibrationText(st.calibration)}.`);
  else if (!endsDue(s)) log("The ends check did not size the step: later steps are judged at the scenarios' own margins.");
}

/** "one_fast consumed_rate −15.2 % between the ends: later steps A/B one_fast only, judged at 7.9 %". */
export function calibrationText(c: BisectCalibration): string {
  const steps = c.steps.map((x) => `${x.scenario} ${x.metric} ${((x.ratio - 1) * 100).toFixed(1).replace('-', '−')} %`).join(', ');
  const at = c.steps.map((x) => `${(x.threshold * 100).toFixed(1)} %`).join(', ');
  return `${steps} between the ends; later steps A/B ${Object.keys(c.thresholds).join(', ')} only, each judged at the midpoint of its step (${at}): worse than that is bad, a CI whose bad end stays inside it good`;
}

/** The base design of every step: the given looks, else fixed pairs when given, else the
 *  selection's preset looks, else its fixed A/B pairs. */
export function baseDesign(scenarios: string, looks: number[] | undefined, repetitions: number | undefined, cwd?: string): { looks?: number[]; repetitions?: number } {
  if (looks?.length) return { looks };
  if (repetitions !== undefined) return { repetitions };
  const sel = resolveScenarios(scenarios, cwd);
  return sel.looks?.length ? { looks: sel.looks } : { repetitions: defaultRepetitions(sel.scenarios, true, sel.pairs) };
}

/** What a step's A/B asks of the pipeline (a subset of its RunOptions). */
export interface AbRunOptions {
  scenarios: string;
  /** scenario → metric → tolerance and equivalence margin in one (a calibrated bisect step). */
  thresholds?: BisectCalibration['thresholds'];
  candidate: DockerTargetSpec;
  reference: DockerTargetSpec;
  mode: 'check';
  looks?: number[];
  repetitions?: number;
  sequential: boolean;
  duration?: number;
  warmup?: number;
  seed?: number;
  timeLimitSeconds: number;
  signal?: AbortSignal;
  runId?: string;
  cwd?: string;
}

export interface SessionOptions {
  definition: BisectDefinition;
  stateFile: string;
  /** Minutes this session may take (0 = none). */
  timeLimitMinutes: number;
  /** Base seed: step k's A/B uses seed + k (random per step when absent). */
  seed?: number;
  runId?: string;
  cwd?: string;
  signal?: AbortSignal;
}

export interface SessionDeps {
  /** The pipeline: one same-run paired A/B. */
  runAb(o: AbRunOptions): Promise<RunReport>;
  candidateFailed(e: unknown): Promise<boolean>;
  log(message: string): void;
  describe(e: unknown): string;
}

const dockerTarget = (id: string, image: string, label: string): DockerTargetSpec => ({ id, label, kind: 'docker', image, configFiles: [], nodes: 1, env: {}, setup: [], network: 'host' });

/**
 * One bisect session, as the CLI and the action run it: opens (or resumes) the state file, runs
 * the search with each step an A/B through the pipeline, keeps every step's report.json next to
 * the state file, and returns the report — with the commits the culprit stands for when the
 * images came from a git range.
 */
export async function bisectSession(o: SessionOptions, deps: SessionDeps): Promise<BisectReport> {
  const d = o.definition;
  const design = baseDesign(d.scenarios, d.looks, d.repetitions, o.cwd);
  const { state, resumed } = openState(o.stateFile, d);
  const done = state.steps.length;
  if (resumed) deps.log(`Resuming the bisect in ${o.stateFile}: ${done} step${done === 1 ? '' : 's'} done (${bisectStatus(state).state})`);
  else saveState(o.stateFile, state);
  const folder = dirname(o.stateFile);
  const good = state.images[0].image;
  const { state: after, stopped } = await searchBisect(state, {
    design,
    timeLimitSeconds: o.timeLimitMinutes * 60,
    signal: o.signal,
    log: deps.log,
    describe: deps.describe,
    candidateFailed: deps.candidateFailed,
    save: (x) => saveState(o.stateFile, x),
    runAb: (req) =>
      deps.runAb({
        scenarios: req.scenarios ?? d.scenarios,
        ...(req.thresholds ? { thresholds: req.thresholds } : {}),
        mode: 'check',
        sequential: true,
        candidate: dockerTarget('candidate', req.image, req.image),
        reference: dockerTarget('good-end', req.reference, `${good} (good end)`),
        looks: req.looks,
        repetitions: req.repetitions,
        duration: d.duration,
        warmup: d.warmup,
        seed: o.seed === undefined ? undefined : o.seed + req.step,
        timeLimitSeconds: req.timeLimitSeconds,
        signal: o.signal,
        runId: o.runId,
        cwd: o.cwd,
      }),
    keepReport: (r, _step, n) => {
      const file = join(folder, 'bisect-steps', `step-${n}.json`);
      writeFileAtomic(file, JSON.stringify(r, null, 1) + '\n');
      return relative(folder, file);
    },
  });
  const status = bisectStatus(after);
  const from = after.images[status.lastGood].commit;
  const to = after.images[status.firstBad].commit;
  const commits = status.state !== 'running' && from && to && after.range?.repo ? await commitsBetween(after.range.repo, from, to) : undefined;
  return {
    kind: 'rabbitmq-perf-gate/bisect',
    tool: { name: TOOL, version: TOOL_VERSION },
    createdAt: new Date().toISOString(),
    state: after,
    status,
    ...(stopped ? { stopped } : {}),
    ...(commits ? { commits } : {}),
    fingerprint: fingerprint(),
  };
}
