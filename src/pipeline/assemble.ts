// Stage 5 of a run — assemble: the RunReport from what ran. Judged by src/compare/judge.ts (the
// same-run reference decides when there is one, the stored baseline otherwise), with the two
// brokers' effective configurations compared, the sequential summary, the machine's load, and what a
// resume needs when the run stopped early; and, after the trials, the policies that shaped nothing. A checkpoint saved
// after each trial is assembled the same way but not judged (judging grows with every trial).
import { anchorOf, movedTagNote } from '../broker/anchor';
import { effectDiff, unmatchedPolicies } from '../broker/effective';
import { resumeRecord } from '../broker/resume';
import { storedMismatch, trialValues } from '../compare/baseline-file';
import { isRunScope, judge, type Judgement } from '../compare/judge';
import { fingerprint, TOOL, TOOL_VERSION } from '../metrics/fingerprint';
import { buildPlan, estimateSeconds } from '../plan/plan';
import type { MachineLoad, RunReport, TargetInfo } from '../schema/types';
import { SCHEMA_VERSION } from '../schema/types';
import { abortReason } from '../workload/trial';
import type { RunState } from './state';

/** Why the run stopped early, and the trial it cut short. */
export interface Stop {
  why: string;
  cut?: RunState['lastRun'];
}

/** The report of what has run so far. `checkpoint`: saved after a trial of a run still going, not judged. */
export function packaged(s: RunState, stop?: Stop, moved?: string, checkpoint = false): RunReport {
  const { opts, prior } = s;
  const message =
    stop && `Stopped early: ${stop.why} after ${s.trials.length} of ${s.planned} planned trials${stop.cut ? ' (the last one cut short)' : ''}; ${s.planned - s.trials.length} did not start.`;
  const targetNote = [opts.targetNote, s.anchor?.note, moved].filter(Boolean).join('; ') || undefined;
  const errors = message ? [...s.errors, { scope: 'run', message }] : [...s.errors];
  const fp = fingerprint();
  const judgement: Judgement = checkpoint
    ? {
        comparisons: [],
        decidedBy: 'not judged yet: saved after a trial of a run still going (run --resume DIR goes on and judges it)',
        verdict: 'inconclusive',
        answer: 'undecided',
        regressions: 0,
        improvements: 0,
      }
    : judgementOf({ ...s, errors }, fp);
  const report: RunReport = {
    schemaVersion: SCHEMA_VERSION,
    tool: { name: TOOL, version: TOOL_VERSION },
    createdAt: new Date(s.started).toISOString(),
    mode: opts.mode,
    fingerprint: fp,
    preset: s.selection.name,
    repetitions: s.repetitions,
    seed: s.seed,
    scenarios: s.scenarios,
    targets: s.handles.map((h) => h.info),
    candidate: opts.candidate.id,
    trials: s.trials,
    ...judgement,
    targetNote,
    targetDiff: opts.targetDiff,
    ...effectOfTargets(s.handles.map((h) => h.info)),
    errors,
    durationSeconds: Math.round((Date.now() - s.started) / 1000),
  };
  if (s.seq)
    report.sequential = s.seq.summary((id) =>
      estimateSeconds(
        buildPlan(
          s.scenarios.filter((x) => x.id === id),
          ['x'],
          1,
          0,
        ),
      ),
    );
  report.machine = s.watch.summary([...s.kept.values()].map((t) => t.machine).filter((m): m is MachineLoad => m !== undefined));
  if (prior) {
    report.createdAt = prior.createdAt;
    report.durationSeconds += prior.durationSeconds;
    report.resumed = [...(prior.resumed ?? []), { at: new Date(s.started).toISOString(), kept: s.kept.size }];
  }
  if (stop) {
    const { given } = s;
    report.resume = resumeRecord({
      candidate: given.candidate,
      reference: given.reference,
      freezeIdle: opts.freezeIdle !== false,
      anchor: opts.anchor !== false,
      failFast: opts.failFast !== false,
      flameGraph: opts.flameGraph === true,
      targetNote: given.targetNote,
      targetDiff: given.targetDiff,
      planned: s.planned,
      ...(stop.cut ? { cut: stop.cut.order } : {}),
    });
  }
  return report;
}

/** The final report, after the brokers stopped: why the run stopped early (if it did), a moved
 *  image tag, the flame graphs, and (refresh) the broker a later check starts again. */
