// Exercises the local GitHub REST server (test/support/github-server.ts) with the real octokit
// client from @actions/github, and proves its OpenAPI validation catches off-spec requests and
// off-spec responses.
import { getOctokit } from '@actions/github';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rateLimitFault, secondaryRateLimitFault, startGitHubServer, type GitHubServer } from '../support/github-server';
import { toJsonSchema } from '../support/github-spec';

const OWNER = 'octo-org';
const REPO = 'octo-repo';
const MARKER = '<!-- rabbitmq-perf-gate -->';

let gh: GitHubServer;
let octokit: ReturnType<typeof getOctokit>;

beforeEach(async () => {
  gh = await startGitHubServer({ token: 'ghs_main' });
  gh.state.addPull(gh.repo, { head: 'feature', number: 7, user: 'contributor' });
  octokit = getOctokit('ghs_main', { baseUrl: gh.url });
});

afterEach(async () => {
  try {
    gh.assertNoViolations(); // tests that provoke violations clear them once checked
  } finally {
    await gh.close();
  }
});

const raw = (path: string, init: RequestInit & { token?: string | null } = {}): Promise<Response> => {
  const headers = new Headers(init.headers);
  if (init.token !== null) headers.set('authorization', `token ${init.token ?? 'ghs_main'}`);
  if (init.body) headers.set('content-type', 'application/json');
  return fetch(`${gh.url}${path}`, { ...init, headers });
};

describe('GitHub test server: identity and repository', () => {
  it('answers GET /user with 403 for an Actions installation token, like GITHUB_TOKEN', async () => {
    await expect(octokit.rest.users.getAuthenticated()).rejects.toMatchObject({ status: 403, message: expect.stringContaining('Resource not accessible by integration') });
  });

  it('answers GET /user with the token owner for a user token', async () => {
    gh.addToken('ghp_alice', { login: 'alice' });
    const alice = getOctokit('ghp_alice', { baseUrl: gh.url });
    const { data } = await alice.rest.users.getAuthenticated();
    expect(data).toMatchObject({ login: 'alice', type: 'User', url: `${gh.url}/users/alice` });
  });

  it('returns the repository with its default branch', async () => {
    const { data } = await octokit.rest.repos.get({ owner: OWNER, repo: REPO });
    expect(data).toMatchObject({ full_name: `${OWNER}/${REPO}`, default_branch: 'main', owner: { login: OWNER, type: 'Organization' } });
    await expect(octokit.rest.repos.get({ owner: OWNER, repo: 'nope' })).rejects.toMatchObject({ status: 404 });
  });
});

