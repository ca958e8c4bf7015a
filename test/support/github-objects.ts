// Owns: turning the test GitHub server's in-memory records into the JSON objects GitHub's REST API
// returns (users, repositories, issue comments, pull requests, git refs, contents, file commits),
// with every field the OpenAPI schemas require and URLs built from the server's own base URL.
import type { CommentRec, CommitRec, PullRec, RepoRec, UserRec } from './github-state';

type Json = Record<string, any>;

const nodeId = (kind: string, id: number | string): string => Buffer.from(`0${kind.length}:${kind}${id}`).toString('base64');

export class GitHubObjects {
  constructor(readonly base: string) {}

  /** Web (html) URL for a path, e.g. `octo-org/octo-repo/pull/1`. */
  html(path: string): string {
    return `${this.base}/${path}`;
  }

  /** API URL for a path, e.g. `repos/octo-org/octo-repo`. */
  api(path: string): string {
    return `${this.base}/${path}`;
  }

  simpleUser(u: UserRec): Json {
    const url = this.api(`users/${encodeURIComponent(u.login)}`);
    return {
      login: u.login,
      id: u.id,
      node_id: nodeId(u.type, u.id),
      avatar_url: `${this.base}/avatars/u/${u.id}?v=4`,
      gravatar_id: '',
      url,
      html_url: u.type === 'Bot' ? this.html(`apps/${u.login.replace(/\[bot\]$/, '')}`) : this.html(u.login),
      followers_url: `${url}/followers`,
      following_url: `${url}/following{/other_user}`,
      gists_url: `${url}/gists{/gist_id}`,
      starred_url: `${url}/starred{/owner}{/repo}`,
      subscriptions_url: `${url}/subscriptions`,
      organizations_url: `${url}/orgs`,
      repos_url: `${url}/repos`,
      events_url: `${url}/events{/privacy}`,
      received_events_url: `${url}/received_events`,
      type: u.type,
      user_view_type: 'public',
      site_admin: false,
    };
  }

  /** `GET /user` for a user token (the "private user" variant). */
  privateUser(u: UserRec): Json {
    return {
      ...this.simpleUser(u),
      name: u.name,
      company: null,
      blog: '',
      location: null,
      email: u.email,
      hireable: null,
      bio: null,
      twitter_username: null,
      notification_email: u.email,
      public_repos: 0,
      public_gists: 0,
      followers: 0,
      following: 0,
      created_at: u.createdAt,
      updated_at: u.createdAt,
      private_gists: 0,
      total_private_repos: 0,
      owned_private_repos: 0,
      disk_usage: 0,
      collaborators: 0,
      two_factor_authentication: true,
      plan: { name: 'free', space: 976562499, private_repos: 10000, collaborators: 0 },
    };
  }

