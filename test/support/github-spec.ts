// Owns: GitHub's official OpenAPI description (the dereferenced api.github.com document shipped by
// @octokit/openapi) for the test GitHub server. Loads it once per process, maps request paths to
// operations, and validates requests and responses against it with ajv. OpenAPI 3.0 dialect
// (`nullable`, `example`, `discriminator`, ...) is translated to plain JSON Schema (`oneOf` is read as
// `anyOf`, see toJsonSchema), and each schema is
// compiled lazily, the first time an operation/status is used, then cached.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv, type ValidateFunction, type ErrorObject } from 'ajv';

type Json = Record<string, any>;

export interface SpecOperation {
  operationId: string;
  method: string;
  /** Path template as written in the spec, e.g. `/repos/{owner}/{repo}/pulls`. */
  template: string;
  op: Json;
  parameters: Json[];
}

export type RouteMatch = { kind: 'ok'; operation: SpecOperation; rawParams: Record<string, string> } | { kind: 'no-path' } | { kind: 'no-method'; template: string };

export interface RequestProblem {
  status: 400 | 404 | 422;
  /** Message sent to the client (GitHub style). */
  message: string;
  /** Why the request does not match the spec (goes into `violations`). */
  violation: string;
}

interface Route {
  template: string;
  regex: RegExp;
  names: string[];
  literals: number;
  item: Json;
}

const _METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
/** Path params GitHub lets span several segments when they end the path (`contents/a/b.json`, `git/ref/heads/x`). */
const GREEDY_TAIL = new Set(['path', 'ref']);

let loaded: { paths: Json; routes: Route[] } | undefined;

/** The spec, parsed once per process (≈70 MB of JSON; later calls are free). */
export function loadSpec(): { paths: Json; routes: Route[] } {
  if (loaded) return loaded;
  const require = createRequire(import.meta.url);
  const file = require.resolve('@octokit/openapi/generated/api.github.com.deref.json');
  const doc = JSON.parse(readFileSync(file, 'utf8')) as Json;
  const routes: Route[] = [];
  for (const [template, item] of Object.entries<Json>(doc.paths)) {
    const segments = template.split('/').slice(1);
    const names: string[] = [];
    let literals = 0;
    const parts = segments.map((segment, i) => {
      const param = /^\{([^}]+)\}$/.exec(segment);
      if (!param) {
        literals++;
        return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      }
      names.push(param[1]);
      return i === segments.length - 1 && GREEDY_TAIL.has(param[1]) ? '(.+)' : '([^/]+)';
    });
    routes.push({ template, regex: new RegExp(`^/${parts.join('/')}$`), names, literals, item });
  }
  // Most specific first: more literal segments win (`/repos/{o}/{r}/pulls` over `/repos/{o}/{r}/{x}`).
  routes.sort((a, b) => b.literals - a.literals || a.names.length - b.names.length);
  loaded = { paths: doc.paths, routes };
  return loaded;
}

export function matchRoute(method: string, rawPath: string): RouteMatch {
  const { routes } = loadSpec();
  const m = method.toLowerCase();
  let pathOnly: string | undefined;
  for (const route of routes) {
    const found = route.regex.exec(rawPath);
    if (!found) continue;
    const op = route.item[m];
    if (!op) {
      pathOnly ??= route.template;
      continue;
    }
    const rawParams: Record<string, string> = {};
    route.names.forEach((name, i) => {
      rawParams[name] = found[i + 1];
    });
    const byKey = new Map<string, Json>();
    for (const p of [...(route.item.parameters ?? []), ...(op.parameters ?? [])]) byKey.set(`${p.in}:${p.name}`, p);
    const operation: SpecOperation = { operationId: op.operationId, method: m, template: route.template, op, parameters: [...byKey.values()] };
    return { kind: 'ok', operation, rawParams };
  }
  return pathOnly ? { kind: 'no-method', template: pathOnly } : { kind: 'no-path' };
}

// ---------------------------------------------------------------------------------------------
// OpenAPI 3.0 schema -> JSON Schema

const DROP = new Set(['example', 'examples', 'description', 'title', 'discriminator', 'xml', 'externalDocs', 'deprecated', 'readOnly', 'writeOnly', 'nullable']);
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'definitions']);
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf']);
const SCHEMA_ONE = new Set(['items', 'not', 'additionalProperties']);

