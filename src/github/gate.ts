// The action's measuring modes: check and refresh (run the matrix, or one shard of it, on this
// runner) and merge (combine the shards' reports into one report, verdict and comment). Each
// returns an Outcome for main.ts to turn into outputs and an exit status.
import * as core from '@actions/core';
import { resolve } from 'node:path';
import type { Baseline, RunReport, TrialResult } from '../schema/types';
import type { ActionSettings } from '../config/action-inputs';
import { readBaseline } from '../compare/baseline-file';
import { newRunId, runPipeline, type Ui } from '../pipeline';
import { annotate, commentOnPullRequest, publishReport } from './publish';
import type { RunContext } from './context';
import { refreshBaseline } from './refresh';
import { findReports, readReportFile } from './report-input';
import { mergeReports } from './merge';
import { chooseTargets } from './targets-input';

export interface Outcome {
  report: RunReport;
  reportFile: string;
  commentUrl?: string;
  refreshUrl?: string;
  /** Whether this step's verdict gates (fails the step on a regression); shards and comment steps do not. */
  decides: boolean;
  /** One sentence for what went wrong in the run (stopped early, failed trials), for one annotation. */
  problem?: string;
  /** The run stopped before its plan was done (time limit): the step fails with `problem`. */
  stoppedEarly?: boolean;
  /** Something was already annotated as an error (e.g. report files not written): the step fails. */
  failed?: boolean;
}

/** The run's problems in one sentence: why it stopped early, and how many trials are invalid and why. */
export function runProblem(report: RunReport): string | undefined {
  const stop = report.errors.find((e) => e.scope === 'run');
  const invalid = report.trials.filter((t) => !t.valid);
  if (!stop && !invalid.length) return undefined;
  const first = invalid[0];
  const reason = (first?.invalidReason ?? first?.error ?? 'unknown reason').replace(/\s+/g, ' ');
  const trials = first
    ? `${invalid.length} of ${report.trials.length} trials invalid (first: ${first.scenario} on ${first.target}, trial ${first.trial + 1}: ${reason.length > 300 ? `${reason.slice(0, 300)}…` : reason})`
    : '';
  const verdict = `Verdict ${report.verdict}; the results are in the report and the job summary.`;
  return [stop?.message, trials && `${trials}.`, verdict].filter(Boolean).join(' ');
}

export const actionUi: Ui = {
  info: (m) => core.info(m),
  warn: (m) => core.warning(m),
  group: (name, fn) => core.group(name, fn),
  trialDone: (done: number, total: number, t: TrialResult, eta: number) => {
    const m = t.metrics;
    const figures = ['published_rate', 'consumed_rate', 'latency_p99_ms'].filter((k) => k in m).map((k) => `${k}=${m[k]}`).join(' ');
    core.info(`[${done}/${total}] ${t.scenario} on ${t.target} #${t.trial + 1}: ${t.valid ? figures : `INVALID (${t.invalidReason})`} — about ${Math.round(eta)} s left`);
  },
};

export const workspaceDir = (): string => process.env.GITHUB_WORKSPACE ?? process.cwd();

/** The stored baseline if it can be read; a missing one is a notice (unless quiet), a broken one an error annotation. */
export function storedBaseline(file: string, quiet = false): Baseline | undefined {
  const read = readBaseline(file);
  if (read.status === 'ok') return read.baseline;
  if (read.status === 'missing' && !quiet) core.notice(`No stored baseline at ${file}: nothing to compare with until a refresh writes one.`);
  else if (read.status === 'unusable') annotate(read.error);
  return undefined;
}

export async function runMode(s: ActionSettings, ctx: RunContext, signal: AbortSignal): Promise<Outcome> {
  const workspace = workspaceDir();
  const baselinePath = resolve(workspace, s.baselineFile);
  const runId = newRunId();
  core.saveState('run-id', runId);
  const stored = storedBaseline(baselinePath);
  const mode = s.mode === 'refresh' ? 'refresh' : 'check';
  if (s.shard) core.info(`Shard ${s.shard.index}/${s.shard.count}: running its balanced share of "${s.scenarios}".`);
  const targets = await chooseTargets(s, ctx, workspace);
  const report = await runPipeline({
    scenarios: s.scenarios, candidate: targets.candidate, reference: targets.reference, repetitions: s.repetitions, seed: s.seed, shard: s.shard,
    mode, stored, duration: s.duration, warmup: s.warmup, cwd: workspace, runId, signal, targetNote: targets.note, targetDiff: targets.diff,
    timeLimitSeconds: s.timeLimitMinutes * 60,
  }, actionUi);
  const pub = await publishReport(report, s, ctx, stored?.history);
  const out: Outcome = {
    report, reportFile: pub.json, decides: mode === 'check' && !s.shard, failed: pub.failed,
    problem: runProblem(report), stoppedEarly: report.errors.some((e) => e.scope === 'run') && !signal.aborted,
  };
  if (signal.aborted) {
    // A cancelled job: what ran is in the report files and the job summary; no comment (a newer
    // run usually replaces this one) and no baseline write.
    core.info('comment: skipped, the run was cancelled');
    if (mode === 'refresh') core.info(`The run was cancelled: the stored baseline ${baselinePath} was left untouched.`);
  } else if (mode === 'refresh') out.refreshUrl = await refreshBaseline(report, s, ctx, baselinePath, stored);
  else if (s.shard) core.info(`comment: none from shard ${s.shard.index}/${s.shard.count}; the merge step (mode: merge) comments on the whole matrix`);
  else {
    const c = await commentOnPullRequest(report, ctx, s, pub.trend);
    core.info(c.message);
    out.commentUrl = c.url;
  }
  return out;
}

export async function mergeMode(s: ActionSettings, ctx: RunContext): Promise<Outcome> {
  const workspace = workspaceDir();
  const files = findReports(s.reports!, workspace);
  const parts = files.map((file) => ({ file, report: readReportFile(file) }));
  core.info(`Merging ${parts.length} shard report(s): ${files.join(', ')}`);
  const stored = storedBaseline(resolve(workspace, s.baselineFile));
  const report = mergeReports(parts, stored, (m) => core.warning(m, { title: 'rabbitmq-perf-gate merge' }));
  const pub = await publishReport(report, s, ctx, stored?.history);
  const c = await commentOnPullRequest(report, ctx, s, pub.trend);
  core.info(c.message);
  return { report, reportFile: pub.json, commentUrl: c.url, decides: true, failed: pub.failed, problem: runProblem(report) };
}