  repository(r: RepoRec): Json {
    const url = this.api(`repos/${r.fullName}`);
    const html = this.html(r.fullName);
    const openIssues = [...r.issues.values()].filter((i) => i.state === 'open').length;
    return {
      id: r.id,
      node_id: nodeId('Repository', r.id),
      name: r.name,
      full_name: r.fullName,
      owner: this.simpleUser(r.owner),
      private: r.private,
      html_url: html,
      description: null,
      fork: false,
      url,
      archive_url: `${url}/{archive_format}{/ref}`,
      assignees_url: `${url}/assignees{/user}`,
      blobs_url: `${url}/git/blobs{/sha}`,
      branches_url: `${url}/branches{/branch}`,
      collaborators_url: `${url}/collaborators{/collaborator}`,
      comments_url: `${url}/comments{/number}`,
      commits_url: `${url}/commits{/sha}`,
      compare_url: `${url}/compare/{base}...{head}`,
      contents_url: `${url}/contents/{+path}`,
      contributors_url: `${url}/contributors`,
      deployments_url: `${url}/deployments`,
      downloads_url: `${url}/downloads`,
      events_url: `${url}/events`,
      forks_url: `${url}/forks`,
      git_commits_url: `${url}/git/commits{/sha}`,
      git_refs_url: `${url}/git/refs{/sha}`,
      git_tags_url: `${url}/git/tags{/sha}`,
      git_url: `git://${new URL(this.base).host}/${r.fullName}.git`,
      issue_comment_url: `${url}/issues/comments{/number}`,
      issue_events_url: `${url}/issues/events{/number}`,
      issues_url: `${url}/issues{/number}`,
      keys_url: `${url}/keys{/key_id}`,
      labels_url: `${url}/labels{/name}`,
      languages_url: `${url}/languages`,
      merges_url: `${url}/merges`,
      milestones_url: `${url}/milestones{/number}`,
      notifications_url: `${url}/notifications{?since,all,participating}`,
      pulls_url: `${url}/pulls{/number}`,
      releases_url: `${url}/releases{/id}`,
      ssh_url: `git@${new URL(this.base).hostname}:${r.fullName}.git`,
      stargazers_url: `${url}/stargazers`,
      statuses_url: `${url}/statuses/{sha}`,
      subscribers_url: `${url}/subscribers`,
      subscription_url: `${url}/subscription`,
      tags_url: `${url}/tags`,
      teams_url: `${url}/teams`,
      trees_url: `${url}/git/trees{/sha}`,
      clone_url: `${html}.git`,
      mirror_url: null,
      hooks_url: `${url}/hooks`,
      svn_url: html,
      homepage: null,
      language: 'Erlang',
      forks_count: 0,
      forks: 0,
      stargazers_count: 0,
      watchers_count: 0,
      watchers: 0,
      size: 0,
      default_branch: r.defaultBranch,
      open_issues_count: openIssues,
      open_issues: openIssues,
      is_template: false,
      topics: [],
      has_issues: true,
      has_projects: true,
      has_wiki: true,
      has_pages: false,
      has_downloads: true,
      has_discussions: false,
      archived: false,
      disabled: false,
      visibility: r.private ? 'private' : 'public',
      pushed_at: r.pushedAt,
      created_at: r.createdAt,
      updated_at: r.updatedAt,
      permissions: { admin: false, maintain: false, push: true, triage: true, pull: true },
      allow_forking: true,
      web_commit_signoff_required: false,
      license: null,
      network_count: 0,
      subscribers_count: 0,
    };
  }

  issueComment(c: CommentRec, ownerLogin: string): Json {
    const repoUrl = this.api(`repos/${c.repo.fullName}`);
    const kind = c.repo.issues.get(c.issueNumber)?.isPull ? 'pull' : 'issues';
    return {
      id: c.id,
      node_id: nodeId('IssueComment', c.id),
      url: `${repoUrl}/issues/comments/${c.id}`,
      html_url: this.html(`${c.repo.fullName}/${kind}/${c.issueNumber}#issuecomment-${c.id}`),
      body: c.body,
      user: this.simpleUser(c.user),
      created_at: c.createdAt,
      updated_at: c.updatedAt,
      issue_url: `${repoUrl}/issues/${c.issueNumber}`,
      author_association: c.user.login.toLowerCase() === ownerLogin.toLowerCase() ? 'OWNER' : 'NONE',
      performed_via_github_app: null,
      reactions: {
        url: `${repoUrl}/issues/comments/${c.id}/reactions`,
        total_count: 0,
        '+1': 0,
        '-1': 0,
        laugh: 0,
        hooray: 0,
        confused: 0,
        heart: 0,
        rocket: 0,
        eyes: 0,
      },
    };
  }

  gitRef(r: RepoRec, ref: string, sha: string): Json {
    const url = this.api(`repos/${r.fullName}`);
    return {
      ref: `refs/${ref}`,
      node_id: nodeId('Ref', `${r.id}:refs/${ref}`),
      url: `${url}/git/refs/${ref}`,
      object: { type: 'commit', sha, url: `${url}/git/commits/${sha}` },
    };
  }

  private contentBase(r: RepoRec, path: string, sha: string, size: number, ref: string): Json {
    const url = this.api(`repos/${r.fullName}`);
    const self = `${url}/contents/${path}?ref=${encodeURIComponent(ref)}`;
    const html = this.html(`${r.fullName}/blob/${ref}/${path}`);
    const git = `${url}/git/blobs/${sha}`;
    return {
      name: path.split('/').pop(),
      path,
      sha,
      size,
      url: self,
      html_url: html,
      git_url: git,
      download_url: this.html(`raw/${r.fullName}/${ref}/${path}`),
      type: 'file',
      _links: { self, git, html },
    };
  }