export function toJsonSchema(schema: unknown): unknown {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const src = schema as Json;
  const out: Json = {};
  for (const [key, value] of Object.entries(src)) {
    if (DROP.has(key) || key.startsWith('x-')) continue;
    if (SCHEMA_MAPS.has(key)) out[key] = Object.fromEntries(Object.entries<unknown>(value).map(([k, v]) => [k, toJsonSchema(v)]));
    // GitHub's `oneOf`s are often not exclusive (e.g. a plain error body matches both branches of the
    // 409 answer of repos/create-or-update-file-contents), so "exactly one" would reject real answers.
    else if (key === 'oneOf') out.anyOf = (value as unknown[]).map(toJsonSchema);
    else if (SCHEMA_LISTS.has(key)) out[key] = (value as unknown[]).map(toJsonSchema);
    else if (SCHEMA_ONE.has(key)) out[key] = toJsonSchema(value);
    else out[key] = value;
  }
  if (src.nullable !== true) return out;
  if (typeof out.type === 'string') {
    out.type = [out.type, 'null'];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    return out;
  }
  return { anyOf: [{ type: 'null' }, out] };
}

// ---------------------------------------------------------------------------------------------
// ajv

const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
let ajvInstance: Ajv | undefined;
function ajv(): Ajv {
  if (ajvInstance) return ajvInstance;
  const a = new Ajv({ strict: false, allErrors: true, logger: false, unicodeRegExp: false });
  a.addFormat('date-time', DATE_TIME);
  a.addFormat('date', /^\d{4}-\d{2}-\d{2}$/);
  a.addFormat('email', /^[^\s@]+@[^\s@]+$/);
  a.addFormat('uri', (s: string) => /^[a-z][a-z0-9+.-]*:/i.test(s) && URL.canParse(s));
  for (const f of ['uri-template', 'int64', 'int32', 'double', 'timestamp', 'repo.nwo', 'binary']) a.addFormat(f, true);
  ajvInstance = a;
  return a;
}

const compiled = new Map<string, ValidateFunction | Error>();
function validator(key: string, schema: () => unknown): ValidateFunction {
  let v = compiled.get(key);
  if (!v) {
    try {
      v = ajv().compile(toJsonSchema(schema()) as Json);
    } catch (err) {
      v = err instanceof Error ? err : new Error(String(err));
    }
    compiled.set(key, v);
  }
  if (v instanceof Error) throw new Error(`cannot compile schema ${key}: ${v.message}`);
  return v;
}

export function describeErrors(errors: ErrorObject[] | null | undefined, root = ''): string {
  return (errors ?? [])
    .slice(0, 8)
    .map((e) => {
      const extra = e.keyword === 'additionalProperties' ? ` (${(e.params as Json).additionalProperty})` : e.keyword === 'enum' ? ` (${JSON.stringify((e.params as Json).allowedValues)})` : '';
      return `${root}${e.instancePath || ''} ${e.message}${extra}`.trim();
    })
    .join('; ');
}

// ---------------------------------------------------------------------------------------------
// requests

function coerce(raw: string, schema: Json | undefined): unknown {
  const type = Array.isArray(schema?.type) ? schema.type[0] : schema?.type;
  if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(raw)) return Number(raw);
  if (type === 'boolean' && (raw === 'true' || raw === 'false')) return raw === 'true';
  return raw;
}

export interface ParsedRequest {
  params: Record<string, any>;
  query: Record<string, any>;
}

/**
 * Checks path params, query params and the JSON body against the operation. Returns the decoded,
 * type-coerced params/query, or the problem (status/message for the client, text for `violations`).
 */
