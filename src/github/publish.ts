// The GitHub end of the pipeline: job summary, outputs, annotations on regressions (pointing at
// the scenario file's line when it is in the repository) and the sticky PR comment. It reads a
// finished RunReport and never touches AMQP.
import * as core from '@actions/core';
import { relative, isAbsolute } from 'node:path';
import type { RunReport } from '../schema/types';
import { metricDef } from '../metrics/definitions';
import { delta } from '../report/format';
import { marker, renderComment } from '../report/markdown';
import { describeError } from '../config/errors';
import { client, apiError } from './client';
import { upsertComment, type CommentMode } from './comment';
import type { RunContext } from './context';

/** GitHub rejects job summaries over 1 MiB. */
const SUMMARY_LIMIT = 1_000_000;

export async function writeJobSummary(summary: string): Promise<void> {
  if (!process.env.GITHUB_STEP_SUMMARY) return;
  const text = summary.length > SUMMARY_LIMIT ? summary.slice(0, SUMMARY_LIMIT) + '\n\n_… truncated: see report.json in the artifact._\n' : summary;
  await core.summary.addRaw(text).write();
}

export function annotateComparisons(report: RunReport, workspace: string): void {
  for (const c of report.comparisons) {
    if (!c.gating || (c.verdict !== 'fail' && c.verdict !== 'warn')) continue;
    const s = report.scenarios.find((x) => x.id === c.scenario);
    const rel = s && isAbsolute(s.file) ? relative(workspace, s.file) : undefined;
    const inRepo = rel && !rel.startsWith('..');
    const msg = `${c.scenario}: ${metricDef(c.metric).label} ${delta(c)} vs ${c.baselineLabel} — ${c.reason}`;
    const props = inRepo ? { title: `Performance ${c.verdict}`, file: rel, startLine: s!.lines.gate ?? s!.lines.id ?? 1 } : { title: `Performance ${c.verdict}` };
    if (c.verdict === 'fail') core.error(msg, props);
    else core.warning(msg, props);
  }
}

export interface CommentSettings {
  token: string;
  mode: CommentMode;
  name: string;
}

/** Posts or updates the sticky comment; problems become a warning, never a failed gate. */
export async function commentOnPullRequest(report: RunReport, ctx: RunContext, s: CommentSettings): Promise<string> {
  if (s.mode === 'never') return 'comment: disabled (comment: never)';
  if (!ctx.pullNumber || !ctx.owner || !ctx.repo) return 'comment: not a pull request, nothing to comment on';
  if (ctx.fromFork) return 'comment: pull request from a fork has a read-only token; post the report from a workflow_run job (mode: comment)';
  if (!s.token) {
    core.warning('No github-token: the pull-request comment was skipped.', { title: 'rabbitmq-perf-gate' });
    return 'comment: skipped, no token';
  }
  const body = renderComment(report, { name: s.name, runUrl: ctx.runUrl });
  try {
    const octokit = client(s.token, ctx.apiUrl);
    const r = await upsertComment(octokit, { owner: ctx.owner, repo: ctx.repo, issueNumber: ctx.pullNumber }, marker(s.name), body, s.mode, report.verdict !== 'pass');
    return `comment: ${r.action}${r.url ? ` ${r.url}` : ''}`;
  } catch (e) {
    const msg = describeError(apiError('comment on the pull request', e));
    core.warning(msg, { title: 'rabbitmq-perf-gate comment' });
    return `comment: failed (${msg})`;
  }
}