describe('GitHub test server: issue comments', () => {
  it('paginates 150 comments with correct Link headers', async () => {
    for (let i = 0; i < 150; i++) gh.state.addComment(gh.repo, 7, { body: `comment ${i}`, user: i % 2 ? 'alice' : 'bob' });

    const all = await octokit.paginate(octokit.rest.issues.listComments, { owner: OWNER, repo: REPO, issue_number: 7, per_page: 100 });
    expect(all.map((c) => c.body)).toEqual(Array.from({ length: 150 }, (_, i) => `comment ${i}`));
    expect(gh.requests.map((r) => r.query.page ?? '1')).toEqual(['1', '2']);

    const first = await octokit.rest.issues.listComments({ owner: OWNER, repo: REPO, issue_number: 7, per_page: 50 });
    expect(first.data).toHaveLength(50);
    const link = first.headers.link!;
    expect(link).toContain(`<${gh.url}/repos/${OWNER}/${REPO}/issues/7/comments?per_page=50&page=2>; rel="next"`);
    expect(link).toContain('page=3>; rel="last"');
    expect(link).not.toContain('rel="prev"');

    const middle = await octokit.rest.issues.listComments({ owner: OWNER, repo: REPO, issue_number: 7, per_page: 50, page: 2 });
    expect(middle.headers.link).toMatch(/page=1>; rel="prev".*page=3>; rel="next".*page=3>; rel="last".*page=1>; rel="first"/);
    const last = await octokit.rest.issues.listComments({ owner: OWNER, repo: REPO, issue_number: 7, per_page: 50, page: 3 });
    expect(last.headers.link).not.toContain('rel="next"');

    const defaults = await octokit.rest.issues.listComments({ owner: OWNER, repo: REPO, issue_number: 7 });
    expect(defaults.data).toHaveLength(30);
  });

  it('creates, reads, updates and deletes a comment, leaving other users’ comments alone', async () => {
    const foreign = gh.state.addComment(gh.repo, 7, { body: `${MARKER} quoted by a human`, user: 'alice' });

    const created = await octokit.rest.issues.createComment({ owner: OWNER, repo: REPO, issue_number: 7, body: `${MARKER}\nfirst` });
    expect(created.status).toBe(201);
    expect(created.data).toMatchObject({ body: `${MARKER}\nfirst`, user: { login: 'github-actions[bot]', type: 'Bot', id: 41898282 } });
    expect(created.data.html_url).toBe(`${gh.url}/${OWNER}/${REPO}/pull/7#issuecomment-${created.data.id}`);
    expect(created.data.id).toBeGreaterThan(2 ** 31); // real comment ids no longer fit in 32 bits

    const listed = await octokit.rest.issues.listComments({ owner: OWNER, repo: REPO, issue_number: 7 });
    expect(listed.data.map((c) => c.user?.login)).toEqual(['alice', 'github-actions[bot]']);

    const updated = await octokit.rest.issues.updateComment({ owner: OWNER, repo: REPO, comment_id: created.data.id, body: `${MARKER}\nsecond` });
    expect(updated.data.body).toBe(`${MARKER}\nsecond`);
    const fetched = await octokit.rest.issues.getComment({ owner: OWNER, repo: REPO, comment_id: created.data.id });
    expect(fetched.data.body).toBe(`${MARKER}\nsecond`);

    const deleted = await octokit.rest.issues.deleteComment({ owner: OWNER, repo: REPO, comment_id: created.data.id });
    expect(deleted.status).toBe(204);
    await expect(octokit.rest.issues.getComment({ owner: OWNER, repo: REPO, comment_id: created.data.id })).rejects.toMatchObject({ status: 404 });

    expect(gh.state.comments(gh.repo, 7)).toEqual([foreign]);
    expect(foreign.body).toBe(`${MARKER} quoted by a human`);
    expect(gh.requests.filter((r) => r.path.endsWith(`/${foreign.id}`))).toEqual([]);
  });

  it('rejects comments on missing issues and bodies over 65536 characters, as GitHub does', async () => {
    await expect(octokit.rest.issues.createComment({ owner: OWNER, repo: REPO, issue_number: 99, body: 'x' })).rejects.toMatchObject({ status: 404 });
    await expect(octokit.rest.issues.createComment({ owner: OWNER, repo: REPO, issue_number: 7, body: 'x'.repeat(65537) })).rejects.toMatchObject({
      status: 422,
      response: { data: { message: 'Validation Failed', errors: [{ message: 'Body is too long (maximum is 65536 characters)' }] } },
    });
    expect(gh.state.comments(gh.repo, 7)).toEqual([]);
  });
});

