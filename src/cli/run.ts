// `run` and `refresh`: the same pipeline as the action, on this machine's brokers or containers;
// progress on stderr, the result on stdout, report files in --out, and with refresh the baseline.
// SIGINT/SIGTERM keep what ran (src/broker/cleanup.ts: interruptible — the action's contract):
// containers removed first, the trials that finished written with "Stopped early: the run was
// interrupted after N of M planned trials", no baseline, exit 130/143. report.json is also saved
// after each trial, so that a killed run (SIGKILL, OOM) leaves what ran; --resume DIR goes on with
// either (same seed and plan; its targets started again and proved the same brokers).
import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { DEFAULTS } from '../config/defaults';
import type { Baseline, ResumeRecord, RunReport } from '../schema/types';
import { describeError, GateError } from '../schema/errors';
import { resolveScenarios } from '../config/catalogue';
import { parseLooks } from '../config/looks';
import { cliTargets, runIdFromEnv } from '../config/cli-targets';
import { interruptible } from '../broker/cleanup';
import { resumedTargets } from '../broker/resume';
import { baselineFromRun } from '../compare/baseline-file';
import { readBaseline, readStored, writeBaseline } from '../compare/stored';
import { isRunScope } from '../compare/judge';
import { runPipeline } from '../pipeline/run';
import { renderSummary } from '../report/markdown';
import { writeReportFiles, writeReportJson } from '../report/files';
import { terminalUi } from '../report/progress';
import { machineText } from '../report/machine';
import { emit, numberOpt, type Values } from './shared';

/** Options that would change a resumed run's plan or trials: they come from the interrupted run. */
const PLAN_OPTIONS = ['scenarios', 'repetitions', 'seed', 'duration', 'warmup', 'looks', 'no-sequential', 'no-fail-fast', 'no-freeze', 'flame-graph', 'no-anchor'] as const;
const TARGET_OPTIONS = ['image', 'target', 'baseline-image', 'baseline-target', 'broker-url', 'management-url', 'broker-label'] as const;

interface Interrupted {
  report: RunReport;
  file: string;
  dir: string;
  record: ResumeRecord;
}

/** The run --resume DIR goes on with: DIR's report.json (or that file itself), which must have stopped early. */
function interruptedRun(given: string, mode: 'check' | 'refresh', v: Values): Interrupted {
  const path = resolve(given);
  const file = existsSync(path) && statSync(path).isFile() ? path : join(path, 'report.json');
  const { report } = readStored(file);
  if (!report) throw new GateError('is a baseline, not the report.json of a run', { file, field: '--resume' }, 'give the --out folder of the interrupted run');
  if (!report.resume) {
    throw new GateError(
      report.errors.some((e) => isRunScope(e.scope))
        ? 'this run stopped early, but its report records nothing to resume from (an older version wrote it)'
        : 'this run finished: there is nothing to resume',
      { file, field: '--resume' },
      'start a new run',
    );
  }
  const kind = report.mode === 'refresh' ? 'refresh' : 'check';
  if (kind !== mode)
    throw new GateError(
      `it is a ${kind === 'refresh' ? 'refresh' : 'run'}`,
      { file, field: '--resume' },
      `resume it with "rabbitmq-perf-gate ${kind === 'refresh' ? 'refresh' : 'run'} --resume ${given}"`,
    );
  const fixed = PLAN_OPTIONS.find((o) => v[o] !== undefined);
  if (fixed) throw new GateError(`cannot be combined with --resume: the resumed run keeps the interrupted run's seed, plan and settings`, { field: `--${fixed}` }, `drop --${fixed}`);
  return { report, file, dir: dirname(file), record: report.resume };
}

