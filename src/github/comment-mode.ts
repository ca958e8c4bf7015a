// mode: comment — the second, trusted step of the fork-safe two-step. A `workflow_run` job of the
// base repository (write token, code from the default branch) reads the report.json + pr.json
// that the fork's pull_request run uploaded, validates both as untrusted data, checks through the
// REST API that the pull request exists and its head is the commit the report was made on, then
// posts or updates the sticky comment. Nothing from the artifact is ever executed.
import * as core from '@actions/core';
import { dirname, join, resolve } from 'node:path';
import type { ActionSettings } from '../config/action-inputs';
import { describeError, GateError } from '../config/errors';
import { renderSummary } from '../report/markdown';
import { apiError, client } from './client';
import type { RunContext } from './context';
import { storedBaseline, workspaceDir, type Outcome } from './gate';
import { PR_INFO_FILE, readPrInfo, type PrInfo } from './pr-info';
import { postComment, writeJobSummary } from './publish';
import { readReportFile } from './report-input';
import { trendChart } from './trend';

const forged = (file: string, what: string): GateError =>
  new GateError(`refusing to post this report: ${what}`, { file, field: 'report' },
    'post only the artifact of the pull_request run that triggered this workflow_run (download it with run-id: github.event.workflow_run.id)');

export async function commentMode(s: ActionSettings, ctx: RunContext): Promise<Outcome> {
  const workspace = workspaceDir();
  const reportFile = resolve(workspace, s.report!);
  const prFile = join(dirname(reportFile), PR_INFO_FILE);
  const report = readReportFile(reportFile);
  const pr = readPrInfo(prFile);
  if (pr.name !== s.name) {
    throw new GateError(`the report is from gate "${pr.name}" but this step posts gate "${s.name}"`, { file: prFile, field: 'name' }, 'give this step the same name input as the gate that wrote the report');
  }
  const wr = ctx.workflowRun;
  if (wr?.headSha && wr.headSha !== pr.headSha) forgedError(prFile, `pr.json names commit ${pr.headSha}, but the run that uploaded it built ${wr.headSha}`);
  if (!ctx.owner || !ctx.repo) throw new GateError('GITHUB_REPOSITORY is not set, so there is no pull request to comment on', { field: 'mode' });
  const runUrl = wr?.htmlUrl ?? ctx.runUrl;
  const trend = trendChart(report, storedBaseline(resolve(workspace, s.baselineFile), true)?.history, s.trendMetric);
  await writeJobSummary(renderSummary(report, { name: s.name, runUrl, trend }));
  const out: Outcome = { report, reportFile, decides: false };
  if (s.comment === 'never') {
    core.info('comment: disabled (comment: never)');
    return out;
  }
  if (!s.token) {
    core.warning('No github-token: the pull-request comment was skipped.', { title: 'rabbitmq-perf-gate' });
    return out;
  }
  if (!(await verifyPullRequest(s.token, ctx, pr, prFile))) return out;
  const c = await postComment(report, { owner: ctx.owner, repo: ctx.repo, pullNumber: pr.number, apiUrl: ctx.apiUrl, runUrl }, s, trend);
  core.info(c.message);
  out.commentUrl = c.url;
  return out;
}

function forgedError(file: string, what: string): never {
  throw forged(file, what);
}

/** True when PR #number exists here and its head is the report's commit; false (with a warning) when it moved on. */
async function verifyPullRequest(token: string, ctx: RunContext, pr: PrInfo, prFile: string): Promise<boolean> {
  const where = `${ctx.owner}/${ctx.repo}#${pr.number}`;
  let head: { sha: string; repo: string | undefined };
  try {
    const { data } = await client(token, ctx.apiUrl).rest.pulls.get({ owner: ctx.owner!, repo: ctx.repo!, pull_number: pr.number });
    head = { sha: data.head.sha, repo: data.head.repo?.full_name };
  } catch (e) {
    if ((e as { status?: number }).status === 404) forgedError(prFile, `pull request ${where} from pr.json does not exist`);
    core.warning(`${describeError(apiError(`read pull request ${where}`, e))} Not commenting.`, { title: 'rabbitmq-perf-gate comment' });
    return false;
  }
  const headRepo = pr.headRepo ?? ctx.workflowRun?.headRepo;
  if (headRepo && head.repo && headRepo !== head.repo) forgedError(prFile, `${where} comes from ${head.repo}, not ${headRepo}`);
  if (head.sha === pr.headSha) return true;
  if (ctx.workflowRun?.headSha !== pr.headSha) forgedError(prFile, `pr.json names commit ${pr.headSha}, but the head of ${where} is ${head.sha}`);
  core.warning(`${where} has moved on to ${head.sha.slice(0, 7)} since this report (${pr.headSha.slice(0, 7)}); not posting a stale result — the run of the new head will.`, { title: 'rabbitmq-perf-gate comment' });
  return false;
}