describe('GitHub test server: baseline refresh flow', () => {
  it('branches, writes a file, opens a pull request and finds it by head', async () => {
    const main = await octokit.rest.git.getRef({ owner: OWNER, repo: REPO, ref: 'heads/main' });
    expect(gh.requests.at(-1)).toMatchObject({ path: `/repos/${OWNER}/${REPO}/git/ref/heads/main`, rawPath: `/repos/${OWNER}/${REPO}/git/ref/heads%2Fmain`, operationId: 'git/get-ref', status: 200 });
    expect(main.data).toMatchObject({ ref: 'refs/heads/main', object: { type: 'commit', sha: gh.state.branchSha(gh.repo, 'main') } });
    await expect(octokit.rest.git.getRef({ owner: OWNER, repo: REPO, ref: 'heads/perf/baseline' })).rejects.toMatchObject({ status: 404 });

    const branch = await octokit.rest.git.createRef({ owner: OWNER, repo: REPO, ref: 'refs/heads/perf/baseline', sha: main.data.object.sha });
    expect(branch.status).toBe(201);
    await expect(octokit.rest.git.createRef({ owner: OWNER, repo: REPO, ref: 'refs/heads/perf/baseline', sha: main.data.object.sha })).rejects.toMatchObject({
      status: 422,
      message: expect.stringContaining('Reference already exists'),
    });

    const path = 'baselines/publish-consume.json';
    await expect(octokit.rest.repos.getContent({ owner: OWNER, repo: REPO, path, ref: 'perf/baseline' })).rejects.toMatchObject({ status: 404 });
    const v1 = Buffer.from('{"rate": 1}\n').toString('base64');
    const created = await octokit.rest.repos.createOrUpdateFileContents({ owner: OWNER, repo: REPO, path, branch: 'perf/baseline', message: 'Add baseline', content: v1 });
    expect(created.status).toBe(201);
    const fileSha = created.data.content!.sha!;

    const got = await octokit.rest.repos.getContent({ owner: OWNER, repo: REPO, path, ref: 'perf/baseline' });
    expect(Array.isArray(got.data)).toBe(false);
    const file = got.data as { type: string; sha: string; content: string; encoding: string };
    expect(file).toMatchObject({ type: 'file', sha: fileSha, encoding: 'base64' });
    expect(Buffer.from(file.content, 'base64').toString()).toBe('{"rate": 1}\n');
    const rawFile = await octokit.rest.repos.getContent({ owner: OWNER, repo: REPO, path, ref: 'perf/baseline', mediaType: { format: 'raw' } });
    expect(String(rawFile.data)).toBe('{"rate": 1}\n');
    const dir = await octokit.rest.repos.getContent({ owner: OWNER, repo: REPO, path: 'baselines', ref: 'perf/baseline' });
    expect((dir.data as { name: string }[]).map((e) => e.name)).toEqual(['publish-consume.json']);
    await expect(octokit.rest.repos.getContent({ owner: OWNER, repo: REPO, path, ref: 'main' })).rejects.toMatchObject({ status: 404 });

    const v2 = Buffer.from('{"rate": 2}\n').toString('base64');
    await expect(octokit.rest.repos.createOrUpdateFileContents({ owner: OWNER, repo: REPO, path, branch: 'perf/baseline', message: 'no sha', content: v2 })).rejects.toMatchObject({ status: 422 });
    await expect(octokit.rest.repos.createOrUpdateFileContents({ owner: OWNER, repo: REPO, path, branch: 'perf/baseline', message: 'stale', content: v2, sha: 'f'.repeat(40) })).rejects.toMatchObject({
      status: 409,
    });
    const updated = await octokit.rest.repos.createOrUpdateFileContents({ owner: OWNER, repo: REPO, path, branch: 'perf/baseline', message: 'Refresh baseline', content: v2, sha: fileSha });
    expect(updated.status).toBe(200);
    expect(updated.data.commit.parents?.map((p) => p.sha)).toEqual([created.data.commit.sha]);
    expect(gh.state.readFile(gh.repo, path, 'perf/baseline')).toBe('{"rate": 2}\n');
    expect(gh.state.readFile(gh.repo, path, 'main')).toBeUndefined();

    const pr = await octokit.rest.pulls.create({ owner: OWNER, repo: REPO, head: 'perf/baseline', base: 'main', title: 'Refresh perf baselines', body: 'auto' });
    expect(pr.status).toBe(201);
    expect(pr.data).toMatchObject({ number: 8, state: 'open', head: { ref: 'perf/baseline', sha: updated.data.commit.sha }, base: { ref: 'main' }, user: { login: 'github-actions[bot]' } });
    await expect(octokit.rest.pulls.create({ owner: OWNER, repo: REPO, head: 'perf/baseline', base: 'main', title: 'again' })).rejects.toMatchObject({ status: 422 });

    const byHead = await octokit.rest.pulls.list({ owner: OWNER, repo: REPO, head: `${OWNER}:perf/baseline`, base: 'main', state: 'open' });
    expect(byHead.data.map((p) => p.number)).toEqual([8]);
    expect(gh.warnings).toEqual([]);
    const sloppy = await octokit.rest.pulls.list({ owner: OWNER, repo: REPO, head: 'perf/baseline' });
    expect(sloppy.data.map((p) => p.number)).toEqual([8, 7]); // GitHub ignores head without "owner:"
    expect(gh.warnings).toHaveLength(1);

    const patched = await octokit.rest.pulls.update({ owner: OWNER, repo: REPO, pull_number: 8, body: 'refreshed', state: 'closed' });
    expect(patched.data).toMatchObject({ body: 'refreshed', state: 'closed', closed_at: expect.any(String) });
    expect((await octokit.rest.pulls.list({ owner: OWNER, repo: REPO, head: `${OWNER}:perf/baseline` })).data).toEqual([]);
    expect((await octokit.rest.pulls.list({ owner: OWNER, repo: REPO, state: 'closed' })).data.map((p) => p.number)).toEqual([8]);

    // Moving the branch back is not a fast-forward unless forced.
    await expect(octokit.rest.git.updateRef({ owner: OWNER, repo: REPO, ref: 'heads/perf/baseline', sha: main.data.object.sha })).rejects.toMatchObject({
      status: 422,
      message: expect.stringContaining('not a fast forward'),
    });
    const forced = await octokit.rest.git.updateRef({ owner: OWNER, repo: REPO, ref: 'heads/perf/baseline', sha: main.data.object.sha, force: true });
    expect(forced.data.object.sha).toBe(main.data.object.sha);
  });
});

