// Scenario files: YAML validated against schema/scenario.schema.json, every error reported with
// file, line and field. A file's `perf-test:` line is translated first, then `workload:` fields
// override it, so users can paste PerfTest commands from RabbitMQ's blog posts.
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';
import { LineCounter, parseDocument, isMap, isPair, isScalar, type Document } from 'yaml';
import type { ScenarioSpec, WorkloadParams } from '../schema/types';
import { GateError } from './errors';
import { applyPerfTestArgs, perfTestDefaults } from './perftest-args';
import { packagePath } from './paths';

interface RawScenario {
  id: string;
  description: string;
  origin: { source: string; command: string };
  'perf-test'?: string;
  workload?: Partial<WorkloadParams>;
  warmup?: number;
  duration?: number;
  gate?: string[];
  tolerances?: Record<string, number>;
}

const DEFAULT_GATE = ['published_rate', 'consumed_rate', 'latency_p99_ms'];

let validator: ReturnType<Ajv['compile']> | undefined;
function validate(data: unknown): ErrorObject[] {
  if (!validator) {
    const schema = JSON.parse(readFileSync(packagePath('schema/scenario.schema.json'), 'utf8'));
    validator = new Ajv({ allErrors: true, strict: false }).compile(schema);
  }
  return validator(data) ? [] : (validator.errors ?? []);
}

/** Parses YAML text into a document, turning syntax errors into located GateErrors. */
export function parseYaml(text: string, file: string): { doc: Document; lines: LineCounter; data: unknown } {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  if (doc.errors.length) {
    const e = doc.errors[0];
    const line = lines.linePos(e.pos[0]).line;
    throw new GateError(`malformed YAML: ${e.message.split('\n')[0]}`, { file, line }, 'fix the YAML syntax at that line');
  }
  return { doc, lines, data: doc.toJS() };
}

/** Line of the node at a JSON pointer (e.g. /workload/size), or of its parent when absent. */
export function lineOf(doc: Document, lines: LineCounter, pointer: string, key?: string): number {
  const path = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  for (let n = path.length; n >= 0; n--) {
    const node = doc.getIn(path.slice(0, n), true) as { range?: [number, number, number]; items?: unknown[] } | undefined;
    if (!node?.range) continue;
    if (n === path.length && key && isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && p.key.value === key);
      const range = pair && isPair(pair) && isScalar(pair.key) ? pair.key.range : undefined;
      if (range) return lines.linePos(range[0]).line;
    }
    return lines.linePos(node.range[0]).line;
  }
  return 1;
}

function schemaError(e: ErrorObject, file: string, doc: Document, lines: LineCounter): GateError {
  const extra = e.keyword === 'additionalProperties' ? String(e.params.additionalProperty) : undefined;
  const field = [e.instancePath.slice(1).replace(/\//g, '.'), extra].filter(Boolean).join('.') || '(top level)';
  const line = lineOf(doc, lines, e.instancePath, extra);
  const msg = extra ? `unknown field "${extra}"`
    : e.keyword === 'required' ? `missing required field "${e.params.missingProperty}"`
    : e.keyword === 'enum' ? `must be one of ${(e.params.allowedValues as unknown[]).join(', ')}`
    : e.message ?? 'is invalid';
  const fix = extra ? 'remove it or check its spelling against schema/scenario.schema.json' : 'see schema/scenario.schema.json';
  return new GateError(msg, { file, line, field }, fix);
}

export function loadScenarioFile(file: string): ScenarioSpec {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new GateError(`cannot read scenario file (${(e as NodeJS.ErrnoException).code})`, { file }, 'check the path');
  }
  return parseScenario(text, file);
}

export function parseScenario(text: string, file: string): ScenarioSpec {
  const { doc, lines, data } = parseYaml(text, file);
  if (!data || typeof data !== 'object' || Array.isArray(data)) {
    throw new GateError('a scenario file must be a YAML mapping', { file, line: 1 }, 'start from one of the files in scenarios/');
  }
  const errors = validate(data);
  if (errors.length) throw schemaError(errors[0], file, doc, lines);
  const raw = data as RawScenario;
  const fieldLines: Record<string, number> = {};
  for (const k of Object.keys(raw)) fieldLines[k] = lineOf(doc, lines, `/${k}`);

  const workload = perfTestDefaults(raw.id);
  let perfTestTime: number | undefined;
  if (raw['perf-test']) {
    perfTestTime = applyPerfTestArgs(workload, raw['perf-test'], { file, line: fieldLines['perf-test'], field: 'perf-test' }).time;
  }
  Object.assign(workload, raw.workload ?? {});
  if (raw.workload?.queueArgs) workload.queueArgs = { ...workload.queueArgs, ...raw.workload.queueArgs };
  const where = (field: string) => ({ file, line: lineOf(doc, lines, `/workload`, field), field: `workload.${field}` });
  if (workload.size < 12) throw new GateError(`size ${workload.size} is below 12 bytes`, where('size'), 'use at least 12 (sequence + timestamp)');
  if (workload.queuePattern && workload.queuePatternTo < workload.queuePatternFrom) {
    throw new GateError('queuePatternTo is below queuePatternFrom', where('queuePatternTo'));
  }
  return {
    id: raw.id,
    description: raw.description.trim(),
    origin: raw.origin,
    workload,
    warmupSeconds: raw.warmup ?? 2,
    durationSeconds: raw.duration ?? perfTestTime ?? 10,
    gate: raw.gate ?? DEFAULT_GATE,
    tolerances: raw.tolerances ?? {},
    file,
    lines: fieldLines,
  };
}
