// mode: refresh — writes the new stored baseline (atomically, via writeBaseline) and, with
// `refresh-commit: pr`, puts exactly those bytes on the branch rabbitmq-perf-gate/baseline-refresh
// through the REST API — rebuilt each time as the default branch's head plus one commit — and
// opens one pull request, or updates it in place while it is open; with
// `direct`, commits them to the default branch; with `none`, only the workspace file is written.
// commitFile does the committing for any file the action writes (mode: nightly's history too).
import { workspaceDir } from './context';
import { isRunScope } from '../compare/judge';
import * as core from '@actions/core';
import { readFileSync } from 'node:fs';
import { isAbsolute, relative, sep } from 'node:path';
import type { Baseline, RunReport } from '../schema/types';
import { baselineFromRun } from '../compare/baseline-file';
import { writeBaseline } from '../compare/stored';
import { GateError } from '../schema/errors';
import type { ActionSettings } from '../config/action-inputs';
import { md } from '../report/escape';
import { num } from '../report/format';
import { metricDef } from '../metrics/definitions';
import { apiError, client } from './client';
import type { RunContext } from './context';

type Octokit = ReturnType<typeof client>;
const DEFAULT_NAME = 'rabbitmq-perf-gate';

/** One branch per gate name and file: rabbitmq-perf-gate/baseline-refresh[-name] (or nightly-history[-name]). */
export function refreshBranch(name: string, kind: 'baseline-refresh' | 'nightly-history' = 'baseline-refresh'): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return `rabbitmq-perf-gate/${kind}${name === DEFAULT_NAME || !slug ? '' : `-${slug}`}`;
}

/** Writes the baseline file; returns where the refreshed baseline went (file, PR or commit URL). */
export async function refreshBaseline(report: RunReport, s: ActionSettings, ctx: RunContext, file: string, previous: Baseline | undefined): Promise<string> {
  const valid = report.trials.filter((t) => t.target === report.candidate && t.valid).length;
  if (!valid) {
    throw new GateError('no valid trials, so the stored baseline was left untouched', { file, field: 'baseline-file' }, 'fix the errors above and refresh again');
  }
  const stopped = report.errors.find((e) => isRunScope(e.scope));
  if (stopped) {
    throw new GateError(
      `${stopped.message} A partial run is no baseline: the stored baseline was left untouched`,
      { file, field: 'baseline-file' },
      'raise time-limit (or run fewer scenarios or repetitions) and refresh again',
    );
  }
  const next = baselineFromRun(report, previous, ctx.headSha);
  writeBaseline(file, next);
  core.info(`Baseline written to ${file} (${valid} valid trials).`);
  return commitFile(file, s, ctx, {
    branch: refreshBranch(s.name),
    what: 'Baseline',
    message: `Refresh the ${s.name} performance baseline (${report.preset}, ${valid} trials)`,
    body: () => prBody(report, previous, next, ctx.runUrl),
  });
}

/**
 * Puts a file the run wrote in the workspace into the repository as refresh-commit says: `none`
 * leaves it there (returns its path), `direct` commits it to the default branch, `pr` rebuilds
 * `branch` as the default branch's head plus one commit with the file and opens (or updates in
 * place) one pull request from it. Returns the file path, commit URL or pull request URL.
 */
export async function commitFile(file: string, s: ActionSettings, ctx: RunContext, o: { branch: string; message: string; body: () => string; what: string }): Promise<string> {
  if (s.refreshCommit === 'none') return file;
  const workspace = workspaceDir();
  const path = relative(workspace, file).split(sep).join('/');
  const field = o.what === 'Baseline' ? 'baseline-file' : 'history-file';
  if (!path || path.startsWith('..') || isAbsolute(path)) throw new GateError(`${field} ${file} is outside the repository checkout`, { field }, 'use a path inside the repository');
  if (!ctx.owner || !ctx.repo) throw new GateError('GITHUB_REPOSITORY is not set, so there is no repository to commit to', { field: 'refresh-commit' });
  if (!s.token) throw new GateError('refresh-commit needs a github-token', { field: 'github-token' }, 'give the job `permissions: contents: write, pull-requests: write`');
  // The exact bytes the run wrote: one serialisation, whether read from disk or the PR.
  const content = readFileSync(file).toString('base64');
  const octokit = client(s.token, ctx.apiUrl);
  const repo = { owner: ctx.owner, repo: ctx.repo };
  const message = o.message;
  let step = 'read the repository';
  try {
    const base = ctx.defaultBranch ?? (await octokit.rest.repos.get(repo)).data.default_branch;
    if (s.refreshCommit === 'direct') {
      step = `commit ${path} to ${base}`;
      const url = await putFile(octokit, repo, path, base, content, message);
      core.info(`${o.what} committed to ${base}: ${url}`);
      return url;
    }
    const branch = o.branch;
    step = `find the open pull request from ${branch}`;
    const [open] = (await octokit.rest.pulls.list({ ...repo, state: 'open', head: `${ctx.owner}:${branch}`, base, per_page: 1 })).data;
    // Every refresh rebuilds the branch as the default branch's head plus one commit with the
    // file, so the PR never carries a stale base. The commit is made on a scratch
    // branch and the refresh branch then jumps to it: it never equals the base, so an open PR
    // stays open (GitHub would mark it merged) and is updated in place.
    step = `rebuild ${branch} from ${base}`;
    const scratch = `${branch}-next`;
    const baseSha = (await octokit.rest.git.getRef({ ...repo, ref: `heads/${base}` })).data.object.sha;
    await pointRef(octokit, repo, scratch, baseSha);
    try {
      step = `commit ${path} onto ${base} (${scratch})`;
      await putFile(octokit, repo, path, scratch, content, message);
      const head = (await octokit.rest.git.getRef({ ...repo, ref: `heads/${scratch}` })).data.object.sha;
      step = `point ${branch} at the new commit`;
      await pointRef(octokit, repo, branch, head);
    } finally {
      await octokit.rest.git.deleteRef({ ...repo, ref: `heads/${scratch}` }).catch(() => undefined);
    }
    step = open ? `update pull request #${open.number}` : 'open the pull request';
    const body = o.body();
    const pr = open
      ? (await octokit.rest.pulls.update({ ...repo, pull_number: open.number, title: message, body })).data
      : (await octokit.rest.pulls.create({ ...repo, head: branch, base, title: message, body })).data;
    core.info(`${o.what} pull request ${open ? 'updated' : 'opened'}: ${pr.html_url}`);
    return pr.html_url;
  } catch (e) {
    throw apiError(step, e);
  }
}