  contentFile(r: RepoRec, path: string, sha: string, content: Buffer, ref: string): Json {
    // GitHub wraps base64 at 60 characters per line.
    const b64 = content.toString('base64').replace(/.{60}/g, '$&\n');
    return { ...this.contentBase(r, path, sha, content.length, ref), content: b64 + (b64.endsWith('\n') || b64 === '' ? '' : '\n'), encoding: 'base64' };
  }

  contentDirEntry(r: RepoRec, path: string, sha: string, size: number, ref: string, type: 'file' | 'dir'): Json {
    const entry = this.contentBase(r, path, sha, size, ref);
    return type === 'dir' ? { ...entry, type, size: 0, download_url: null } : entry;
  }

  fileCommit(r: RepoRec, path: string, blob: string, size: number, branch: string, commit: CommitRec): Json {
    const url = this.api(`repos/${r.fullName}`);
    return {
      content: this.contentBase(r, path, blob, size, branch),
      commit: {
        sha: commit.sha,
        node_id: nodeId('Commit', commit.sha),
        url: `${url}/git/commits/${commit.sha}`,
        html_url: this.html(`${r.fullName}/commit/${commit.sha}`),
        author: commit.author,
        committer: commit.author,
        tree: { url: `${url}/git/trees/${commit.treeSha}`, sha: commit.treeSha },
        message: commit.message,
        parents: commit.parents.map((sha) => ({ url: `${url}/git/commits/${sha}`, html_url: this.html(`${r.fullName}/commit/${sha}`), sha })),
        verification: { verified: false, reason: 'unsigned', signature: null, payload: null, verified_at: null },
      },
    };
  }

  /** A pull request; `full` adds the fields only `GET/POST/PATCH` of a single pull return. */
  pullRequest(repo: RepoRec, p: PullRec, headSha: string, baseSha: string, full: boolean, commentCount = 0): Json {
    const url = this.api(`repos/${repo.fullName}`);
    const self = `${url}/pulls/${p.number}`;
    const html = this.html(`${repo.fullName}/pull/${p.number}`);
    const issue = p.issue;
    const side = (r: RepoRec, ref: string, sha: string): Json => ({
      label: `${r.owner.login}:${ref}`,
      ref,
      sha,
      user: this.simpleUser(r.owner),
      repo: this.repository(r),
    });
    const merged = false;
    const pr: Json = {
      url: self,
      id: p.id,
      node_id: nodeId('PullRequest', p.id),
      html_url: html,
      diff_url: `${html}.diff`,
      patch_url: `${html}.patch`,
      issue_url: `${url}/issues/${p.number}`,
      commits_url: `${self}/commits`,
      review_comments_url: `${self}/comments`,
      review_comment_url: `${url}/pulls/comments{/number}`,
      comments_url: `${url}/issues/${p.number}/comments`,
      statuses_url: `${url}/statuses/${headSha}`,
      number: p.number,
      state: issue.state,
      locked: false,
      title: issue.title,
      user: this.simpleUser(issue.user),
      body: issue.body,
      labels: [],
      milestone: null,
      active_lock_reason: null,
      created_at: issue.createdAt,
      updated_at: issue.updatedAt,
      closed_at: issue.closedAt,
      merged_at: null,
      merge_commit_sha: null,
      assignee: null,
      assignees: [],
      requested_reviewers: [],
      requested_teams: [],
      head: side(p.headRepo, p.headRef, headSha),
      base: side(repo, p.baseRef, baseSha),
      _links: {
        self: { href: self },
        html: { href: html },
        issue: { href: `${url}/issues/${p.number}` },
        comments: { href: `${url}/issues/${p.number}/comments` },
        review_comments: { href: `${self}/comments` },
        review_comment: { href: `${url}/pulls/comments{/number}` },
        commits: { href: `${self}/commits` },
        statuses: { href: `${url}/statuses/${headSha}` },
      },
      author_association: issue.user.login.toLowerCase() === repo.owner.login.toLowerCase() ? 'OWNER' : 'NONE',
      auto_merge: null,
      draft: p.draft,
    };
    if (!full) return pr;
    return {
      ...pr,
      merged,
      mergeable: issue.state === 'open' ? true : null,
      rebaseable: issue.state === 'open' ? true : null,
      mergeable_state: issue.state === 'open' ? 'clean' : 'unknown',
      merged_by: null,
      comments: commentCount,
      review_comments: 0,
      maintainer_can_modify: p.maintainerCanModify,
      commits: 1,
      additions: 1,
      deletions: 0,
      changed_files: 1,
    };
  }
}
