// Scheduled baseline refresh through the REST API, with the bundled action against the real
// broker and the local GitHub server: `refresh-commit: pr` opens one pull request from
// rabbitmq-perf-gate/baseline-refresh carrying exactly the bytes writeBaseline wrote, the next
// refresh updates that same PR; `direct` commits to the default branch; a read-only token fails
// with a clear message. Every request is checked against GitHub's OpenAPI description.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGitHubServer, type GitHubServer } from '../support/github-server';
import { runAction, newWorkspace } from '../support/action-runner';
import { scheduleEvent } from '../support/github-events';
import { AMQP_URL, MANAGEMENT_URL } from '../support/broker';

const TOKEN = 'ghs_perfgaterefresh';
const READ_ONLY = 'ghs_perfgatereadonly';
const REPO = 'Codertocat/Hello-World';
const BRANCH = 'rabbitmq-perf-gate/baseline-refresh';
const PATH = '.github/rabbitmq-perf/baseline.json';
const fast = { scenarios: 'smoke', repetitions: '5', duration: '1', warmup: '0.5', 'broker-url': AMQP_URL, 'management-url': MANAGEMENT_URL };

let gh: GitHubServer;
beforeAll(async () => {
  gh = await startGitHubServer({ token: TOKEN, repo: REPO });
  gh.addToken(READ_ONLY, { readOnly: true });
});
afterEach(() => {
  // After each test, so a request or response outside the OpenAPI spec fails the test that made it.
  expect(gh.violations).toEqual([]);
  expect(gh.warnings).toEqual([]);
});
afterAll(async () => {
  await gh.close();
});

const refresh = (workspace: string, inputs: Record<string, string>) =>
  runAction({
    workspace,
    apiUrl: gh.url,
    eventName: 'schedule',
    event: scheduleEvent(),
    env: { GITHUB_REF: 'refs/heads/main' },
    inputs: { ...fast, mode: 'refresh', 'github-token': TOKEN, ...inputs },
  });

describe('mode: refresh with refresh-commit', () => {
  const workspace = newWorkspace();
  /** What the repository looked like after each `pr` refresh: the first opens the pull request,
   *  the second (after main moved on) updates it. Both run once, here, so that no test depends on
   *  another having run first; the tests check these records. */
  const pullsNow = () => gh.state.pulls(REPO).map((p) => ({ number: p.number, headRef: p.headRef, baseRef: p.baseRef, title: p.issue.title, body: p.issue.body, state: p.issue.state }));
  const repoState = () => ({
    local: existsSync(join(workspace, PATH)) ? readFileSync(join(workspace, PATH), 'utf8') : '',
    onBranch: gh.state.readFile(REPO, PATH, BRANCH),
    onMain: gh.state.readFile(REPO, PATH, 'main'),
    pulls: pullsNow(),
  });
  let first: { r: Awaited<ReturnType<typeof refresh>> } & ReturnType<typeof repoState>;
  let second: typeof first & { mainHead: string; parents: string[] | undefined; newer: string | undefined; nextRef: boolean; creates: number; updates: number };

  beforeAll(async () => {
    const r1 = await refresh(workspace, { 'refresh-commit': 'pr' });
    first = { r: r1, ...repoState() };
    const mainHead = gh.state.writeFiles(REPO, 'main', { 'src/newer.txt': 'main moved on\n' }, 'Work on main');
    const r2 = await refresh(workspace, { 'refresh-commit': 'pr' });
    const repo = gh.state.requireRepo(REPO);
    second = {
      r: r2,
      ...repoState(),
      mainHead,
      parents: gh.state.resolve(repo, BRANCH)?.parents,
      newer: gh.state.readFile(REPO, 'src/newer.txt', BRANCH),
      nextRef: repo.refs.has(`heads/${BRANCH}-next`),
      creates: gh.requests.filter((q) => q.operationId === 'pulls/create').length,
      updates: gh.requests.filter((q) => q.operationId === 'pulls/update').length,
    };
  });

  it('pr: opens a pull request whose file is byte-for-byte the baseline written in the workspace', () => {
    const { r, local, onBranch, onMain, pulls } = first;
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(onBranch).toBe(local);
    expect(onMain).toBeUndefined();
    expect(pulls).toHaveLength(1);
    expect(pulls[0]).toMatchObject({ headRef: BRANCH, baseRef: 'main' });
    expect(pulls[0].title).toMatch(/^Refresh the rabbitmq-perf-gate performance baseline \(smoke, 5 trials\)$/);
    expect(pulls[0].body).toContain('| one\\_fast | consumed |');
    expect(r.outputs['refresh-url']).toBe(`${gh.url}/${REPO}/pull/${pulls[0].number}`);
    expect(JSON.parse(local).history).toHaveLength(1);
  });

  it("pr again after main moved on: the branch is rebuilt on main's head, the same pull request is updated", () => {
    const { r, local, onBranch, pulls } = second;
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(JSON.parse(local).history).toHaveLength(2);
    expect(onBranch).toBe(local);
    expect(pulls).toHaveLength(1);
    const number = first.pulls[0]?.number;
    expect(pulls[0].number).toBe(number);
    expect(pulls[0].state).toBe('open');
    expect(second.parents).toEqual([second.mainHead]); // main's head plus exactly one commit: the baseline
    expect(second.newer).toBe('main moved on\n');
    expect(second.nextRef).toBe(false);
    expect(r.stdout).toContain(`Baseline pull request updated: ${gh.url}/${REPO}/pull/${number}`);
    expect(second.creates).toBe(1);
    expect(second.updates).toBe(1);
  });

  it('direct: commits the file to the default branch', async () => {
    const r = await refresh(workspace, { 'refresh-commit': 'direct' });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(gh.state.readFile(REPO, PATH, 'main')).toBe(readFileSync(join(workspace, PATH), 'utf8'));
    expect(r.outputs['refresh-url']).toMatch(new RegExp(`^${gh.url}/${REPO}/commit/[0-9a-f]{40}$`));
    expect(gh.state.pulls(REPO)).toHaveLength(1);
  });

  it('a read-only token: one clear error naming the permission', async () => {
    const r = await refresh(newWorkspace(), { 'refresh-commit': 'pr', 'github-token': READ_ONLY, name: 'nightly gate' });
    expect(r.code, r.stdout + r.stderr).toBe(1);
    const errors = r.stdout.split('\n').filter((l) => l.startsWith('::error'));
    expect(errors, r.stdout + r.stderr).toHaveLength(1);
    expect(errors[0]).toMatch(
      /could not rebuild rabbitmq-perf-gate\/baseline-refresh-nightly-gate from main: GitHub answered 403 \(Resource not accessible by integration\).*Fix: give the job `permissions: pull-requests: write` \(and `contents: write` for a baseline refresh\)/,
    );
    expect(r.stdout + r.stderr).not.toMatch(/\n\s+at .+\(.*:\d+:\d+\)/);
  });
});
