// What the action needs to know about the workflow run it is in: repository, pull request
// (from the event payload), whether the PR comes from a fork, the triggering run of a
// `workflow_run` event (the fork-safe comment step), and the link to the run.
import { readFileSync } from 'node:fs';

/** The checkout the action works in (GITHUB_WORKSPACE; the current directory outside Actions). */
export const workspaceDir = (env: NodeJS.ProcessEnv = process.env): string => env.GITHUB_WORKSPACE ?? process.cwd();

export interface WorkflowRunInfo {
  id?: number;
  /** The event that started the triggering run, e.g. pull_request. */
  event?: string;
  headSha?: string;
  headRepo?: string;
  headBranch?: string;
  /** PR numbers GitHub links to the run (empty for fork PRs). */
  pullRequests: number[];
  htmlUrl?: string;
}

export interface RunContext {
  owner?: string;
  repo?: string;
  eventName?: string;
  pullNumber?: number;
  /** True for a PR whose head is in another repository: the token is read-only there. */
  fromFork: boolean;
  headSha?: string;
  headRepo?: string;
  baseSha?: string;
  defaultBranch?: string;
  /** The triggering run, on a workflow_run event. */
  workflowRun?: WorkflowRunInfo;
  runUrl?: string;
  apiUrl: string;
}

export function readRunContext(env: NodeJS.ProcessEnv = process.env): RunContext {
  const [owner, repo] = (env.GITHUB_REPOSITORY ?? '').split('/');
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON, checked field by field before use
  let event: Record<string, any> = {};
  if (env.GITHUB_EVENT_PATH) {
    try {
      event = JSON.parse(readFileSync(env.GITHUB_EVENT_PATH, 'utf8'));
    } catch {
      event = {};
    }
  }
  const pr = event.pull_request;
  const wr = env.GITHUB_EVENT_NAME === 'workflow_run' ? event.workflow_run : undefined;
  const server = env.GITHUB_SERVER_URL ?? 'https://github.com';
  return {
    owner: owner || event.repository?.owner?.login,
    repo: repo || event.repository?.name,
    eventName: env.GITHUB_EVENT_NAME,
    pullNumber: pr?.number ?? (env.GITHUB_EVENT_NAME?.startsWith('pull_request') ? event.number : undefined),
    fromFork: Boolean(pr?.head?.repo && pr.base?.repo && pr.head.repo.full_name !== pr.base.repo.full_name),
    headSha: pr?.head?.sha ?? env.GITHUB_SHA,
    headRepo: pr?.head?.repo?.full_name,
    baseSha: pr?.base?.sha,
    defaultBranch: event.repository?.default_branch,
    workflowRun: wr && {
      id: wr.id,
      event: wr.event,
      headSha: wr.head_sha,
      headRepo: wr.head_repository?.full_name,
      headBranch: wr.head_branch,
      pullRequests: Array.isArray(wr.pull_requests) ? wr.pull_requests.map((p: { number?: unknown }) => p?.number).filter(Number.isSafeInteger) : [],
      htmlUrl: wr.html_url,
    },
    runUrl: env.GITHUB_RUN_ID && owner ? `${server}/${owner}/${repo}/actions/runs/${env.GITHUB_RUN_ID}` : undefined,
    apiUrl: env.GITHUB_API_URL ?? 'https://api.github.com',
  };
}
