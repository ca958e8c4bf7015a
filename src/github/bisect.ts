// mode: bisect (workflow_dispatch) — the first image of bisect-images, or of bisect-template over
// the first-parent commits of bisect-range read from the checkout, that regresses against its
// known-good end (src/compare/bisect.ts; each step an A/B through the pipeline). The search
// resumes from bisect-state when it holds the same search (keep it between runs with
// actions/cache). Writes bisect.json/.md/.html to report-dir, the job summary, a sticky comment on
// comment-on when given, and the outputs culprit, culprit-commit and bisect-status. The step fails
// when the time limit stopped the search (run it again to resume); a search that ends with only
// skipped or undecided images left warns.
import * as core from '@actions/core';
import { join, resolve } from 'node:path';
import type { ActionSettings } from '../config/action-inputs';
import type { BisectReport } from '../schema/types';
import { describeError, GateError } from '../schema/errors';
import { type BisectFields, resolveBisectImages } from '../config/bisect-range';
import { resolveScenarios } from '../config/catalogue';
import { bisectSession } from '../compare/bisect';
import { bisectHeadline, renderBisectMarkdown } from '../report/bisect';
import { writeBisectFiles } from '../report/files';
import { marker } from '../report/markdown';
import { candidateCouldNotStart, newRunId, runPipeline } from '../pipeline/run';
import { apiError, client } from './client';
import { upsertComment } from './comment';
import { type RunContext, workspaceDir } from './context';
import { actionUi } from './gate';
import { annotate, writeJobSummary } from './publish';

export const ACTION_FIELDS: BisectFields = { images: 'bisect-images', template: 'bisect-template', range: 'bisect-range', repo: 'bisect-repo', good: 'bisect-good', bad: 'bisect-bad' };

export async function bisectMode(s: ActionSettings, ctx: RunContext, signal: AbortSignal): Promise<BisectReport> {
  const workspace = workspaceDir();
  const b = s.bisect;
  const { images, range } = await resolveBisectImages({ ...b, repo: b.repo === undefined ? undefined : resolve(workspace, b.repo) }, ACTION_FIELDS);
  resolveScenarios(s.scenarios, workspace);
  const runId = newRunId();
  core.saveState('run-id', runId);
  const stateFile = resolve(workspace, b.state ?? join(s.reportDir, 'bisect-state.json'));
  const report = await bisectSession(
    {
      definition: { images, range, scenarios: s.scenarios, duration: s.duration, warmup: s.warmup, looks: s.looks, repetitions: s.repetitions, attempts: b.attempts },
      stateFile,
      timeLimitMinutes: s.timeLimitMinutes,
      seed: s.seed,
      runId,
      cwd: workspace,
      signal,
    },
    {
      runAb: (o) => core.group(`A/B of ${o.candidate.image} against ${o.reference.image}`, () => runPipeline(o, actionUi)),
      candidateFailed: (e) => candidateCouldNotStart(e),
      log: (m) => core.info(m),
      describe: describeError,
    },
  );
  const markdown = renderBisectMarkdown(report, { name: s.name, runUrl: ctx.runUrl });
  let file = resolve(workspace, s.reportDir, 'bisect.json');
  try {
    file = writeBisectFiles(resolve(workspace, s.reportDir), report, markdown, { name: s.name, runUrl: ctx.runUrl }).json;
  } catch (e) {
    annotate(new GateError(`bisect report files: ${describeError(e)}; the result is still in the job summary`));
  }
  await writeJobSummary(markdown);
  const st = report.status;
  core.setOutput('report', file);
  core.setOutput('bisect-status', st.state);
  if (st.culprit !== undefined) {
    core.setOutput('culprit', report.state.images[st.culprit].image);
    if (report.state.images[st.culprit].commit) core.setOutput('culprit-commit', report.state.images[st.culprit].commit!);
  }
  if (b.commentOn && s.comment !== 'never') await commentOn(b.commentOn, markdown, s, ctx);
  const headline = bisectHeadline(report);
  if (signal.aborted) core.setFailed(`The bisect was cancelled after ${report.state.steps.length} steps; run it again with the same inputs and ${stateFile} kept to resume.`);
  else if (st.state === 'running')
    core.setFailed(
      `The bisect stopped (${report.stopped}) after ${report.state.steps.length} steps: ${headline}. Keep ${b.state ?? join(s.reportDir, 'bisect-state.json')} (actions/cache) and run it again to resume.`,
    );
  else if (st.state === 'ambiguous' || st.state === 'no-regression') core.warning(`bisect: ${headline}`, { title: 'rabbitmq-perf-gate bisect' });
  else core.notice(`bisect: ${headline}`, { title: 'rabbitmq-perf-gate bisect' });
  return report;
}

/** The result as a sticky comment on an issue or pull request; a failure is a warning. */
async function commentOn(issue: number, markdown: string, s: ActionSettings, ctx: RunContext): Promise<void> {
  if (!s.token || !ctx.owner || !ctx.repo) {
    core.warning('comment-on needs a github-token and GITHUB_REPOSITORY: the bisect comment was skipped.', { title: 'rabbitmq-perf-gate bisect' });
    return;
  }
  const mark = marker(`${s.name} bisect`);
  try {
    const r = await upsertComment(client(s.token, ctx.apiUrl), { owner: ctx.owner, repo: ctx.repo, issueNumber: issue }, mark, `${mark}\n${markdown}`, 'always', true);
    core.info(`bisect comment: ${r.action}${r.url ? ` ${r.url}` : ''}`);
    if (r.url) core.setOutput('comment-url', r.url);
  } catch (e) {
    core.warning(`${describeError(apiError(`comment on #${issue}`, e))}`, { title: 'rabbitmq-perf-gate bisect' });
  }
}