describe('GitHub test server: auth', () => {
  it('answers 401 without a token or with a wrong one', async () => {
    const none = await raw(`/repos/${OWNER}/${REPO}`, { token: null });
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ message: 'Requires authentication', documentation_url: expect.any(String) });
    await expect(getOctokit('ghs_wrong', { baseUrl: gh.url }).rest.repos.get({ owner: OWNER, repo: REPO })).rejects.toMatchObject({ status: 401, message: expect.stringContaining('Bad credentials') });
    const bearer = await raw(`/repos/${OWNER}/${REPO}`, { token: null, headers: { authorization: 'Bearer ghs_main' } });
    expect(bearer.status).toBe(200);
  });

  it('forbids writes with a read-only token', async () => {
    gh.addToken('ghs_readonly', { readOnly: true });
    const ro = getOctokit('ghs_readonly', { baseUrl: gh.url });
    await expect(ro.rest.issues.listComments({ owner: OWNER, repo: REPO, issue_number: 7 })).resolves.toMatchObject({ status: 200 });
    await expect(ro.rest.issues.createComment({ owner: OWNER, repo: REPO, issue_number: 7, body: 'hi' })).rejects.toMatchObject({
      status: 403,
      response: { data: { message: 'Resource not accessible by integration', documentation_url: expect.stringContaining('docs.github.com'), status: '403' } },
    });
    expect(gh.state.comments(gh.repo, 7)).toEqual([]);
  });
});

