// Owns: the in-memory world behind the test GitHub server — users, repositories, a tiny git object
// store (blobs, commits, refs), issues, pull requests and issue comments — plus the seeding helpers
// tests use to set it up and the read helpers they use to inspect it afterwards. No HTTP here.
import { createHash } from 'node:crypto';

export type UserType = 'User' | 'Bot' | 'Organization';

export interface UserRec {
  id: number;
  login: string;
  type: UserType;
  name: string | null;
  email: string | null;
  createdAt: string;
}

export interface CommitRec {
  sha: string;
  treeSha: string;
  parents: string[];
  message: string;
  /** path -> blob sha */
  files: Map<string, string>;
  author: { name: string; email: string; date: string };
}

export interface IssueRec {
  number: number;
  id: number;
  title: string;
  body: string | null;
  user: UserRec;
  state: 'open' | 'closed';
  createdAt: string;
  updatedAt: string;
  closedAt: string | null;
  isPull: boolean;
}

export interface PullRec {
  number: number;
  id: number;
  issue: IssueRec;
  headRepo: RepoRec;
  headRef: string;
  baseRef: string;
  draft: boolean;
  maintainerCanModify: boolean;
}

export interface CommentRec {
  id: number;
  repo: RepoRec;
  issueNumber: number;
  body: string;
  user: UserRec;
  createdAt: string;
  updatedAt: string;
}

export interface RepoRec {
  id: number;
  owner: UserRec;
  name: string;
  fullName: string;
  private: boolean;
  defaultBranch: string;
  createdAt: string;
  updatedAt: string;
  pushedAt: string;
  /** 'heads/main' -> commit sha (no `refs/` prefix) */
  refs: Map<string, string>;
  commits: Map<string, CommitRec>;
  blobs: Map<string, Buffer>;
  issues: Map<number, IssueRec>;
  pulls: Map<number, PullRec>;
  nextNumber: number;
}

export interface SeedComment {
  body: string;
  /** Author login (created as a User if unknown). Default: the server's token owner. */
  user?: string;
}

export const isoSeconds = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
const sha1 = (data: string | Buffer): string => createHash('sha1').update(data).digest('hex');
export const blobSha = (content: Buffer): string => sha1(Buffer.concat([Buffer.from(`blob ${content.length}\0`), content]));

export class GitHubState {
  readonly users = new Map<string, UserRec>();
  readonly repos = new Map<string, RepoRec>();
  /** Issue comments by id (ids are global on GitHub). */
  readonly commentsById = new Map<number, CommentRec>();
  private seq = { user: 5_000_000, repo: 700_000_000, issue: 2_100_000_000, pull: 1_900_000_000, comment: 2_500_000_000, commit: 0 };

  constructor(
    readonly now: () => Date,
    /** Login of the token owner (default author of seeded content). */
    readonly defaultLogin: string,
  ) {}

  timestamp(): string {
    return isoSeconds(this.now());
  }

  // --- users -----------------------------------------------------------------------------------

  addUser(login: string, opts: { type?: UserType; name?: string | null; email?: string | null; id?: number } = {}): UserRec {
    const existing = this.users.get(login.toLowerCase());
    if (existing) return existing;
    const type = opts.type ?? (login.endsWith('[bot]') ? 'Bot' : 'User');
    const id = opts.id ?? (login === 'github-actions[bot]' ? 41898282 : ++this.seq.user);
    const user: UserRec = { id, login, type, name: opts.name ?? null, email: opts.email ?? null, createdAt: this.timestamp() };
    this.users.set(login.toLowerCase(), user);
    return user;
  }

  user(login: string): UserRec {
    return this.addUser(login);
  }

  // --- repositories and git ---------------------------------------------------------------------

