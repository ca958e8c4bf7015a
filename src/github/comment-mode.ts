// mode: comment — the second, trusted step of the fork-safe two-step. A `workflow_run` job of the
// base repository (write token, code from the default branch) reads the report.json + pr.json
// that the fork's pull_request run uploaded, validates both as untrusted data and posts or updates
// the sticky comment. Which pull request may receive it is decided from GitHub's own
// `workflow_run` event only (head repository, branch and sha of the run that uploaded the
// artifact, and its pull_requests when GitHub fills them): the artifact may only *name* a PR
// number, which must then be a PR whose head repository, branch and sha all equal the event's.
// Anything else is one error and no API write. Nothing from the artifact is ever executed.
import * as core from '@actions/core';
import { dirname, join, resolve } from 'node:path';
import type { ActionSettings } from '../config/action-inputs';
import { describeError, GateError } from '../schema/errors';
import { renderSummary } from '../report/markdown';
import { apiError, client } from './client';
import type { RunContext, WorkflowRunInfo } from './context';
import { storedBaseline, type Outcome } from './gate';
import { workspaceDir } from './context';
import { PR_INFO_FILE, readPrInfo, type PrInfo } from './pr-info';
import { postComment, writeJobSummary } from './publish';
import { readReport } from '../compare/stored';
import { trendChart } from './trend';

const forged = (file: string, what: string): GateError =>
  new GateError(
    `refusing to post this report: ${what}`,
    { file, field: 'report' },
    'post only the artifact of the pull_request run that triggered this workflow_run (download it with run-id: github.event.workflow_run.id)',
  );

export async function commentMode(s: ActionSettings, ctx: RunContext): Promise<Outcome> {
  const workspace = workspaceDir();
  const reportFile = resolve(workspace, s.report!);
  const prFile = join(dirname(reportFile), PR_INFO_FILE);
  const report = readReport(reportFile);
  const pr = readPrInfo(prFile);
  if (pr.name !== s.name) {
    throw new GateError(
      `the report is from gate "${pr.name}" but this step posts gate "${s.name}"`,
      { file: prFile, field: 'name' },
      'give this step the same name input as the gate that wrote the report',
    );
  }
  const wr = trustedRun(ctx, prFile, pr);
  if (!ctx.owner || !ctx.repo) throw new GateError('GITHUB_REPOSITORY is not set, so there is no pull request to comment on', { field: 'mode' });
  const runUrl = wr.htmlUrl ?? ctx.runUrl;
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
  if (!(await verifyPullRequest(s.token, ctx, wr, pr, prFile))) return out;
  const c = await postComment(report, { owner: ctx.owner, repo: ctx.repo, pullNumber: pr.number, apiUrl: ctx.apiUrl, runUrl }, s, trend);
  core.info(c.message);
  out.commentUrl = c.url;
  return out;
}

function forgedError(file: string, what: string): never {
  throw forged(file, what);
}

type TrustedRun = WorkflowRunInfo & { headSha: string; headRepo: string; headBranch: string };

/** The triggering run from GitHub's event: what the artifact's claims are checked against. */
function trustedRun(ctx: RunContext, prFile: string, pr: PrInfo): TrustedRun {
  const wr = ctx.workflowRun;
  if (!wr) {
    throw new GateError(
      `mode: comment runs only on a workflow_run event (this is ${ctx.eventName ?? 'no event'}): the pull request is decided from that event, never from the artifact alone`,
      { field: 'mode' },
      'run mode: comment in a workflow triggered by `on: workflow_run` of the pull_request workflow (see docs/workflows.md)',
    );
  }
  if (!wr.headSha || !wr.headRepo || !wr.headBranch) forgedError(prFile, 'the workflow_run event has no head repository, branch or sha to check the artifact against');
  if (wr.event && wr.event !== 'pull_request' && wr.event !== 'pull_request_target') forgedError(prFile, `the run that uploaded it was triggered by ${wr.event}, not by a pull request`);
  if (wr.headSha !== pr.headSha) forgedError(prFile, `pr.json names commit ${pr.headSha}, but the run that uploaded it built ${wr.headSha}`);
  if (pr.headRepo !== undefined && pr.headRepo !== wr.headRepo) forgedError(prFile, `pr.json names head repository ${pr.headRepo}, but the run that uploaded it built ${wr.headRepo}`);
  if (wr.pullRequests.length && !wr.pullRequests.includes(pr.number)) {
    forgedError(prFile, `pr.json names #${pr.number}, but GitHub links the run that uploaded it to ${wr.pullRequests.map((n) => `#${n}`).join(', ')}`);
  }
  return wr as TrustedRun;
}

/**
 * True when PR #number exists here and its head repository, branch and sha are the triggering
 * run's; false (with a warning) when the same branch has moved on since; any other mismatch is
 * a forged artifact.
 */
async function verifyPullRequest(token: string, ctx: RunContext, wr: TrustedRun, pr: PrInfo, prFile: string): Promise<boolean> {
  const where = `${ctx.owner}/${ctx.repo}#${pr.number}`;
  let head: { sha: string; repo: string | undefined; ref: string };
  try {
    const { data } = await client(token, ctx.apiUrl).rest.pulls.get({ owner: ctx.owner!, repo: ctx.repo!, pull_number: pr.number });
    head = { sha: data.head.sha, repo: data.head.repo?.full_name, ref: data.head.ref };
  } catch (e) {
    if ((e as { status?: number }).status === 404) forgedError(prFile, `pull request ${where} from pr.json does not exist`);
    core.warning(`${describeError(apiError(`read pull request ${where}`, e))} Not commenting.`, { title: 'rabbitmq-perf-gate comment' });
    return false;
  }
  if (head.repo !== wr.headRepo) forgedError(prFile, `${where} comes from ${head.repo ?? 'a deleted repository'}, but the run that uploaded the report built ${wr.headRepo}`);
  if (head.ref !== wr.headBranch) forgedError(prFile, `${where} is branch ${head.ref}, but the run that uploaded the report built branch ${wr.headBranch}`);
  if (head.sha === wr.headSha) return true;
  core.warning(`${where} has moved on to ${head.sha.slice(0, 7)} since this report (${wr.headSha.slice(0, 7)}); not posting a stale result — the run of the new head will.`, {
    title: 'rabbitmq-perf-gate comment',
  });
  return false;
}
