// Owns: event payloads and repository set-ups for the action's GitHub tests — a pull request from a
// fork (seeded in the local GitHub server and described by a matching `pull_request` payload), the
// `workflow_run` payload of the trusted comment step, a `schedule` payload, and a workspace
// folder of extra scenario files (copies of the catalogue's one_fast under other ids).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import examples from '@octokit/webhooks-examples/api.github.com/index.json' with { type: 'json' };
import { ROOT, pullRequestEvent } from './action-runner';
import type { GitHubServer } from './github-server';

export interface ForkPull {
  number: number;
  headSha: string;
  headRepo: string;
  /** The `pull_request` payload a run of this PR sees. */
  event: any;
}

/** Seeds `forkOwner/<name>` with a branch, and a PR from it into `baseRepo`. */
export function seedForkPull(gh: GitHubServer, baseRepo: string, opts: { forkOwner?: string; branch?: string; number?: number } = {}): ForkPull {
  const headRepo = `${opts.forkOwner ?? 'forker'}/${baseRepo.split('/')[1]}`;
  const branch = opts.branch ?? 'patch-1';
  if (!gh.state.repo(headRepo)) gh.state.addRepo(headRepo, { ownerType: 'User' });
  const headSha = gh.state.writeFiles(headRepo, branch, { 'src/change.txt': `${branch}\n` }, 'Faster, maybe');
  const base = gh.state.requireRepo(baseRepo);
  const pull = gh.state.newPull(base, gh.state.requireRepo(headRepo), { head: branch, base: base.defaultBranch, title: 'A change from a fork', user: headRepo.split('/')[0], number: opts.number });
  const event = pullRequestEvent();
  event.number = pull.number;
  event.pull_request.number = pull.number;
  event.pull_request.head.sha = headSha;
  event.pull_request.head.ref = branch;
  event.pull_request.head.label = `${headRepo.split('/')[0]}:${branch}`;
  event.pull_request.head.repo = {
    ...event.pull_request.head.repo,
    full_name: headRepo,
    name: headRepo.split('/')[1],
    fork: true,
    owner: { ...event.pull_request.head.repo.owner, login: headRepo.split('/')[0] },
  };
  return { number: pull.number, headSha, headRepo, event };
}

/** The `workflow_run` "completed" payload from @octokit/webhooks-examples, for a run of `headSha`. */
export function workflowRunEvent(o: { headSha: string; headRepo: string; headBranch?: string; pullRequests?: number[]; runId?: number; event?: string }): any {
  const wr = (examples as any[]).find((e) => e.name === 'workflow_run');
  const ev = structuredClone(wr.examples.find((e: any) => e.action === 'completed') ?? wr.examples[0]);
  const runId = o.runId ?? 987654321;
  ev.workflow_run = {
    ...ev.workflow_run,
    id: runId,
    event: o.event ?? 'pull_request',
    head_sha: o.headSha,
    head_branch: o.headBranch ?? 'patch-1',
    pull_requests: (o.pullRequests ?? []).map((number) => ({ ...ev.workflow_run.pull_requests?.[0], number })),
    html_url: `https://github.com/Codertocat/Hello-World/actions/runs/${runId}`,
    head_repository: { ...ev.workflow_run.head_repository, full_name: o.headRepo },
  };
  return ev;
}

export function scheduleEvent(): any {
  return { schedule: '17 3 * * 1' };
}

/** Writes `dir/<id>.yml` for each id: the catalogue's one_fast scenario under another id and queue. */
export function writeScenarioFolder(dir: string, ids: string[]): string {
  mkdirSync(dir, { recursive: true });
  const text = readFileSync(join(ROOT, 'scenarios/one_fast.yml'), 'utf8').replace('$schema=../schema/', `$schema=${ROOT}/schema/`);
  for (const id of ids) writeFileSync(join(dir, `${id}.yml`), text.replace(/^id: one_fast$/m, `id: ${id}`).replace(/-u one_fast/g, `-u ${id}`));
  return dir;
}
