// The action's measuring modes: check and refresh (run the matrix, or one shard of it, on this
// runner) and merge (combine the shards' reports into one report, verdict and comment). Each
// returns an Outcome for main.ts to turn into outputs and an exit status.
import { isRunScope } from '../compare/judge';
import * as core from '@actions/core';
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import type { Baseline, RunReport, TrialResult } from '../schema/types';
import type { ActionSettings } from '../config/action-inputs';
import { type BaselineRead, parseBaseline, readBaseline, readReport } from '../compare/stored';
import { newRunId, runPipeline, type Ui } from '../pipeline/run';
import { annotate, commentOnPullRequest, publishReport } from './publish';
import { workspaceDir } from './context';
import type { RunContext } from './context';
import { refreshBaseline } from './refresh';
import { findReports } from './report-input';
import { mergeReports } from './merge';
import { chooseTargets, sourceAt } from './targets-input';
import { gitCommit, hasCommit } from '../config/file-source';

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
  const stop = report.errors.find((e) => isRunScope(e.scope));
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
    const figures = ['published_rate', 'consumed_rate', 'latency_p99_ms']
      .filter((k) => k in m)
      .map((k) => `${k}=${m[k]}`)
      .join(' ');
    core.info(`[${done}/${total}] ${t.scenario} on ${t.target} #${t.trial + 1}: ${t.valid ? figures : `INVALID (${t.invalidReason})`} — about ${Math.round(eta)} s left`);
  },
};

/** The stored baseline if it can be read; a missing one is a notice (unless quiet), a broken one an error annotation. */
export function storedBaseline(file: string, quiet = false, read: BaselineRead = readBaseline(file)): Baseline | undefined {
  if (read.status === 'ok') return read.baseline;
  if (read.status === 'missing' && !quiet) core.notice(`No stored baseline at ${file}: nothing to compare with until a refresh writes one.`);
  else if (read.status === 'unusable') annotate(read.error);
  return undefined;
}

/**
 * The stored baseline a check compares with. On a pull request it is the base commit's version
 * of the file: the PR's own checkout is untrusted for this purpose (a PR that edits the baseline
 * would otherwise move the bar it is measured against). A refresh reads the workspace.
 */
async function baselineForRun(s: ActionSettings, ctx: RunContext, workspace: string, file: string): Promise<Baseline | undefined> {
  if (s.mode === 'refresh' || !ctx.pullNumber || !ctx.baseSha) return storedBaseline(file);
  const path = relative(workspace, file).split(sep).join('/');
  if (!path || path.startsWith('..') || isAbsolute(path)) return storedBaseline(file);
  // The checkout's git objects are authoritative (a missing file there means the PR adds it); the
  // REST API's 404 is ambiguous (unknown commit or no file), so only bytes it returns are used.
  const fromGit = await hasCommit(workspace, ctx.baseSha);
  const source = fromGit ? gitCommit(workspace, ctx.baseSha) : await sourceAt(ctx.baseSha, workspace, ctx, s.token);
  let base: Buffer | undefined;
  try {
    base = await source.read(path);
  } catch (e) {
    core.info(`Could not read ${path} at the base commit (${source.name}: ${(e as Error).message}); using the checkout's copy.`);
    return storedBaseline(file);
  }
  const head = existsSync(file) ? readFileSync(file) : undefined;
  if (!base && !fromGit) {
    if (head) core.info(`The base commit's ${path} could not be read (fetch the base commit, e.g. actions/checkout fetch-depth: 0, or give a github-token); using the checkout's copy.`);
    return storedBaseline(file);
  }
  if (head && base?.equals(head)) return storedBaseline(file);
  if (head || base) {
    core.notice(
      `This pull request ${base ? (head ? 'edits' : 'deletes') : 'adds'} ${path}: the check compares with the base commit's version (${source.name}), so a pull request cannot move its own baseline.`,
    );
  }
  return storedBaseline(file, false, base ? parseBaseline(base.toString('utf8'), `${path} at ${ctx.baseSha.slice(0, 12)}`) : { status: 'missing' });
}

export async function runMode(s: ActionSettings, ctx: RunContext, signal: AbortSignal): Promise<Outcome> {
  const workspace = workspaceDir();
  const baselinePath = resolve(workspace, s.baselineFile);
  const runId = newRunId();
  core.saveState('run-id', runId);
  const stored = await baselineForRun(s, ctx, workspace, baselinePath);
  const mode = s.mode === 'refresh' ? 'refresh' : 'check';
  if (s.shard) core.info(`Shard ${s.shard.index}/${s.shard.count}: running its balanced share of "${s.scenarios}".`);
  const targets = await chooseTargets(s, ctx, workspace);
  const report = await runPipeline(
    {
      scenarios: s.scenarios,
      candidate: targets.candidate,
      reference: targets.reference,
      repetitions: s.repetitions,
      seed: s.seed,
      shard: s.shard,
      mode,
      stored,
      duration: s.duration,
      warmup: s.warmup,
      cwd: workspace,
      runId,
      signal,
      targetNote: targets.note,
      targetDiff: targets.diff,
      timeLimitSeconds: s.timeLimitMinutes * 60,
      anchor: s.anchoredBaseline,
      sequential: s.sequential,
      failFast: s.failFast,
      looks: s.looks,
      flameGraph: s.flameGraph,
    },
    actionUi,
  );
  const pub = await publishReport(report, s, ctx, stored?.history);
  const out: Outcome = {
    report,
    reportFile: pub.json,
    decides: mode === 'check' && !s.shard,
    failed: pub.failed,
    problem: runProblem(report),
    stoppedEarly: report.errors.some((e) => isRunScope(e.scope)) && !signal.aborted,
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
  const parts = files.map((file) => ({ file, report: readReport(file, 'reports') }));
  core.info(`Merging ${parts.length} shard report(s): ${files.join(', ')}`);
  const stored = storedBaseline(resolve(workspace, s.baselineFile));
  const report = mergeReports(parts, stored, (m) => core.warning(m, { title: 'rabbitmq-perf-gate merge' }));
  const pub = await publishReport(report, s, ctx, stored?.history);
  const c = await commentOnPullRequest(report, ctx, s, pub.trend);
  core.info(c.message);
  return { report, reportFile: pub.json, commentUrl: c.url, decides: true, failed: pub.failed, problem: runProblem(report) };
}
