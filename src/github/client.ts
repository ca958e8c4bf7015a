// The octokit client the action uses: the workflow token, GITHUB_API_URL, and a bounded retry
// on rate limits (429, or 403 with x-ratelimit-remaining: 0) honouring retry-after. API failures
// become one sentence that says what the token was missing.
import { getOctokit } from '@actions/github';
import { GateError } from '../config/errors';

const MAX_RETRIES = 3;
const MAX_WAIT_S = 60;

export function client(token: string, baseUrl?: string): ReturnType<typeof getOctokit> {
  const octokit = getOctokit(token, baseUrl ? { baseUrl } : {});
  octokit.hook.wrap('request', async (request, options) => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await request(options);
      } catch (e) {
        const err = e as { status?: number; response?: { headers?: Record<string, string> } };
        const h = err.response?.headers ?? {};
        const limited = err.status === 429 || (err.status === 403 && h['x-ratelimit-remaining'] === '0');
        if (!limited || attempt >= MAX_RETRIES) throw e;
        const wait = Number(h['retry-after']) || Math.max(1, Number(h['x-ratelimit-reset']) - Date.now() / 1000) || 1;
        if (wait > MAX_WAIT_S) throw e;
        await new Promise((r) => setTimeout(r, wait * 1000));
      }
    }
  });
  return octokit;
}

/** One sentence for a failed GitHub API call. */
export function apiError(what: string, e: unknown): GateError {
  const err = e as { status?: number; message?: string };
  const fix = err.status === 403 ? 'give the job `permissions: pull-requests: write` (fork PRs get a read-only token: use the workflow_run comment mode)'
    : err.status === 401 ? 'check the github-token input'
    : err.status === 404 ? 'check the repository and pull request exist and the token can see them'
    : err.status === 429 ? 'GitHub rate-limited the token; retry later'
    : undefined;
  return new GateError(`could not ${what}: GitHub answered ${err.status ?? 'no status'} (${err.message ?? 'unknown error'})`, { field: 'github-token' }, fix);
}
