// The octokit client the action uses: the workflow token, GITHUB_API_URL, and a bounded retry
// on rate limits (429, or 403 with x-ratelimit-remaining: 0) honouring retry-after. API failures
// become one sentence that says what the token was missing.
import { setTimeout as sleep } from 'node:timers/promises';
import { getOctokit } from '@actions/github';
import { GateError } from '../schema/errors';

const MAX_RETRIES = 3;
const MAX_WAIT_S = 60;

export function client(token: string, baseUrl?: string): ReturnType<typeof getOctokit> {
  const octokit = getOctokit(token, baseUrl ? { baseUrl } : {});
  octokit.hook.wrap('request', async (request, options) => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await request(options);
      } catch (e) {
        const h = (e as { response?: { headers?: Record<string, string> } }).response?.headers ?? {};
        if (!rateLimited(e) || attempt >= MAX_RETRIES) throw e;
        const wait = Number(h['retry-after']) || Math.max(1, Number(h['x-ratelimit-reset']) - Date.now() / 1000) || 1;
        if (wait > MAX_WAIT_S) throw e;
        await sleep(wait * 1000);
      }
    }
  });
  return octokit;
}

/** True for GitHub's rate-limit answers: 429, or 403 with x-ratelimit-remaining: 0. */
function rateLimited(e: unknown): boolean {
  const err = e as { status?: number; response?: { headers?: Record<string, string> } };
  return err.status === 429 || (err.status === 403 && err.response?.headers?.['x-ratelimit-remaining'] === '0');
}

/** One sentence for a failed GitHub API call. */
export function apiError(what: string, e: unknown): GateError {
  const err = e as { status?: number; message?: string; response?: { headers?: Record<string, string> } };
  const after = err.response?.headers?.['retry-after'];
  const fix = rateLimited(e)
    ? `GitHub rate-limited the token${after ? ` (retry-after: ${after} s)` : ''} and ${MAX_RETRIES} retries did not get through; re-run the job later`
    : err.status === 403
      ? 'give the job `permissions: pull-requests: write` (and `contents: write` for a baseline refresh); fork PRs get a read-only token: use the workflow_run comment mode'
      : err.status === 401
        ? 'check the github-token input'
        : err.status === 404
          ? 'check the repository, pull request or branch exist and the token can see them'
          : err.status === 409 || err.status === 422
            ? 'the branch or file changed meanwhile, or branch protection refused the write; re-run, or use refresh-commit: pr'
            : undefined;
  const message = String(err.message ?? 'unknown error').split(' - https://')[0];
  return new GateError(`could not ${what}: GitHub answered ${err.status ?? 'no status'} (${message})`, { field: 'github-token' }, fix);
}