export async function assemble(s: RunState): Promise<RunReport> {
  const { opts, ui } = s;
  // A run that stopped early says so once, as a run-level error: the verdict cannot be a pass.
  const why = opts.signal?.aborted ? abortReason(opts.signal) : s.limit.signal.aborted ? `the run's time limit of ${s.limit.text} was reached` : undefined;
  const cut = why && s.lastRun && s.trials.at(-1) === s.lastRun && !s.lastRun.valid ? s.lastRun : undefined;
  const moved = movedTagNote(opts.stored?.anchor, s.handles.find((h) => h.info.id === opts.candidate.id)?.info);
  if (moved) ui.info(moved);
  const report = packaged(s, why ? { why, cut } : undefined, moved);
  if (s.flames.length) report.flames = s.flames;
  if (s.flameNote) report.flameNote = s.flameNote;
  const candInfo = report.targets.find((t) => t.id === report.candidate);
  if (opts.mode === 'refresh' && candInfo) report.anchor = await anchorOf(opts.candidate, candInfo).catch(() => undefined);
  return report;
}

/** After the trials: a policy a target declared that is in effect on no queue of the run shaped
 *  nothing measured (a warning and a configuration error in the report). */
export function warnUnmatchedPolicies(s: RunState): void {
  for (const spec of s.specs) {
    for (const p of unmatchedPolicies(
      s.inheritedBy.get(spec.id),
      s.trials.filter((t) => t.target === spec.id),
    )) {
      const message = `${p} is in effect on no queue of this run's scenarios, so it shaped nothing that was measured. Fix: check its pattern and apply-to against the scenarios' queue names, or its priority against other policies`;
      s.ui.warn(`${spec.label}: ${message}`);
      s.errors.push({ scope: `${spec.label}: configuration`, message });
    }
  }
}

/** Two targets read back from their brokers: identical in effect, or where they differ. */
function effectOfTargets(infos: TargetInfo[]): { effectNote?: string; effectDiff?: string[] } {
  const [x, y] = infos;
  if (infos.length !== 2 || !x.effective || !y.effective) return {};
  const diff = effectDiff(x.effective, y.effective, [x.label, y.label]);
  const partial = !x.effective.node || !y.effective.node ? ' as far as the management API shows (node settings were not readable on both)' : '';
  if (diff.length) return { effectNote: `${x.label} and ${y.label} differ in effect${partial}: ${diff.length === 1 ? diff[0] : `${diff.length} differences`}`, effectDiff: diff };
  const files =
    x.configDigest && y.configDigest && x.configDigest !== y.configDigest ? ' — their files differ, but read back from the brokers every setting, feature flag, plugin and policy is the same' : '';
  return { effectNote: `${x.label} and ${y.label} are identical in effect${partial}: nothing the broker runs changed${files}` };
}

/** The run's judgement (src/compare/judge.ts): the same-run reference decides when present, the
 *  stored baseline otherwise. */
export function judgementOf(s: Pick<RunState, 'opts' | 'handles' | 'trials' | 'scenarios' | 'errors' | 'design' | 'focus'>, fp = fingerprint()): Judgement {
  const { opts } = s;
  const candidate = opts.candidate.id;
  const candInfo = s.handles.find((h) => h.info.id === candidate)?.info;
  const candSample = { label: opts.candidate.label, values: trialValues({ trials: s.trials }, candidate) };
  const stored = opts.stored && opts.mode === 'check' && candInfo ? opts.stored : undefined;
  return judge({
    scenarios: s.scenarios,
    trials: s.trials,
    candidate: { id: candidate, ...candSample },
    sameRun: opts.reference && {
      ...opts.reference,
      how:
        `: both targets ran on this runner, each round's pair back to back${s.focus?.freezing ? ', the idle one frozen' : ''}, compared pair by pair` +
        (s.design ? `, group-sequential (looks at ${s.design.looks.join(', ')} pairs)` : ''),
      ...(s.design ? { level: { alpha: s.design.level, bonferroni: s.design.family } } : {}),
    },
    independent: stored && {
      sample: { label: 'stored baseline', values: Object.fromEntries(Object.entries(stored.scenarios).map(([k, v]) => [k, v.metrics])) },
      against: 'stored',
      mayNotFail: storedMismatch(stored, fp, candInfo!, s.scenarios),
      what: 'stored baseline',
      matching: ', recorded on a matching runner',
    },
    judged: opts.mode === 'check' || opts.reference !== undefined,
    incomplete: s.errors.some((e) => isRunScope(e.scope)),
  });
}