  addRepo(fullName: string, opts: { defaultBranch?: string; files?: Record<string, string>; private?: boolean; ownerType?: UserType } = {}): RepoRec {
    const [ownerLogin, name] = fullName.split('/');
    if (!ownerLogin || !name) throw new Error(`repository must be "owner/name", got ${fullName}`);
    const now = this.timestamp();
    const repo: RepoRec = {
      id: ++this.seq.repo,
      owner: this.addUser(ownerLogin, { type: opts.ownerType ?? 'Organization' }),
      name,
      fullName,
      private: opts.private ?? false,
      defaultBranch: opts.defaultBranch ?? 'main',
      createdAt: now,
      updatedAt: now,
      pushedAt: now,
      refs: new Map(),
      commits: new Map(),
      blobs: new Map(),
      issues: new Map(),
      pulls: new Map(),
      nextNumber: 1,
    };
    this.repos.set(fullName.toLowerCase(), repo);
    const root = this.commit(repo, undefined, { 'README.md': `# ${name}\n`, ...(opts.files ?? {}) }, 'Initial commit');
    repo.refs.set(`heads/${repo.defaultBranch}`, root);
    return repo;
  }

  repo(owner: string, name?: string): RepoRec | undefined {
    return this.repos.get((name === undefined ? owner : `${owner}/${name}`).toLowerCase());
  }

  requireRepo(fullName: string): RepoRec {
    const repo = this.repo(fullName);
    if (!repo) throw new Error(`no repository ${fullName} (add it with state.addRepo)`);
    return repo;
  }

  /** Makes a commit whose tree is `parent`'s with `changes` applied (null deletes a path). Returns its sha. */
  commit(repo: RepoRec, parent: string | undefined, changes: Record<string, string | Buffer | null>, message: string, author?: { name: string; email: string }): string {
    const files = new Map(parent ? repo.commits.get(parent)?.files : undefined);
    for (const [path, content] of Object.entries(changes)) {
      if (content === null) {
        files.delete(path);
        continue;
      }
      const buf = Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8');
      const sha = blobSha(buf);
      repo.blobs.set(sha, buf);
      files.set(path, sha);
    }
    const treeSha = sha1(
      [...files]
        .sort()
        .map(([p, s]) => `${p}\0${s}`)
        .join('\n'),
    );
    const date = this.timestamp();
    const sha = sha1(`commit ${treeSha} ${parent ?? ''} ${message} ${date} ${++this.seq.commit}`);
    const who = author ?? { name: 'Monalisa Octocat', email: 'octocat@users.noreply.example' };
    repo.commits.set(sha, { sha, treeSha, parents: parent ? [parent] : [], message, files, author: { ...who, date } });
    repo.pushedAt = date;
    return sha;
  }

