// Target files (.github/rabbitmq-perf/target.yml): a broker described as data — image, cluster
// size, config files, env, limits, setup commands — validated against schema/target.schema.json.
// Loading one from any FileSource gives a DockerTargetSpec (config files materialised on disk when
// they come from a commit), a digest over the description and every referenced file, and a
// canonical text of both for showing the difference between two targets.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import type { DockerTargetSpec } from '../schema/types';
import { GateError } from '../schema/errors';
import type { FileSource } from './file-source';
import { packagePath } from './paths';
import { lineOf, parseYaml } from './scenario-file';

export const DEFAULT_TARGET_FILE = '.github/rabbitmq-perf/target.yml';

interface RawTarget {
  label?: string;
  image: string;
  nodes?: number;
  config?: string[];
  env?: Record<string, string>;
  resources?: { cpus?: number; cpuset?: string; memory?: string };
  setup?: string[];
  network?: 'host' | 'bridge';
  evidence?: boolean;
}

export interface LoadedTarget {
  spec: DockerTargetSpec;
  /** sha256 over the canonical description and every referenced file's content. */
  digest: string;
  /** Canonical text of the description and its text files, for a diff between targets. */
  text: string;
  source: string;
}

let check: ReturnType<Ajv['compile']> | undefined;
function validate(data: unknown): ErrorObject[] {
  check ??= new Ajv({ allErrors: true, strict: false }).compile(JSON.parse(readFileSync(packagePath('schema/target.schema.json'), 'utf8')));
  return check(data) ? [] : (check.errors ?? []);
}

function isText(b: Buffer): boolean {
  return !b.subarray(0, 8000).includes(0);
}

export async function loadTarget(source: FileSource, path: string, id: string): Promise<LoadedTarget> {
  const where = `${path} (${source.name})`;
  const bytes = await source.read(path);
  if (!bytes) throw new GateError(`target file not found in ${source.name}`, { file: path }, `create ${path} (see docs/targets.md) or set the target-file input`);
  const { doc, lines, data } = parseYaml(bytes.toString('utf8'), where);
  const errors = validate(data);
  if (errors.length) {
    const e = errors[0];
    const extra = e.keyword === 'additionalProperties' ? String(e.params.additionalProperty) : undefined;
    const field = [e.instancePath.slice(1).replace(/\//g, '.'), extra].filter(Boolean).join('.') || '(top level)';
    throw new GateError(extra ? `unknown field "${extra}"` : (e.message ?? 'is invalid'), { file: where, line: lineOf(doc, lines, e.instancePath, extra), field }, 'see schema/target.schema.json');
  }
  const raw = data as RawTarget;
  const files: Array<{ path: string; content: Buffer }> = [];
  for (const [i, p] of (raw.config ?? []).entries()) {
    const content = await source.read(p);
    if (!content) {
      throw new GateError(
        `config file "${p}" referenced by the target does not exist in ${source.name}`,
        { file: where, line: lineOf(doc, lines, `/config/${i}`), field: `config[${i}]` },
        'add the file or remove it from config:',
      );
    }
    files.push({ path: p, content });
  }
  const canonical = JSON.stringify({ ...raw, label: undefined }, Object.keys(raw).sort());
  const hash = createHash('sha256').update(canonical);
  for (const f of files) hash.update('\0').update(f.path).update('\0').update(f.content);
  const text = [
    `# ${path}`,
    bytes.toString('utf8').trimEnd(),
    ...files.map((f) => `# ${f.path}\n${isText(f.content) ? f.content.toString('utf8').trimEnd() : `(binary, sha256 ${createHash('sha256').update(f.content).digest('hex')})`}`),
  ].join('\n');
  return {
    spec: {
      id,
      label: raw.label ?? raw.image.split('/').pop()!,
      kind: 'docker',
      image: raw.image,
      configFiles: source.name === 'working tree' ? (raw.config ?? []) : materialise(files),
      nodes: raw.nodes ?? 1,
      env: raw.env ?? {},
      cpus: raw.resources?.cpus,
      ...(raw.resources?.cpuset ? { cpuset: raw.resources.cpuset } : {}),
      memory: raw.resources?.memory,
      setup: raw.setup ?? [],
      network: raw.network ?? 'host',
      ...(raw.evidence === false ? { evidence: false } : {}),
    },
    digest: `sha256:${hash.digest('hex')}`,
    text,
    source: source.name,
  };
}

/** Writes files read from a commit to a temp folder (basenames kept: the provider lays them out by name). */
export function materialise(files: Array<{ path: string; content: Buffer }>): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'perf-gate-target-'));
  return files.map((f, i) => {
    const sub = join(dir, String(i));
    mkdirSync(sub);
    const out = join(sub, basename(f.path));
    writeFileSync(out, f.content);
    return out;
  });
}