/** The file as it is on `branch` (e.g. an open history pull request's), or undefined when the
 *  branch or file is not there or cannot be read (the caller falls back to the workspace's). */
export async function fileOnBranch(file: string, s: ActionSettings, ctx: RunContext, branch: string): Promise<string | undefined> {
  if (!s.token || !ctx.owner || !ctx.repo) return undefined;
  const path = relative(workspaceDir(), file).split(sep).join('/');
  if (!path || path.startsWith('..') || isAbsolute(path)) return undefined;
  try {
    const { data } = await client(s.token, ctx.apiUrl).rest.repos.getContent({ owner: ctx.owner, repo: ctx.repo, path, ref: branch });
    const f = data as { type?: string; content?: string; encoding?: string };
    return f.type === 'file' && typeof f.content === 'string' ? Buffer.from(f.content, (f.encoding as BufferEncoding) ?? 'base64').toString('utf8') : undefined;
  } catch {
    return undefined;
  }
}

/** Creates the branch at sha, or force-moves it there. */
async function pointRef(octokit: Octokit, repo: { owner: string; repo: string }, branch: string, sha: string): Promise<void> {
  const exists = await octokit.rest.git.getRef({ ...repo, ref: `heads/${branch}` }).then(
    () => true,
    (e) => (e.status === 404 ? false : Promise.reject(e)),
  );
  if (exists) await octokit.rest.git.updateRef({ ...repo, ref: `heads/${branch}`, sha, force: true });
  else await octokit.rest.git.createRef({ ...repo, ref: `refs/heads/${branch}`, sha });
}

/** PUT the file on a branch, with the sha of the version there (one retry if it moved meanwhile). */
async function putFile(octokit: Octokit, repo: { owner: string; repo: string }, path: string, branch: string, content: string, message: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const sha = await octokit.rest.repos.getContent({ ...repo, path, ref: branch }).then(
      (r) => (Array.isArray(r.data) ? undefined : r.data.sha),
      (e) => (e.status === 404 ? undefined : Promise.reject(e)),
    );
    try {
      const { data } = await octokit.rest.repos.createOrUpdateFileContents({ ...repo, path, branch, message, content, ...(sha ? { sha } : {}) });
      return data.commit.html_url ?? '';
    } catch (e) {
      if ((e as { status?: number }).status !== 409 || attempt >= 1) throw e;
    }
  }
}

/** The refresh PR's description: old → new medians of the gating metrics, escaped, bounded. */
function prBody(report: RunReport, previous: Baseline | undefined, next: Baseline, runUrl?: string): string {
  const before = previous?.history.at(-1)?.medians ?? {};
  const now = next.history.at(-1)?.medians ?? {};
  const rows = report.scenarios.flatMap((s) =>
    s.gate
      .filter((m) => now[s.id]?.[m] !== undefined)
      .map((m) => {
        const unit = metricDef(m).unit;
        return `| ${md(s.id)} | ${md(metricDef(m).label)} | ${num(before[s.id]?.[m], unit)} | ${num(now[s.id][m], unit)} |`;
      }),
  );
  const table = rows.length ? ['| Scenario | Metric | Previous median | New median |', '|---|---|--:|--:|', ...rows.slice(0, 300)].join('\n') : '_no gating metrics_';
  return [
    'Scheduled refresh of the stored performance baseline by rabbitmq-perf-gate.',
    '',
    table,
    '',
    `Runner: ${md(report.fingerprint.cpuModel)}, ${report.fingerprint.cores} cores; RabbitMQ ${md(next.target.rabbitmqVersion)}; ${report.repetitions} repetitions, seed ${report.seed}.`,
    runUrl ? `\n[Workflow run](${runUrl})` : '',
  ].join('\n');
}
