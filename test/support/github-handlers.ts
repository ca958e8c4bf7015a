// Owns: the behaviour of each REST operation the test GitHub server emulates, keyed by the spec's
// operationId — status codes, GitHub's error messages, pagination (`Link` headers) and state changes.
// Requests reaching a handler have already been authenticated and validated against the spec.
import type { GitHubObjects } from './github-objects';
import type { CommentRec, GitHubState, PullRec, RepoRec, UserRec } from './github-state';

export interface TokenIdentity {
  token: string;
  login: string;
  /** `installation` behaves like an Actions GITHUB_TOKEN (`GET /user` is forbidden). */
  kind: 'user' | 'installation';
  /** Every write answers 403 "Resource not accessible by integration". */
  readOnly: boolean;
}

export interface HandlerContext {
  state: GitHubState;
  objects: GitHubObjects;
  params: Record<string, any>;
  query: Record<string, any>;
  body: any;
  identity: TokenIdentity;
  user: UserRec;
  /** The request URL (for pagination links). */
  url: URL;
  accept: string;
  warn(message: string): void;
}

export interface HandlerResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Non-JSON body (raw media type); skips schema validation. */
  raw?: { contentType: string; data: Buffer };
}

export type Handler = (ctx: HandlerContext) => HandlerResult;

