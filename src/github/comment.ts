// The sticky pull-request comment: find ours (hidden marker AND written by the token's own user,
// paging through every comment), then update it in place, or create it on the first run.
// Comments by anyone else are never touched, even when they quote our marker.
import type { getOctokit } from '@actions/github';
import type { CommentMode } from '../config/action-inputs';

type Octokit = ReturnType<typeof getOctokit>;

/** The login the token acts as; the workflow token cannot read /user and is github-actions[bot]. */
export async function tokenLogin(octokit: Octokit): Promise<string> {
  try {
    const { data } = await octokit.rest.users.getAuthenticated();
    return data.login;
  } catch (e) {
    const status = (e as { status?: number }).status;
    if (status === 403 || status === 401 || status === 404) return 'github-actions[bot]';
    throw e;
  }
}

export interface CommentTarget {
  owner: string;
  repo: string;
  issueNumber: number;
}

export async function findOurComment(octokit: Octokit, t: CommentTarget, marker: string): Promise<{ id: number; body: string } | undefined> {
  const login = await tokenLogin(octokit);
  const iterator = octokit.paginate.iterator(octokit.rest.issues.listComments, {
    owner: t.owner,
    repo: t.repo,
    issue_number: t.issueNumber,
    per_page: 100,
  });
  for await (const page of iterator) {
    for (const c of page.data) {
      if (c.user?.login === login && c.body?.includes(marker)) return { id: c.id, body: c.body };
    }
  }
  return undefined;
}

/**
 * Creates or updates our comment. With 'on-change', a first comment is only created when the
 * verdict is not a plain pass; an existing comment is always kept current.
 */
export async function upsertComment(
  octokit: Octokit,
  t: CommentTarget,
  marker: string,
  body: string,
  mode: CommentMode,
  isNews: boolean,
): Promise<{ action: 'created' | 'updated' | 'skipped'; id?: number; url?: string }> {
  if (mode === 'never') return { action: 'skipped' };
  const existing = await findOurComment(octokit, t, marker);
  if (existing) {
    const { data } = await octokit.rest.issues.updateComment({ owner: t.owner, repo: t.repo, comment_id: existing.id, body });
    return { action: 'updated', id: data.id, url: data.html_url };
  }
  if (mode === 'on-change' && !isNews) return { action: 'skipped' };
  const { data } = await octokit.rest.issues.createComment({ owner: t.owner, repo: t.repo, issue_number: t.issueNumber, body });
  return { action: 'created', id: data.id, url: data.html_url };
}
