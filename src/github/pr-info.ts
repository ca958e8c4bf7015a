// pr.json: the small file a pull-request run leaves next to report.json so that a separate,
// trusted `workflow_run` job (mode: comment) knows which PR, head commit and gate the report
// belongs to. Read back as untrusted input: every field is checked, nothing is executed.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../compare/stored';
import { GateError } from '../schema/errors';
import { TOOL } from '../metrics/fingerprint';
import type { RunContext } from './context';

export const PR_INFO_FILE = 'pr.json';
const PR_INFO_VERSION = 1;

export interface PrInfo {
  schemaVersion: number;
  tool: string;
  /** Pull request number in the base repository. */
  number: number;
  headSha: string;
  headRepo?: string;
  /** Gate name (input `name`): which sticky comment to update. */
  name: string;
}

export function prInfoFor(ctx: RunContext, name: string): PrInfo | undefined {
  if (!ctx.pullNumber || !ctx.headSha) return undefined;
  return { schemaVersion: PR_INFO_VERSION, tool: TOOL, number: ctx.pullNumber, headSha: ctx.headSha, headRepo: ctx.headRepo, name };
}

export function writePrInfo(dir: string, info: PrInfo): string {
  const file = join(dir, PR_INFO_FILE);
  writeFileAtomic(file, JSON.stringify(info, null, 1) + '\n');
  return file;
}

const bad = (file: string, what: string): GateError =>
  new GateError(
    `${PR_INFO_FILE} is not a valid rabbitmq-perf-gate PR file: ${what}`,
    { file, field: 'report' },
    'use the pr.json written by the pull_request run next to its report.json; a forged or damaged artifact is never posted',
  );

/** Reads and validates pr.json (untrusted: it comes from an artifact of a fork's run). */
export function readPrInfo(file: string): PrInfo {
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON, checked field by field before use
  let data: any;
  try {
    if (statSync(file).size > 64 * 1024) throw bad(file, 'larger than 64 KiB');
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    if (e instanceof GateError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw bad(file, code === 'ENOENT' ? 'missing (it must be next to report.json)' : `not JSON (${(e as Error).message})`);
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) throw bad(file, 'not a JSON object');
  if (data.tool !== TOOL) throw bad(file, `"tool" is not "${TOOL}"`);
  if (data.schemaVersion !== PR_INFO_VERSION) throw bad(file, `unsupported schemaVersion ${JSON.stringify(data.schemaVersion)} (expected ${PR_INFO_VERSION})`);
  if (!Number.isSafeInteger(data.number) || data.number < 1) throw bad(file, '"number" is not a pull request number');
  if (typeof data.headSha !== 'string' || !/^[0-9a-f]{40}$/.test(data.headSha)) throw bad(file, '"headSha" is not a 40-digit commit sha');
  if (data.headRepo !== undefined && (typeof data.headRepo !== 'string' || !/^[\w.-]+\/[\w.-]+$/.test(data.headRepo))) throw bad(file, '"headRepo" is not owner/name');
  if (typeof data.name !== 'string' || !data.name || data.name.length > 100 || /[\u0000-\u001f]/.test(data.name)) throw bad(file, '"name" is not a gate name');
  return { schemaVersion: data.schemaVersion, tool: data.tool, number: data.number, headSha: data.headSha, headRepo: data.headRepo, name: data.name };
}
