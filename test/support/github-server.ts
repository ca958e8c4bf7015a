// Owns: the local GitHub REST server tests run the real action against. It listens on 127.0.0.1,
// authenticates requests, injects faults, records every request, dispatches to the emulated
// operations (github-handlers.ts) and checks EVERY request and EVERY response it produces against
// GitHub's official OpenAPI description (github-spec.ts). Anything off-spec lands in `violations`.
//
//   const gh = await startGitHubServer({ token: 'ghs_x' });          // repo octo-org/octo-repo
//   gh.state.addPull(gh.repo, { head: 'feature', number: 7 });
//   const octokit = getOctokit('ghs_x', { baseUrl: gh.url });
//   ...
//   expect(gh.violations).toEqual([]);
//   await gh.close();
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpError, handlers, type HandlerResult, type TokenIdentity } from './github-handlers';
import { GitHubObjects } from './github-objects';
import { documentationUrl, loadSpec, matchRoute, validateRequest, validateResponse, type SpecOperation } from './github-spec';
import { GitHubState } from './github-state';

export { GitHubState } from './github-state';
export type { TokenIdentity } from './github-handlers';

export interface RecordedRequest {
  method: string;
  /** Percent-decoded path without the query string, e.g. `/repos/o/r/git/ref/heads/main`. */
  path: string;
  /** The path as sent (octokit encodes `/` inside a parameter as `%2F`). */
  rawPath: string;
  query: Record<string, string>;
  /** Parsed JSON body (or the raw text if it was not JSON; undefined when empty). */
  body: unknown;
  headers: Record<string, string>;
  /** The spec's operationId, when the path and method exist in GitHub's API. */
  operationId?: string;
  /** Status the server answered with. */
  status: number;
  /** True when the answer came from a `fail()` rule. */
  faulted: boolean;
}

export interface RequestMatcher {
  /** HTTP method (any when omitted). */
  method?: string;
  /** Tested against the request path (no query string), decoded and as sent; a string is compiled as a RegExp. */
  path?: RegExp | string;
}

export interface FaultRule extends RequestMatcher {
  status: number;
  /** How many matching requests fail (default 1; Infinity for all). */
  times?: number;
  headers?: Record<string, string>;
  /** JSON body; default is GitHub's error body for the status. */
  body?: unknown;
}

/** Test-only hook: rewrites a response body before it is validated, to prove the validator bites. */
export interface TamperRule extends RequestMatcher {
  times?: number;
  mutate(body: any, status: number): unknown;
}

export interface TokenOptions {
  login?: string;
  /** `installation` acts like an Actions GITHUB_TOKEN. Default: installation for `*[bot]` logins, else user. */
  kind?: 'user' | 'installation';
  readOnly?: boolean;
}

export interface GitHubServerOptions extends TokenOptions {
  /** Token the server accepts (`Authorization: token X` or `Bearer X`). Default `ghs_testtoken`. */
  token?: string;
  /** Repository created at start, "owner/name". Default `octo-org/octo-repo`. */
  repo?: string;
  defaultBranch?: string;
  /** Files on the default branch of that repository. */
  files?: Record<string, string>;
  /** Clock for timestamps (default: real time). */
  now?: () => Date;
}

export interface GitHubServer {
  /** Base URL for octokit's `baseUrl`, e.g. `http://127.0.0.1:40123` (no trailing slash). */
  url: string;
  token: string;
  /** Full name of the repository created at start. */
  repo: string;
  /** Login of the main token's owner. */
  login: string;
  state: GitHubState;
  requests: RecordedRequest[];
  /** Requests or responses that do not match GitHub's OpenAPI description. Tests should expect `[]`. */
  violations: string[];
  /** Legal but suspicious requests GitHub would silently mishandle (e.g. `head=` without `owner:`). */
  warnings: string[];
  fail(rule: FaultRule): void;
  tamper(rule: TamperRule): void;
  addToken(token: string, opts?: TokenOptions): TokenIdentity;
  /** Throws listing every violation, if any. */
  assertNoViolations(): void;
  close(): Promise<void>;
}