export function validateRequest(
  operation: SpecOperation,
  rawParams: Record<string, string>,
  search: URLSearchParams,
  rawBody: string,
  contentType: string | undefined,
): (ParsedRequest & { body: unknown }) | { problem: RequestProblem } {
  const where = `${operation.method.toUpperCase()} ${operation.template} (${operation.operationId})`;
  const invalid = (detail: string): { problem: RequestProblem } => ({
    problem: { status: 422, message: `Invalid request.\n\n${detail}`, violation: `${where}: ${detail}` },
  });
  const params: Record<string, any> = {};
  const query: Record<string, any> = {};
  for (const p of operation.parameters.filter((x) => x.in === 'path')) {
    let raw: string;
    try {
      raw = decodeURIComponent(rawParams[p.name] ?? '');
    } catch {
      raw = rawParams[p.name] ?? '';
    }
    const value = coerce(raw, p.schema);
    const v = validator(`${operation.operationId} path ${p.name}`, () => p.schema ?? {});
    if (!v(value)) {
      // GitHub answers 404 for e.g. `/issues/abc/comments`.
      return { problem: { status: 404, message: 'Not Found', violation: `${where}: path parameter ${p.name}=${JSON.stringify(raw)} ${describeErrors(v.errors)}` } };
    }
    params[p.name] = value;
  }
  const queryParams = new Map(operation.parameters.filter((x) => x.in === 'query').map((p) => [p.name, p]));
  for (const name of new Set(search.keys())) {
    const p = queryParams.get(name);
    if (!p) {
      return { problem: { status: 400, message: `Unknown query parameter: ${name}`, violation: `${where}: query parameter "${name}" is not defined for this operation` } };
    }
    const all = search.getAll(name);
    const value = p.schema?.type === 'array' ? all : coerce(all[all.length - 1], p.schema);
    const v = validator(`${operation.operationId} query ${name}`, () => p.schema ?? {});
    if (!v(value)) return invalid(`For '${name}', ${JSON.stringify(value)} ${describeErrors(v.errors)}`);
    query[name] = value;
  }
  for (const p of queryParams.values()) {
    if (p.required && !search.has(p.name)) return invalid(`"${p.name}" wasn't supplied.`);
  }

  const requestBody = operation.op.requestBody as Json | undefined;
  const hasBody = rawBody.trim() !== '';
  if (!requestBody) {
    if (hasBody) return { problem: { status: 400, message: 'This endpoint takes no request body', violation: `${where}: sent a body to an operation that takes none` } };
    return { params, query, body: undefined };
  }
  if (!hasBody) {
    if (requestBody.required) return invalid('Request body is required.');
    return { params, query, body: undefined };
  }
  if (contentType && !/json/i.test(contentType)) {
    return { problem: { status: 400, message: 'Problems parsing JSON', violation: `${where}: content-type ${contentType} is not JSON` } };
  }
  let body: unknown;
  try {
    body = JSON.parse(rawBody);
  } catch {
    return { problem: { status: 400, message: 'Problems parsing JSON', violation: `${where}: request body is not valid JSON` } };
  }
  const schema = requestBody.content?.['application/json']?.schema;
  if (schema) {
    const v = validator(`${operation.operationId} request`, () => {
      // GitHub silently ignores unknown fields; we reject them, since they are always a client bug.
      if (schema.type === 'object' && schema.properties && schema.additionalProperties === undefined) return { ...schema, additionalProperties: false };
      return schema;
    });
    if (!v(body)) {
      const missing = v.errors?.find((e) => e.keyword === 'required' && e.instancePath === '');
      if (missing) return invalid(`"${(missing.params as Json).missingProperty}" wasn't supplied.`);
      return invalid(describeErrors(v.errors, 'body'));
    }
  }
  return { params, query, body };
}

// ---------------------------------------------------------------------------------------------
// responses

/** The shape GitHub uses for every error body, applied to statuses an operation does not document (401, 429, ...). */
const BASIC_ERROR = {
  type: 'object',
  required: ['message'],
  properties: { message: { type: 'string' }, documentation_url: { type: 'string' }, status: { type: 'string' }, url: { type: 'string' }, errors: { type: 'array' } },
};

/** Returns the reasons `body` is not what the spec says `operation` answers with `status` (empty = fine). */
export function validateResponse(operation: SpecOperation, status: number, contentType: string, body: unknown): string[] {
  const where = `${operation.method.toUpperCase()} ${operation.template} (${operation.operationId}) -> ${status}`;
  const responses = operation.op.responses as Json;
  const documented = responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
  const empty = body === undefined || body === '';
  if (!documented) {
    if (status < 400) return [`${where}: status ${status} is not documented for this operation`];
    if (!/json/.test(contentType)) return [`${where}: error body must be JSON, got ${contentType}`];
    const v = validator('basic-error', () => BASIC_ERROR);
    return v(body) ? [] : [`${where}: ${describeErrors(v.errors, 'body')}`];
  }
  const content = documented.content as Json | undefined;
  if (!content) return empty ? [] : [`${where}: the spec documents no body for this status`];
  if (!/json/.test(contentType)) {
    const mediaType = contentType.split(';')[0].trim();
    return content[mediaType] ? [] : [`${where}: content-type ${contentType} is not documented`];
  }
  const schema = content['application/json']?.schema;
  if (!schema) return [`${where}: no application/json schema documented`];
  let v: ValidateFunction;
  try {
    v = validator(`${operation.operationId} response ${status}`, () => schema);
  } catch (err) {
    return [`${where}: ${(err as Error).message}`];
  }
  return v(body) ? [] : [`${where}: ${describeErrors(v.errors, 'body')}`];
}

export function documentationUrl(operation: SpecOperation | undefined): string {
  return operation?.op.externalDocs?.url ?? 'https://docs.github.com/rest';
}