describe('GitHub test server: fault injection', () => {
  it('injects a 429 with retry-after, once', async () => {
    gh.fail(secondaryRateLimitFault({ method: 'POST', path: /\/issues\/\d+\/comments$/ }));
    const err = await octokit.rest.issues.createComment({ owner: OWNER, repo: REPO, issue_number: 7, body: 'x' }).catch((e) => e);
    expect(err).toMatchObject({ status: 429, response: { headers: { 'retry-after': '1' } } });
    expect(gh.state.comments(gh.repo, 7)).toEqual([]);
    await expect(octokit.rest.issues.createComment({ owner: OWNER, repo: REPO, issue_number: 7, body: 'x' })).resolves.toMatchObject({ status: 201 });
    expect(gh.requests.map((r) => [r.status, r.faulted])).toEqual([
      [429, true],
      [201, false],
    ]);
  });

  it('injects a primary rate limit, a 404 and repeated 500s', async () => {
    gh.fail(rateLimitFault({ path: '/user$' }));
    gh.fail({ method: 'GET', path: /\/git\/ref\/heads\/main$/, status: 404 }); // matches the decoded path
    gh.fail({ path: /^\/repos\/[^/]+\/[^/]+$/, status: 500, times: 2 });
    const limited = await octokit.rest.users.getAuthenticated().catch((e) => e);
    expect(limited).toMatchObject({ status: 403, response: { headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': expect.stringMatching(/^\d+$/) } } });
    await expect(octokit.rest.git.getRef({ owner: OWNER, repo: REPO, ref: 'heads/main' })).rejects.toMatchObject({ status: 404 });
    await expect(octokit.rest.git.getRef({ owner: OWNER, repo: REPO, ref: 'heads/main' })).resolves.toMatchObject({ status: 200 });
    await expect(octokit.rest.repos.get({ owner: OWNER, repo: REPO })).rejects.toMatchObject({ status: 500 });
    await expect(octokit.rest.repos.get({ owner: OWNER, repo: REPO })).rejects.toMatchObject({ status: 500 });
    await expect(octokit.rest.repos.get({ owner: OWNER, repo: REPO })).resolves.toMatchObject({ status: 200 });
  });
});

describe('GitHub test server: the OpenAPI validator bites', () => {
  it('rejects and records a comment without a body', async () => {
    const res = await raw(`/repos/${OWNER}/${REPO}/issues/7/comments`, { method: 'POST', body: JSON.stringify({}) });
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ message: 'Invalid request.\n\n"body" wasn\'t supplied.' });
    expect(gh.violations).toEqual([expect.stringMatching(/issues\/create-comment.*"body" wasn't supplied/)]);
    expect(gh.state.comments(gh.repo, 7)).toEqual([]);
    gh.violations.length = 0;
  });

  it('rejects and records other off-spec requests', async () => {
    const cases: [string, RequestInit, number, RegExp][] = [
      [`/repos/${OWNER}/${REPO}/issues/7/comments`, { method: 'POST', body: JSON.stringify({ body: 42 }) }, 422, /create-comment.*must be string/],
      [`/repos/${OWNER}/${REPO}/issues/7/comments`, { method: 'POST', body: JSON.stringify({ body: 'x', bogus: true }) }, 422, /must NOT have additional properties \(bogus\)/],
      [`/repos/${OWNER}/${REPO}/issues/7/comments`, { method: 'POST', body: '{not json' }, 400, /not valid JSON/],
      [`/repos/${OWNER}/${REPO}/issues/seven/comments`, {}, 404, /path parameter issue_number/],
      [`/repos/${OWNER}/${REPO}/issues/7/comments?perpage=5`, {}, 400, /query parameter "perpage"/],
      [`/repos/${OWNER}/${REPO}/pulls?state=merged`, {}, 422, /pulls\/list.*'state'/],
      [`/repos/${OWNER}/${REPO}/no-such-thing`, {}, 404, /not a path in GitHub's REST API/],
      [`/repos/${OWNER}/${REPO}/issues/7/comments`, { method: 'PUT', body: '{}' }, 404, /PUT is not a method/],
      [`/repos/${OWNER}/${REPO}/git/refs`, { method: 'POST', body: JSON.stringify({ ref: 'refs/heads/x' }) }, 422, /"sha" wasn't supplied/],
    ];
    for (const [path, init, status, violation] of cases) {
      gh.violations.length = 0;
      const res = await raw(path, init);
      expect({ path, status: res.status }).toEqual({ path, status });
      expect(gh.violations).toEqual([expect.stringMatching(violation)]);
    }
    expect(gh.state.comments(gh.repo, 7)).toEqual([]);
    gh.violations.length = 0;
  });

  it('detects an off-spec response from the server itself', async () => {
    const own = gh.state.addComment(gh.repo, 7, { body: 'hello' });
    gh.tamper({ method: 'GET', path: /\/issues\/comments\/\d+$/, mutate: (c) => ({ ...c, id: String(c.id), user: undefined }) });
    await expect(octokit.rest.issues.getComment({ owner: OWNER, repo: REPO, comment_id: own.id })).rejects.toMatchObject({ status: 500 });
    expect(gh.violations).toHaveLength(1);
    expect(gh.violations[0]).toMatch(/^response: GET \/repos\/\{owner\}\/\{repo\}\/issues\/comments\/\{comment_id\} \(issues\/get-comment\) -> 200: /);
    expect(gh.violations[0]).toContain('body/id must be integer');
    expect(gh.violations[0]).toContain("body must have required property 'user'");
    expect(() => gh.assertNoViolations()).toThrow(/spec violations/);

    gh.violations.length = 0;
    await expect(octokit.rest.issues.getComment({ owner: OWNER, repo: REPO, comment_id: own.id })).resolves.toMatchObject({ status: 200 }); // the hook fired once
    gh.tamper({ mutate: (repo) => ({ ...repo, default_branch: null }) });
    await expect(octokit.rest.repos.get({ owner: OWNER, repo: REPO })).rejects.toMatchObject({ status: 500 });
    expect(gh.violations).toEqual([expect.stringMatching(/repos\/get.*default_branch must be string/)]);
    gh.violations.length = 0;
  });

  it('translates OpenAPI 3.0 nullable into JSON Schema', () => {
    expect(toJsonSchema({ type: 'string', nullable: true, enum: ['a'], example: 'a' })).toEqual({ type: ['string', 'null'], enum: ['a', null] });
    expect(toJsonSchema({ oneOf: [{ type: 'string' }, { type: 'integer', nullable: true }] })).toEqual({ anyOf: [{ type: 'string' }, { type: ['integer', 'null'] }] });
    expect(toJsonSchema({ nullable: true, allOf: [{ type: 'object', properties: { example: { type: 'string' } } }] })).toEqual({
      anyOf: [{ type: 'null' }, { allOf: [{ type: 'object', properties: { example: { type: 'string' } } }] }],
    });
  });
});
