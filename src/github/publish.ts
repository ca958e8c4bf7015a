// The GitHub end of the pipeline for a finished RunReport: report files (report.json, summary.md,
// pr.json for the fork-safe comment step), job summary, error annotations (one per problem and per
// regression, at the scenario file's line when it is in the repository) and the sticky PR
// comment. It never touches AMQP; a failed comment is a warning, never a changed verdict.
import { workspaceDir } from './context';
import * as core from '@actions/core';
import { relative, isAbsolute, resolve } from 'node:path';
import type { BaselineHistoryEntry, RunReport } from '../schema/types';
import { metricDef } from '../metrics/definitions';
import { answerCell, delta } from '../report/format';
import { marker, renderComment, renderSummary } from '../report/markdown';
import { writeReportFiles } from '../report/files';
import { describeError, GateError } from '../schema/errors';
import type { ActionSettings } from '../config/action-inputs';
import { client, apiError } from './client';
import { upsertComment } from './comment';
import type { RunContext } from './context';
import { prInfoFor, writePrInfo } from './pr-info';
import { trendChart } from './trend';

/** GitHub rejects job summaries over 1 MiB. */
const SUMMARY_LIMIT = 1_000_000;

export async function writeJobSummary(summary: string): Promise<void> {
  if (!process.env.GITHUB_STEP_SUMMARY) return;
  const text = summary.length > SUMMARY_LIMIT ? summary.slice(0, SUMMARY_LIMIT) + '\n\n_… truncated: see report.json in the artifact._\n' : summary;
  await core.summary.addRaw(text).write();
}

/** One error annotation for a problem, pointing at the file and line when there is one. */
export function annotate(err: unknown): void {
  if (!(err instanceof GateError) || !err.where.file) {
    core.error(describeError(err), { title: 'rabbitmq-perf-gate' });
    return;
  }
  const workspace = workspaceDir();
  const rel = relative(workspace, err.where.file);
  const file = rel.startsWith('..') || isAbsolute(rel) ? err.where.file : rel;
  core.error(`${file}${err.where.line ? `:${err.where.line}` : ''}: ${err.describe(false)}`, { title: 'rabbitmq-perf-gate', file, startLine: err.where.line });
}

export function annotateComparisons(report: RunReport, workspace: string): void {
  for (const c of report.comparisons) {
    if (!c.gating || (c.verdict !== 'fail' && c.verdict !== 'warn')) continue;
    const s = report.scenarios.find((x) => x.id === c.scenario);
    const rel = s && isAbsolute(s.file) ? relative(workspace, s.file) : undefined;
    const inRepo = rel && !rel.startsWith('..');
    const msg = `${c.scenario}: ${metricDef(c.metric).label} ${delta(c)} vs ${c.baselineLabel} — ${c.reason}`;
    const title = c.verdict === 'fail' ? 'Performance regression' : `Performance: ${answerCell(c)}`;
    const props = inRepo ? { title, file: rel, startLine: s!.lines.gate ?? s!.lines.id ?? 1 } : { title };
    if (c.verdict === 'fail') core.error(msg, props);
    else core.warning(msg, props);
  }
}

export interface Published {
  json: string;
  markdown: string;
  prJson?: string;
  trend: string;
  /** The report files could not be written (e.g. a full disk); already annotated as an error. */
  failed?: boolean;
}

/** Report files (+ pr.json on a pull request), job summary and annotations of a finished report;
 *  the trend section is the stored history's chart unless the caller renders its own (nightly).
 *  Files that cannot be written (disk full, permissions) are one error annotation; the job
 *  summary, annotations and comment still carry the results. */
export async function publishReport(report: RunReport, s: ActionSettings, ctx: RunContext, history?: BaselineHistoryEntry[], trendSection?: string): Promise<Published> {
  const workspace = workspaceDir();
  const dir = resolve(workspace, s.reportDir);
  const trend = trendSection ?? trendChart(report, history, s.trendMetric);
  const summary = renderSummary(report, { name: s.name, runUrl: ctx.runUrl, trend });
  let files = { json: resolve(dir, 'report.json'), markdown: resolve(dir, 'summary.md') };
  let prJson: string | undefined;
  let failed = false;
  try {
    files = writeReportFiles(dir, report, summary);
    const pr = prInfoFor(ctx, s.name);
    prJson = pr ? writePrInfo(dir, pr) : undefined;
  } catch (e) {
    failed = true;
    annotate(
      e instanceof GateError
        ? new GateError(`report files: ${e.message}; the results are still in the job summary`, {}, e.fix)
        : new GateError(`report files could not be written to ${dir}: ${describeError(e)}; the results are still in the job summary`),
    );
  }
  await writeJobSummary(summary);
  annotateComparisons(report, workspace);
  return { ...files, prJson, trend, failed };
}

export interface CommentTargetPr {
  owner: string;
  repo: string;
  pullNumber: number;
  apiUrl: string;
  /** Link to the run whose job summary has the full report. */
  runUrl?: string;
}

/** Posts or updates the sticky comment; any API problem becomes a warning annotation. */
export async function postComment(report: RunReport, t: CommentTargetPr, s: Pick<ActionSettings, 'token' | 'comment' | 'name'>, trend: string): Promise<{ message: string; url?: string }> {
  if (!s.token) {
    core.warning('No github-token: the pull-request comment was skipped.', { title: 'rabbitmq-perf-gate' });
    return { message: 'comment: skipped, no token' };
  }
  const body = renderComment(report, { name: s.name, runUrl: t.runUrl, trend });
  try {
    const octokit = client(s.token, t.apiUrl);
    const r = await upsertComment(octokit, { owner: t.owner, repo: t.repo, issueNumber: t.pullNumber }, marker(s.name), body, s.comment, report.verdict !== 'pass');
    return { message: `comment: ${r.action}${r.url ? ` ${r.url}` : ''}`, url: r.url };
  } catch (e) {
    const msg = describeError(apiError(`comment on pull request #${t.pullNumber}`, e));
    core.warning(`${msg} The gate's verdict (${report.verdict}) is unchanged.`, { title: 'rabbitmq-perf-gate comment' });
    return { message: `comment: failed (${msg})` };
  }
}

/** The comment decision of a run on its own event: never, not a PR, a fork (read-only), or post. */
export async function commentOnPullRequest(report: RunReport, ctx: RunContext, s: ActionSettings, trend: string): Promise<{ message: string; url?: string }> {
  if (s.comment === 'never') return { message: 'comment: disabled (comment: never)' };
  if (!ctx.pullNumber || !ctx.owner || !ctx.repo) return { message: 'comment: not a pull request, nothing to comment on' };
  if (ctx.fromFork) {
    core.notice(
      `Pull request from a fork: its token is read-only, so no comment here. ${s.reportDir}/report.json and pr.json are ready to upload as an artifact; a workflow_run job with mode: comment posts them (docs/workflows.md).`,
      { title: 'rabbitmq-perf-gate' },
    );
    return { message: 'comment: pull request from a fork has a read-only token; post the report from a workflow_run job (mode: comment)' };
  }
  return postComment(report, { owner: ctx.owner, repo: ctx.repo, pullNumber: ctx.pullNumber, apiUrl: ctx.apiUrl, runUrl: ctx.runUrl }, s, trend);
}