/** 403 primary rate limit, as GitHub sends it once `x-ratelimit-remaining` hits 0. */
export function rateLimitFault(opts: RequestMatcher & { times?: number; resetInSeconds?: number } = {}): FaultRule {
  const reset = Math.floor(Date.now() / 1000) + (opts.resetInSeconds ?? 1);
  return {
    method: opts.method,
    path: opts.path,
    times: opts.times,
    status: 403,
    headers: { 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': '0', 'x-ratelimit-used': '5000', 'x-ratelimit-reset': String(reset), 'x-ratelimit-resource': 'core' },
    body: { message: 'API rate limit exceeded for installation ID 1.', documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api', status: '403' },
  };
}

/** 429 secondary rate limit with `retry-after`. */
export function secondaryRateLimitFault(opts: RequestMatcher & { times?: number; retryAfter?: number } = {}): FaultRule {
  return {
    method: opts.method,
    path: opts.path,
    times: opts.times,
    status: 429,
    headers: { 'retry-after': String(opts.retryAfter ?? 1) },
    body: {
      message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
      documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits',
      status: '429',
    },
  };
}

const DEFAULT_MESSAGES: Record<number, string> = {
  401: 'Bad credentials',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  422: 'Validation Failed',
  429: 'Too Many Requests',
  500: 'Server Error',
  502: 'Server Error',
  503: 'Service Unavailable',
};
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function matches(rule: RequestMatcher, method: string, paths: string[]): boolean {
  if (rule.method && rule.method.toUpperCase() !== method) return false;
  if (rule.path === undefined) return true;
  const re = typeof rule.path === 'string' ? new RegExp(rule.path) : rule.path;
  return paths.some((p) => {
    re.lastIndex = 0;
    return re.test(p);
  });
}

function takeRule<T extends RequestMatcher & { times?: number }>(rules: { rule: T; left: number }[], method: string, paths: string[]): T | undefined {
  const hit = rules.find((r) => r.left > 0 && matches(r.rule, method, paths));
  if (!hit) return undefined;
  hit.left--;
  return hit.rule;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export async function startGitHubServer(opts: GitHubServerOptions = {}): Promise<GitHubServer> {
  loadSpec(); // parse the spec up front so the first request is not slow
  const token = opts.token ?? 'ghs_testtoken';
  const login = opts.login ?? 'github-actions[bot]';
  const repoName = opts.repo ?? 'octo-org/octo-repo';
  const state = new GitHubState(opts.now ?? (() => new Date()), login);
  const tokens = new Map<string, TokenIdentity>();
  const faults: { rule: FaultRule; left: number }[] = [];
  const tampers: { rule: TamperRule; left: number }[] = [];
  const requests: RecordedRequest[] = [];
  const violations: string[] = [];
  const warnings: string[] = [];
  let objects: GitHubObjects;
  let remaining = 5000;

  const addToken = (t: string, o: TokenOptions = {}): TokenIdentity => {
    const who = o.login ?? 'github-actions[bot]';
    const identity: TokenIdentity = { token: t, login: who, kind: o.kind ?? (who.endsWith('[bot]') ? 'installation' : 'user'), readOnly: o.readOnly ?? false };
    state.addUser(who);
    tokens.set(t, identity);
    return identity;
  };
  addToken(token, { login, kind: opts.kind, readOnly: opts.readOnly });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = (req.method ?? 'GET').toUpperCase();
    const url = new URL(req.url ?? '/', objects.base);
    const rawBody = await readBody(req);
    let parsedBody: unknown;
    try {
      parsedBody = rawBody === '' ? undefined : JSON.parse(rawBody);
    } catch {
      parsedBody = rawBody;
    }
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));
    let decoded = url.pathname;
    try {
      decoded = decodeURIComponent(url.pathname);
    } catch {
      // keep the raw path
    }
    const paths = [decoded, url.pathname];
    const record: RecordedRequest = { method, path: decoded, rawPath: url.pathname, query: Object.fromEntries(url.searchParams), body: parsedBody, headers, status: 0, faulted: false };
    requests.push(record);

    let operation: SpecOperation | undefined;
    const send = (result: HandlerResult, validate = true): void => {
      const status = result.status;
      let body = result.body;
      const tamper = validate && operation ? takeRule(tampers, method, paths) : undefined;
      if (tamper) body = tamper.mutate(structuredClone(body), status);
      let contentType = 'application/json; charset=utf-8';
      let payload: Buffer | undefined = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      if (result.raw) {
        contentType = result.raw.contentType;
        payload = result.raw.data;
      } else if (validate && operation) {
        const problems = validateResponse(operation, status, contentType, body);
        if (problems.length) {
          violations.push(...problems.map((p) => `response: ${p}`));
          send({ status: 500, body: { message: `test GitHub server produced an off-spec response: ${problems.join(' | ')}`, status: '500' } }, false);
          return;
        }
      }
      record.status = status;
      remaining = Math.max(0, remaining - 1);
      res.statusCode = status;
      res.setHeader('x-github-request-id', `TEST:${requests.length}`);
      res.setHeader('x-github-api-version-selected', '2022-11-28');
      res.setHeader('x-ratelimit-limit', '5000');
      res.setHeader('x-ratelimit-remaining', String(remaining));
      res.setHeader('x-ratelimit-used', String(5000 - remaining));
      res.setHeader('x-ratelimit-reset', String(Math.floor(Date.now() / 1000) + 3600));
      res.setHeader('x-ratelimit-resource', 'core');
      for (const [k, v] of Object.entries(result.headers ?? {})) res.setHeader(k, v);
      if (payload === undefined || status === 204 || status === 304) return void res.end();
      res.setHeader('content-type', contentType);
      res.end(payload);
    };
    const error = (status: number, message: string, extra: Record<string, unknown> = {}, headers?: Record<string, string>): void =>
      send({ status, headers, body: { message, ...extra, documentation_url: documentationUrl(operation), status: String(status) } });

    const match = matchRoute(method, url.pathname);
    if (match.kind !== 'ok') {
      violations.push(
        match.kind === 'no-path' ? `request: ${method} ${url.pathname} is not a path in GitHub's REST API` : `request: ${method} is not a method of ${match.template} in GitHub's REST API`,
      );
      return error(404, 'Not Found');
    }
    operation = match.operation;
    record.operationId = operation.operationId;
    // Validate first so an off-spec request is recorded even when auth or a fault decides the answer.
    const checked = validateRequest(operation, match.rawParams, url.searchParams, rawBody, req.headers['content-type']);
    if ('problem' in checked) violations.push(`request: ${checked.problem.violation}`);

    const auth = /^(?:token|bearer)\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    if (!auth) return error(401, 'Requires authentication');
    const identity = tokens.get(auth[1]);
    if (!identity) return error(401, 'Bad credentials');

    const fault = takeRule(faults, method, paths);
    if (fault) {
      record.faulted = true;
      const body = fault.body ?? { message: DEFAULT_MESSAGES[fault.status] ?? `HTTP ${fault.status}`, documentation_url: documentationUrl(operation), status: String(fault.status) };
      return send({ status: fault.status, headers: fault.headers, body }, false);
    }
    if ('problem' in checked) return error(checked.problem.status, checked.problem.message);
    if (identity.readOnly && WRITE_METHODS.has(method)) return error(403, 'Resource not accessible by integration');

    const handler = handlers[operation.operationId];
    if (!handler) {
      violations.push(`request: ${method} ${operation.template} (${operation.operationId}) exists on GitHub but this test server does not emulate it`);
      return error(404, 'Not Found');
    }
    try {
      const result = handler({
        state,
        objects,
        params: checked.params,
        query: checked.query,
        body: checked.body,
        identity,
        user: state.user(identity.login),
        url,
        accept: req.headers.accept ?? '',
        warn: (m) => warnings.push(m),
      });
      send(result);
    } catch (err) {
      if (err instanceof HttpError) return error(err.status, err.message, err.extra);
      violations.push(`server: ${method} ${url.pathname} crashed: ${(err as Error).stack ?? err}`);
      send({ status: 500, body: { message: `test GitHub server crashed: ${(err as Error).message}` } }, false);
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      violations.push(`server: ${(err as Error).stack ?? err}`);
      if (!res.headersSent) res.statusCode = 500;
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  objects = new GitHubObjects(url);
  state.addRepo(repoName, { defaultBranch: opts.defaultBranch, files: opts.files });

  return {
    url,
    token,
    repo: repoName,
    login,
    state,
    requests,
    violations,
    warnings,
    fail: (rule) => void faults.push({ rule, left: rule.times ?? 1 }),
    tamper: (rule) => void tampers.push({ rule, left: rule.times ?? 1 }),
    addToken,
    assertNoViolations: () => {
      if (violations.length) throw new Error(`GitHub API spec violations:\n- ${violations.join('\n- ')}`);
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