  /** Resolves a branch name, `heads/x`, `refs/heads/x`, tag or commit sha to a commit. */
  resolve(repo: RepoRec, ref: string | undefined): CommitRec | undefined {
    const r = ref ?? repo.defaultBranch;
    const sha = repo.refs.get(r.replace(/^refs\//, '')) ?? repo.refs.get(`heads/${r}`) ?? repo.refs.get(`tags/${r}`) ?? (/^[0-9a-f]{40}$/.test(r) ? r : undefined);
    return sha ? repo.commits.get(sha) : undefined;
  }

  isAncestor(repo: RepoRec, ancestor: string, descendant: string): boolean {
    const seen = new Set<string>();
    const todo = [descendant];
    while (todo.length) {
      const sha = todo.pop()!;
      if (sha === ancestor) return true;
      if (seen.has(sha)) continue;
      seen.add(sha);
      todo.push(...(repo.commits.get(sha)?.parents ?? []));
    }
    return false;
  }

  /** Creates `branch` from `from` (default branch) if it does not exist; returns its head sha. */
  ensureBranch(fullName: string, branch: string, from?: string): string {
    const repo = this.requireRepo(fullName);
    const existing = repo.refs.get(`heads/${branch}`);
    if (existing) return existing;
    const base = this.resolve(repo, from ?? repo.defaultBranch);
    if (!base) throw new Error(`cannot branch ${branch} from ${from}`);
    repo.refs.set(`heads/${branch}`, base.sha);
    return base.sha;
  }

  /** Commits files onto a branch (creating it from the default branch if needed). Returns the new sha. */
  writeFiles(fullName: string, branch: string, files: Record<string, string | null>, message = 'Update files'): string {
    const repo = this.requireRepo(fullName);
    const parent = this.ensureBranch(fullName, branch);
    const sha = this.commit(repo, parent, files, message);
    repo.refs.set(`heads/${branch}`, sha);
    return sha;
  }

  readFile(fullName: string, path: string, ref?: string): string | undefined {
    const repo = this.requireRepo(fullName);
    const blob = this.resolve(repo, ref)?.files.get(path);
    return blob === undefined ? undefined : repo.blobs.get(blob)?.toString('utf8');
  }

  branchSha(fullName: string, branch: string): string | undefined {
    return this.requireRepo(fullName).refs.get(`heads/${branch}`);
  }

  // --- issues, pulls, comments ------------------------------------------------------------------

  addIssue(fullName: string, opts: { title?: string; body?: string | null; user?: string; number?: number } = {}): IssueRec {
    return this.newIssue(this.requireRepo(fullName), { ...opts, isPull: false });
  }

  newIssue(repo: RepoRec, opts: { title?: string; body?: string | null; user?: string; number?: number; isPull: boolean }): IssueRec {
    const number = opts.number ?? repo.nextNumber;
    if (repo.issues.has(number)) throw new Error(`${repo.fullName}#${number} already exists`);
    repo.nextNumber = Math.max(repo.nextNumber, number + 1);
    const now = this.timestamp();
    const issue: IssueRec = {
      number,
      id: ++this.seq.issue,
      title: opts.title ?? `Issue ${number}`,
      body: opts.body ?? null,
      user: this.user(opts.user ?? this.defaultLogin),
      state: 'open',
      createdAt: now,
      updatedAt: now,
      closedAt: null,
      isPull: opts.isPull,
    };
    repo.issues.set(number, issue);
    return issue;
  }

  /**
   * Seeds a pull request. The head branch is created from the base when missing, and given a commit
   * (with `files`, or a placeholder) so that head and base differ, as for a real pull request.
   */
  addPull(fullName: string, opts: { head: string; base?: string; title?: string; body?: string | null; user?: string; number?: number; draft?: boolean; files?: Record<string, string> }): PullRec {
    const repo = this.requireRepo(fullName);
    const base = opts.base ?? repo.defaultBranch;
    if (!repo.refs.has(`heads/${opts.head}`)) {
      this.ensureBranch(fullName, opts.head, base);
      this.writeFiles(fullName, opts.head, opts.files ?? { [`changes/${opts.head}.txt`]: `${opts.head}\n` }, `Work on ${opts.head}`);
    }
    return this.newPull(repo, repo, { ...opts, base, title: opts.title ?? `Pull request from ${opts.head}` });
  }

  newPull(
    repo: RepoRec,
    headRepo: RepoRec,
    opts: { head: string; base: string; title: string; body?: string | null; user?: string; number?: number; draft?: boolean; maintainerCanModify?: boolean },
  ): PullRec {
    const issue = this.newIssue(repo, { title: opts.title, body: opts.body, user: opts.user, number: opts.number, isPull: true });
    const pull: PullRec = {
      number: issue.number,
      id: ++this.seq.pull,
      issue,
      headRepo,
      headRef: opts.head,
      baseRef: opts.base,
      draft: opts.draft ?? false,
      maintainerCanModify: opts.maintainerCanModify ?? false,
    };
    repo.pulls.set(pull.number, pull);
    return pull;
  }

  /** Seeds a comment (defaults to the token owner as author). The issue/pull must exist. */
  addComment(fullName: string, issueNumber: number, seed: SeedComment): CommentRec {
    const repo = this.requireRepo(fullName);
    if (!repo.issues.has(issueNumber)) throw new Error(`${fullName}#${issueNumber} does not exist (seed it with addIssue/addPull)`);
    const now = this.timestamp();
    const comment: CommentRec = { id: ++this.seq.comment, repo, issueNumber, body: seed.body, user: this.user(seed.user ?? this.defaultLogin), createdAt: now, updatedAt: now };
    this.commentsById.set(comment.id, comment);
    return comment;
  }

  /** Comments on an issue/pull, oldest first (GitHub's order). */
  comments(fullName: string, issueNumber: number): CommentRec[] {
    const repo = this.requireRepo(fullName);
    return [...this.commentsById.values()].filter((c) => c.repo === repo && c.issueNumber === issueNumber).sort((a, b) => a.id - b.id);
  }

  pulls(fullName: string): PullRec[] {
    return [...this.requireRepo(fullName).pulls.values()];
  }
}