export async function runCommand(mode: 'check' | 'refresh', v: Values): Promise<number> {
  const prior = v.resume !== undefined ? interruptedRun(v.resume, mode, v) : undefined;
  const baselineFile = resolve(v['baseline-file'] ?? prior?.record.baselineFile ?? DEFAULTS.baselineFile);
  // A resume starts the recorded targets unless the command line names them (then they must be the same brokers).
  const { candidate, reference, note, diff } =
    prior && !TARGET_OPTIONS.some((o) => v[o] !== undefined)
      ? { ...resumedTargets(prior.record, prior.file), note: prior.record.targetNote, diff: prior.record.targetDiff }
      : await cliTargets(mode, v);
  const runId = runIdFromEnv();
  if (!prior) resolveScenarios(v.scenarios ?? DEFAULTS.scenarios); // bad scenario input fails here, before anything else is said
  const r = prior?.record;
  const opts = r
    ? { freezeIdle: r.freezeIdle, anchor: r.anchor, failFast: r.failFast, flameGraph: r.flameGraph }
    : {
        repetitions: numberOpt('repetitions', v.repetitions, 1, true),
        seed: numberOpt('seed', v.seed, 0, true),
        duration: numberOpt('duration', v.duration, 1),
        warmup: numberOpt('warmup', v.warmup, 0),
        freezeIdle: !v['no-freeze'],
        anchor: !v['no-anchor'],
        sequential: !v['no-sequential'],
        failFast: !v['no-fail-fast'],
        flameGraph: v['flame-graph'] === true,
        looks: v.looks === undefined ? undefined : parseLooks(v.looks, '--looks'),
      };
  const outDir = resolve(v.out ?? prior?.dir ?? DEFAULTS.reportDir);
  const ui = terminalUi(Object.fromEntries([candidate, reference].filter((t) => t).map((t) => [t!.id, t!.label])));
  const read = readBaseline(baselineFile);
  if (read.status === 'unusable') ui.warn(`${read.error.describe()} — continuing without a stored baseline`);
  if (read.status === 'missing' && mode === 'check' && !reference) ui.info(`no stored baseline at ${baselineFile}: nothing to compare with (create one with "refresh")`);
  const stored: Baseline | undefined = read.status === 'ok' ? read.baseline : undefined;
  let interruptedBy: NodeJS.Signals | undefined;
  let unsaved = false;
  /** After each trial: report.json as it stands, so that a killed run can be resumed too. */
  const checkpoint = (r: RunReport) => {
    if (r.resume) r.resume.baselineFile = baselineFile;
    try {
      writeReportJson(outDir, r);
    } catch (e) {
      if (!unsaved) ui.warn(`could not save the report after a trial (${describeError(e)}); it is written at the end`);
      unsaved = true;
    }
  };
  return interruptible(
    async (signal) => {
      let report: RunReport;
      try {
        report = await runPipeline(
          {
            scenarios: v.scenarios ?? DEFAULTS.scenarios,
            candidate,
            reference,
            mode,
            stored,
            signal,
            runId,
            targetNote: note,
            targetDiff: diff,
            ...opts,
            checkpoint,
            ...(prior ? { resume: { report: prior.report, file: prior.file } } : {}),
          },
          ui,
        );
      } finally {
        ui.stop();
      }
      if (report.resume) report.resume.baselineFile = baselineFile;
      const summary = renderSummary(report, { name: 'rabbitmq-perf-gate' });
      const files = writeReportFiles(outDir, report, summary);
      if (mode === 'refresh' && !signal.aborted) {
        if (!report.trials.some((t) => t.valid && t.target === report.candidate)) throw new GateError('no valid trials; the stored baseline was left untouched', { file: baselineFile });
        writeBaseline(baselineFile, baselineFromRun(report, stored));
        ui.info(`baseline written to ${baselineFile}`);
      }
      emit(report, v, () => summary);
      const machine = machineText(report);
      if (machine) (report.machine?.busy ? ui.warn : ui.info)(machine);
      ui.info(`report: ${files.json}`);
      if (signal.aborted) {
        const stop = report.errors.find((e) => isRunScope(e.scope))?.message ?? 'Stopped early.';
        ui.warn(
          `${stop} The containers were removed; the trials that ran are in ${files.json} (summary.md, report.html)` +
            `${mode === 'refresh' ? `; the stored baseline ${baselineFile} was left untouched` : ''}. Go on with: rabbitmq-perf-gate ${mode === 'refresh' ? 'refresh' : 'run'} --resume ${outDir}`,
        );
        return interruptedBy === 'SIGTERM' ? 143 : 130;
      }
      return report.verdict === 'fail' ? 1 : 0;
    },
    {
      reason: () => 'the run was interrupted',
      drainMs: 30_000,
      onSignal: (sig) => {
        interruptedBy = sig;
        ui.warn(`${sig}: removing the containers, then writing the report of the trials that ran (${sig === 'SIGINT' ? 'Ctrl-C' : 'a second signal'} again quits at once)`);
      },
      onTimeout: () => process.stderr.write('error: the report of the interrupted run could not be written within 30 s; exiting without it\n'),
    },
  );
}
