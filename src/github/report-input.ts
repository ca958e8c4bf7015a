// Reading report.json files the action did not write itself in this job: the fork's report in
// mode: comment and the shards' reports in mode: merge. They are untrusted data: the size is
// bounded, the JSON is checked against the RunReport shape (every field the renderers and the
// comparisons use, with its type) and any problem is one clear GateError. Nothing is executed.
import { globSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { Ajv } from 'ajv';
import type { RunReport } from '../schema/types';
import { SCHEMA_VERSION, withScenarioKind } from '../schema/types';
import { GateError } from '../schema/errors';
import { TOOL } from '../metrics/fingerprint';

const MAX_BYTES = 256 * 1024 * 1024;

const str = { type: 'string', maxLength: 100_000 };
const num = { type: 'number' };
const numOrNull = { type: ['number', 'null'] };
const int = { type: 'integer', minimum: 0 };
const obj = (properties: Record<string, unknown>, optional: string[] = []) => ({
  type: 'object', properties, required: Object.keys(properties).filter((k) => !optional.includes(k)),
});
const list = (items: unknown) => ({ type: 'array', items });
const oneOf = (...values: string[]) => ({ enum: values });
const verdict = oneOf('pass', 'warn', 'fail', 'inconclusive');
const answer = oneOf('regression', 'no-regression', 'undecided');
const id = { type: 'string', minLength: 1, maxLength: 200 };

const SOURCE = oneOf('image', 'target', 'gate', 'scenario');
const DECLARED_PART = obj({ value: str, from: SOURCE, where: str }, ['where']);

const COMPARISON = obj({
  scenario: id, metric: id, unit: str, direction: oneOf('higher', 'lower'), against: id, baselineLabel: str, candidateLabel: str,
  nBaseline: int, nCandidate: int, baselineMedian: numOrNull, candidateMedian: numOrNull, ratio: numOrNull, ciLow: numOrNull,
  ciHigh: numOrNull, pValue: numOrNull, pAdjusted: numOrNull, tolerance: num, change: oneOf('better', 'worse', 'same', 'unknown'),
  verdict, reason: str, gating: { type: 'boolean' }, paired: { type: 'boolean' }, failsBeyond: numOrNull,
  equivalence: num, bound: numOrNull, answer,
}, ['paired', 'failsBeyond', 'equivalence', 'bound', 'answer']);

const REPORT_SCHEMA = obj({
  schemaVersion: { const: SCHEMA_VERSION },
  tool: obj({ name: { const: TOOL }, version: str }),
  createdAt: str,
  mode: oneOf('check', 'refresh', 'run'),
  fingerprint: obj({ tool: str, toolVersion: str, node: str, os: str, kernel: str, cpuModel: str, cores: int, memoryBytes: num }),
  preset: str,
  repetitions: { type: 'integer', minimum: 1 },
  seed: int,
  scenarios: list(obj({
    id, description: str, gate: list(str), tolerances: { type: 'object', additionalProperties: num },
    warmupSeconds: num, durationSeconds: num, file: str, lines: { type: 'object', additionalProperties: num },
    workload: { type: 'object' }, origin: { type: 'object' },
  }, ['description', 'workload', 'origin'])),
  targets: list(obj({
    id, label: str, kind: str, amqpUrl: str, managementUrl: str, rabbitmqVersion: str, erlangVersion: str, metadataStore: oneOf('mnesia', 'khepri'), image: str, nodes: list({ type: 'object' }),
    effective: obj({
      rabbitmqVersion: str, erlangVersion: str, metadataStore: str, featureFlags: list(str), plugins: list(str), vhost: list(str),
      node: { type: 'object', additionalProperties: str }, digest: str,
      vm: obj({ emulatorFlags: list(str), flags: { type: 'object', additionalProperties: str }, initArgs: list(str), info: { type: 'object', additionalProperties: str } }),
      activePlugins: list(str),
    }, ['metadataStore', 'featureFlags', 'plugins', 'node', 'vm', 'activePlugins']),
    evidence: obj({ sources: list(str), missing: list(obj({ source: str, why: str })) }),
    declared: obj({
      env: list(obj({ name: str, parts: list(DECLARED_PART), replaced: list(DECLARED_PART) }, ['replaced'])),
      plugins: list(obj({ name: str, from: SOURCE })),
      files: list(obj({ path: str, from: SOURCE, replaces: { type: 'boolean' } }, ['replaces'])),
    }),
  }, ['image', 'metadataStore', 'effective', 'evidence', 'declared'])),
  candidate: id,
  trials: list(obj({
    scenario: id, target: id, trial: int, order: int, startedAt: str, valid: { type: 'boolean' }, invalidReason: str,
    metrics: { type: 'object', additionalProperties: num }, series: { type: 'array' }, histograms: { type: 'object' }, error: str,
    queues: list(obj({ name: str, type: str, version: num, policy: str, operatorPolicy: str, definition: { type: 'object' }, arguments: { type: 'object' } },
      ['version', 'policy', 'operatorPolicy', 'definition'])),
    evidence: { type: 'object', additionalProperties: num },
    topQueues: list(obj({ name: str, memoryBytes: num, reductions: num, reductionsPerSecond: num, messages: num }, ['reductions', 'reductionsPerSecond', 'messages'])),
  }, ['invalidReason', 'error', 'queues', 'evidence', 'topQueues'])),
  comparisons: list(COMPARISON),
  evidence: list(COMPARISON),
  decidedBy: str,
  verdict,
  answer,
  regressions: int,
  improvements: int,
  errors: list(obj({ scope: str, message: str })),
  durationSeconds: num,
  effectNote: str,
  effectDiff: list(str),
  flames: list(obj({ scenario: id, against: id, candidateLabel: str, baselineLabel: str,
    candidate: { type: 'object', additionalProperties: num, maxProperties: 20_000 }, baseline: { type: 'object', additionalProperties: num, maxProperties: 20_000 } })),
  flameNote: str,
  sequential: obj({
    looks: { ...list({ type: 'integer', minimum: 1 }), minItems: 1 }, level: num, family: int, futility: num,
    stopped: { type: 'object', additionalProperties: int }, fixedPairs: int, savedSeconds: num,
    failedFast: obj({ scenario: id, pairs: int }),
  }, ['failedFast', 'futility']),
}, ['effectNote', 'effectDiff', 'sequential', 'evidence', 'flames', 'flameNote', 'answer']);

let validate: ReturnType<Ajv['compile']> | undefined;

function invalid(file: string, what: string): GateError {
  return new GateError(`${file} is not a valid rabbitmq-perf-gate report: ${what}`, { file, field: 'report' },
    'use the report.json the action wrote (same release of rabbitmq-perf-gate); a forged or damaged report is never posted');
}

/** Reads and checks one report.json; throws a GateError naming the first problem. */
export function readReportFile(file: string): RunReport {
  let text: string;
  try {
    if (statSync(file).size > MAX_BYTES) throw invalid(file, `larger than ${MAX_BYTES / 1024 / 1024} MiB`);
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if (e instanceof GateError) throw e;
    throw new GateError(`cannot read the report ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, { file, field: 'report' },
      'check the path: download the artifact first (actions/download-artifact) and point the input at its report.json');
  }
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON, checked field by field before use
  let data: any;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw invalid(file, `not valid JSON (${(e as Error).message})`);
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) throw invalid(file, 'not a JSON object');
  if (typeof data.schemaVersion === 'number' && data.schemaVersion > SCHEMA_VERSION) {
    throw invalid(file, `schema version ${data.schemaVersion} is newer than this release understands (${SCHEMA_VERSION}); use the same release for both steps`);
  }
  validate ??= new Ajv({ strict: false, allErrors: false }).compile(REPORT_SCHEMA);
  if (!validate(data)) {
    const e = validate.errors![0];
    const allowed = (e.params as { allowedValues?: unknown[]; allowedValue?: unknown }).allowedValues ?? (e.params as { allowedValue?: unknown }).allowedValue;
    throw invalid(file, `${e.instancePath || '(top level)'} ${e.message}${allowed !== undefined ? ` ${JSON.stringify(allowed)}` : ''}`);
  }
  // Older releases left `kind` out of messaging scenarios.
  data.scenarios = data.scenarios.map(withScenarioKind);
  return data as RunReport;
}

const GLOB = /[*?[\]{}]/;

function reportFilesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && d.name === 'report.json')
    .map((d) => join(d.parentPath, d.name));
}

/** Expands the `reports` input (lines or commas of folders, globs or files) into sorted report.json paths. */
export function findReports(spec: string, cwd: string): string[] {
  const found = new Set<string>();
  for (const item of spec.split(/[\n,]/).map((s) => s.trim()).filter(Boolean)) {
    const matches = GLOB.test(item) ? globSync(item, { cwd }).map((p) => resolve(cwd, p)) : [resolve(cwd, item)];
    for (const m of matches) {
      let isDir = false;
      try {
        isDir = statSync(m).isDirectory();
      } catch {
        if (!GLOB.test(item)) throw new GateError(`reports: "${item}" does not exist`, { field: 'reports' }, "download the shards' artifacts first (actions/download-artifact with a pattern) and point reports at that folder");
        continue;
      }
      for (const f of isDir ? reportFilesUnder(m) : [m]) found.add(f);
    }
  }
  const files = [...found].sort((a, b) => relative(cwd, a).localeCompare(relative(cwd, b)));
  if (!files.length) throw new GateError(`reports: no report.json found for "${spec.trim()}"`, { field: 'reports' }, "download the shards' artifacts first and point reports at their folder or a glob like shards/*/report.json");
  return files;
}