/** Thrown by handlers for error answers; the server adds `documentation_url` and `status`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

const notFound = (): HttpError => new HttpError(404, 'Not Found');
const validationFailed = (resource: string, field: string | undefined, code: string, message?: string): HttpError =>
  new HttpError(422, 'Validation Failed', { errors: [{ resource, code, ...(field ? { field } : {}), ...(message ? { message } : {}) }] });
export const COMMENT_MAX = 65536;

function repoOf(ctx: HandlerContext): RepoRec {
  const repo = ctx.state.repo(ctx.params.owner, ctx.params.repo);
  if (!repo) throw notFound();
  return repo;
}

/** Slices `items` for `per_page`/`page` and builds GitHub's `Link` header (prev, next, last, first). */
function paginate<T>(ctx: HandlerContext, items: T[]): { page: T[]; headers: Record<string, string> } {
  const requested = Number(ctx.query.per_page ?? 30);
  const perPage = requested > 0 ? Math.min(requested, 100) : 30;
  const page = Math.max(1, Number(ctx.query.page ?? 1) || 1);
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const link = (n: number, rel: string): string => {
    const u = new URL(ctx.url.href);
    u.searchParams.set('page', String(n));
    return `<${u.href}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (page > 1) links.push(link(Math.min(page - 1, last), 'prev'));
  if (page < last) links.push(link(page + 1, 'next'), link(last, 'last'));
  if (page > 1) links.push(link(1, 'first'));
  return { page: items.slice((page - 1) * perPage, page * perPage), headers: links.length ? { link: links.join(', ') } : {} };
}

function checkCommentBody(body: string): void {
  if (body.length > COMMENT_MAX) throw validationFailed('IssueComment', 'data', 'unprocessable', `Body is too long (maximum is ${COMMENT_MAX} characters)`);
}

function commentOf(ctx: HandlerContext): CommentRec {
  const repo = repoOf(ctx);
  const comment = ctx.state.commentsById.get(ctx.params.comment_id);
  if (!comment || comment.repo !== repo) throw notFound();
  return comment;
}

function pullJson(ctx: HandlerContext, repo: RepoRec, p: PullRec, full: boolean): unknown {
  const headSha = p.headRepo.refs.get(`heads/${p.headRef}`) ?? '0'.repeat(40);
  const baseSha = repo.refs.get(`heads/${p.baseRef}`) ?? '0'.repeat(40);
  return ctx.objects.pullRequest(repo, p, headSha, baseSha, full, ctx.state.comments(repo.fullName, p.number).length);
}

function pullOf(ctx: HandlerContext): { repo: RepoRec; pull: PullRec } {
  const repo = repoOf(ctx);
  const pull = repo.pulls.get(ctx.params.pull_number);
  if (!pull) throw notFound();
  return { repo, pull };
}

const isRaw = (accept: string): boolean => /application\/vnd\.github(\.v3)?\.raw/.test(accept);

export const handlers: Record<string, Handler> = {
  'users/get-authenticated': (ctx) => {
    if (ctx.identity.kind === 'installation') throw new HttpError(403, 'Resource not accessible by integration');
    return { status: 200, body: ctx.objects.privateUser(ctx.user) };
  },

  'repos/get': (ctx) => ({ status: 200, body: ctx.objects.repository(repoOf(ctx)) }),

  // --- issue comments ------------------------------------------------------------------------

  'issues/list-comments': (ctx) => {
    const repo = repoOf(ctx);
    if (!repo.issues.has(ctx.params.issue_number)) throw notFound();
    let comments = ctx.state.comments(repo.fullName, ctx.params.issue_number);
    if (ctx.query.since) comments = comments.filter((c) => c.updatedAt >= String(ctx.query.since).replace(/\.\d+Z$/, 'Z'));
    const { page, headers } = paginate(ctx, comments);
    return { status: 200, headers, body: page.map((c) => ctx.objects.issueComment(c, repo.owner.login)) };
  },

  'issues/create-comment': (ctx) => {
    const repo = repoOf(ctx);
    if (!repo.issues.has(ctx.params.issue_number)) throw notFound();
    checkCommentBody(ctx.body.body);
    const c = ctx.state.addComment(repo.fullName, ctx.params.issue_number, { body: ctx.body.body, user: ctx.user.login });
    const json = ctx.objects.issueComment(c, repo.owner.login);
    return { status: 201, headers: { location: json.url }, body: json };
  },

  'issues/get-comment': (ctx) => ({ status: 200, body: ctx.objects.issueComment(commentOf(ctx), repoOf(ctx).owner.login) }),

  'issues/update-comment': (ctx) => {
    const comment = commentOf(ctx);
    checkCommentBody(ctx.body.body);
    comment.body = ctx.body.body;
    comment.updatedAt = ctx.state.timestamp();
    return { status: 200, body: ctx.objects.issueComment(comment, comment.repo.owner.login) };
  },

  'issues/delete-comment': (ctx) => {
    ctx.state.commentsById.delete(commentOf(ctx).id);
    return { status: 204 };
  },

  // --- git refs ----------------------------------------------------------------------------------

  'git/get-ref': (ctx) => {
    const repo = repoOf(ctx);
    const sha = repo.refs.get(ctx.params.ref);
    if (!sha) throw notFound();
    return { status: 200, body: ctx.objects.gitRef(repo, ctx.params.ref, sha) };
  },

  'git/create-ref': (ctx) => {
    const repo = repoOf(ctx);
    const { ref, sha } = ctx.body as { ref: string; sha: string };
    if (!/^refs\/[^/]+\/.+/.test(ref)) throw new HttpError(422, 'Reference name is not valid');
    if (!repo.commits.has(sha)) throw new HttpError(422, 'Object does not exist');
    const short = ref.slice('refs/'.length);
    if (repo.refs.has(short)) throw new HttpError(422, 'Reference already exists');
    repo.refs.set(short, sha);
    const json = ctx.objects.gitRef(repo, short, sha);
    return { status: 201, headers: { location: json.url }, body: json };
  },

  'git/update-ref': (ctx) => {
    const repo = repoOf(ctx);
    const ref: string = ctx.params.ref;
    const current = repo.refs.get(ref);
    if (!current) throw new HttpError(422, 'Reference does not exist');
    const { sha, force } = ctx.body as { sha: string; force?: boolean };
    if (!repo.commits.has(sha)) throw new HttpError(422, 'Object does not exist');
    if (!force && !ctx.state.isAncestor(repo, current, sha)) throw new HttpError(422, 'Update is not a fast forward');
    repo.refs.set(ref, sha);
    return { status: 200, body: ctx.objects.gitRef(repo, ref, sha) };
  },

  'git/delete-ref': (ctx) => {
    const repo = repoOf(ctx);
    if (!repo.refs.delete(ctx.params.ref)) throw new HttpError(422, 'Reference does not exist');
    return { status: 204 };
  },

  // --- contents -----------------------------------------------------------------------------------

  'repos/get-content': (ctx) => {
    const repo = repoOf(ctx);
    const ref: string = ctx.query.ref ?? repo.defaultBranch;
    const commit = ctx.state.resolve(repo, ref);
    if (!commit) throw new HttpError(404, `No commit found for the ref ${ref}`);
    const path = String(ctx.params.path).replace(/^\/+|\/+$/g, '');
    const blob = commit.files.get(path);
    if (blob) {
      const data = repo.blobs.get(blob)!;
      if (isRaw(ctx.accept)) return { status: 200, raw: { contentType: 'application/vnd.github.raw; charset=utf-8', data } };
      return { status: 200, body: ctx.objects.contentFile(repo, path, blob, data, ref) };
    }
    const entries = new Map<string, { type: 'file' | 'dir'; sha: string; size: number }>();
    for (const [p, sha] of commit.files) {
      if (!p.startsWith(`${path}/`)) continue;
      const rest = p.slice(path.length + 1);
      const name = rest.split('/')[0];
      const isDir = rest.includes('/');
      entries.set(name, isDir ? { type: 'dir', sha: '0'.repeat(40), size: 0 } : { type: 'file', sha, size: repo.blobs.get(sha)!.length });
    }
    if (entries.size === 0) throw notFound();
    const list = [...entries].sort(([a], [b]) => a.localeCompare(b)).map(([name, e]) => ctx.objects.contentDirEntry(repo, `${path}/${name}`, e.sha, e.size, ref, e.type));
    return { status: 200, body: list };
  },

  'repos/create-or-update-file-contents': (ctx) => {
    const repo = repoOf(ctx);
    const body = ctx.body as { message: string; content: string; sha?: string; branch?: string; author?: { name: string; email: string }; committer?: { name: string; email: string } };
    const path = String(ctx.params.path).replace(/^\/+/, '');
    const branch = body.branch ?? repo.defaultBranch;
    const head = repo.refs.get(`heads/${branch}`);
    if (!head) throw new HttpError(404, `Branch ${branch} not found`);
    if (!/^[A-Za-z0-9+/\r\n]*={0,2}\s*$/.test(body.content)) throw new HttpError(422, 'content is not valid Base64');
    const existing = repo.commits.get(head)!.files.get(path);
    if (existing && body.sha === undefined) throw new HttpError(422, 'Invalid request.\n\n"sha" wasn\'t supplied.');
    if (body.sha !== undefined && body.sha !== existing) throw new HttpError(409, `${path} does not match ${body.sha}`);
    const data = Buffer.from(body.content, 'base64');
    const sha = ctx.state.commit(repo, head, { [path]: data }, body.message, body.author ?? body.committer);
    repo.refs.set(`heads/${branch}`, sha);
    const commit = repo.commits.get(sha)!;
    return { status: existing ? 200 : 201, body: ctx.objects.fileCommit(repo, path, commit.files.get(path)!, data.length, branch, commit) };
  },

  // --- pull requests ---------------------------------------------------------------------------------

  'pulls/list': (ctx) => {
    const repo = repoOf(ctx);
    const state: string = ctx.query.state ?? 'open';
    let pulls = [...repo.pulls.values()].filter((p) => state === 'all' || p.issue.state === state);
    const head: string | undefined = ctx.query.head;
    if (head !== undefined) {
      const colon = head.indexOf(':');
      if (colon < 0) {
        // GitHub ignores a `head` filter without the `owner:` prefix and returns every pull request.
        ctx.warn(`GET /repos/${repo.fullName}/pulls: head=${head} lacks the "owner:" prefix, so GitHub ignores it`);
      } else {
        const owner = head.slice(0, colon).toLowerCase();
        const ref = head.slice(colon + 1);
        pulls = pulls.filter((p) => p.headRepo.owner.login.toLowerCase() === owner && (ref === '' || p.headRef === ref));
      }
    }
    if (ctx.query.base !== undefined) pulls = pulls.filter((p) => p.baseRef === ctx.query.base);
    const sort: string = ctx.query.sort ?? 'created';
    const direction: string = ctx.query.direction ?? (sort === 'created' ? 'desc' : 'asc');
    const key = (p: PullRec): string => (sort === 'updated' ? p.issue.updatedAt : p.issue.createdAt) + String(p.number).padStart(10, '0');
    pulls.sort((a, b) => key(a).localeCompare(key(b)) * (direction === 'desc' ? -1 : 1));
    const { page, headers } = paginate(ctx, pulls);
    return { status: 200, headers, body: page.map((p) => pullJson(ctx, repo, p, false)) };
  },

  'pulls/create': (ctx) => {
    const repo = repoOf(ctx);
    const body = ctx.body as { title?: string; head: string; head_repo?: string; base: string; body?: string; draft?: boolean; maintainer_can_modify?: boolean; issue?: number };
    if (body.title === undefined && body.issue === undefined) throw validationFailed('PullRequest', 'title', 'missing_field');
    if (body.issue !== undefined) throw new HttpError(422, 'Converting an issue into a pull request is not emulated');
    const [headOwner, headRef] = body.head.includes(':') ? body.head.split(/:(.*)/s) : [repo.owner.login, body.head];
    const headRepo = ctx.state.repo(body.head_repo ?? `${headOwner}/${repo.name}`);
    const headSha = headRepo?.refs.get(`heads/${headRef}`);
    if (!headRepo || !headSha) throw validationFailed('PullRequest', 'head', 'invalid');
    const baseSha = repo.refs.get(`heads/${body.base}`);
    if (!baseSha) throw validationFailed('PullRequest', 'base', 'invalid');
    const dup = [...repo.pulls.values()].find((p) => p.issue.state === 'open' && p.headRepo === headRepo && p.headRef === headRef && p.baseRef === body.base);
    if (dup) throw validationFailed('PullRequest', undefined, 'custom', `A pull request already exists for ${headRepo.owner.login}:${headRef}.`);
    if (headSha === baseSha) throw validationFailed('PullRequest', undefined, 'custom', `No commits between ${body.base} and ${headRef}`);
    const pull = ctx.state.newPull(repo, headRepo, {
      head: headRef,
      base: body.base,
      title: body.title!,
      body: body.body ?? null,
      user: ctx.user.login,
      draft: body.draft,
      maintainerCanModify: body.maintainer_can_modify,
    });
    return { status: 201, headers: { location: ctx.objects.api(`repos/${repo.fullName}/pulls/${pull.number}`) }, body: pullJson(ctx, repo, pull, true) };
  },

  'pulls/get': (ctx) => {
    const { repo, pull } = pullOf(ctx);
    return { status: 200, body: pullJson(ctx, repo, pull, true) };
  },

  'pulls/update': (ctx) => {
    const { repo, pull } = pullOf(ctx);
    const body = (ctx.body ?? {}) as { title?: string; body?: string; state?: 'open' | 'closed'; base?: string; maintainer_can_modify?: boolean };
    if (body.base !== undefined && !repo.refs.has(`heads/${body.base}`)) throw validationFailed('PullRequest', 'base', 'invalid');
    const now = ctx.state.timestamp();
    if (body.title !== undefined) pull.issue.title = body.title;
    if (body.body !== undefined) pull.issue.body = body.body;
    if (body.base !== undefined) pull.baseRef = body.base;
    if (body.maintainer_can_modify !== undefined) pull.maintainerCanModify = body.maintainer_can_modify;
    if (body.state !== undefined && body.state !== pull.issue.state) {
      pull.issue.state = body.state;
      pull.issue.closedAt = body.state === 'closed' ? now : null;
    }
    pull.issue.updatedAt = now;
    return { status: 200, body: pullJson(ctx, repo, pull, true) };
  },
};
