// Stored results: the report.json a run writes and the baseline.json a refresh writes, read back by
// later steps, later jobs, forks (untrusted) and the CLI. The one owner of their reading — size
// bound, JSON, schema version (older ones migrated, newer ones refused), validation against
// schema/report.schema.json and schema/baseline.schema.json — and of their atomic writing (temp
// file + fsync + rename in the same folder: a crash mid-write leaves the old file intact). The CLI
// and the action read through here, so the same bad file gives the same error wherever it is read.
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { packagePath } from '../config/paths';
import { GateError, type Where } from '../schema/errors';
import type { Baseline, RunReport } from '../schema/types';
import { SCHEMA_VERSION, withScenarioKind } from '../schema/types';

export type StoredKind = 'report' | 'baseline';
export type Stored = { kind: 'report'; report: RunReport; baseline?: undefined } | { kind: 'baseline'; baseline: Baseline; report?: undefined };
export type BaselineRead = { status: 'ok'; baseline: Baseline; migratedFrom?: number } | { status: 'missing' } | { status: 'unusable'; error: GateError };

/** Larger files are refused unread (a report holds every trial's series: tens of MiB at most). */
const MAX_BYTES = 256 * 1024 * 1024;

/** Upgrades from older schema versions, one step each: MIGRATIONS[kind][v] turns v into v + 1. */
const MIGRATIONS: Record<StoredKind, Record<number, (d: Record<string, unknown>) => Record<string, unknown>>> = { report: {}, baseline: {} };

/** How each kind is named in its errors, and how to fix them. */
const KIND: Record<StoredKind, { noun: string; field: string; fix: { read: string; bad: string; json: string; newer: string } }> = {
  report: {
    noun: 'the report file',
    field: 'report',
    fix: {
      read: 'check the path (in a workflow, download the artifact first and point the input at its report.json)',
      bad: 'use the report.json a run of this release of rabbitmq-perf-gate wrote; a forged or damaged report is never used',
      json: 'use the report.json a run of this release of rabbitmq-perf-gate wrote; a forged or damaged report is never used',
      newer: 'use the same release of rabbitmq-perf-gate for both steps',
    },
  },
  baseline: {
    noun: 'the baseline file',
    field: 'baseline-file',
    fix: {
      read: 'check its permissions',
      bad: 'regenerate it with mode: refresh (CLI: rabbitmq-perf-gate refresh)',
      json: 'restore it from git history or regenerate it with mode: refresh',
      newer: 'upgrade the action to the release that wrote it, or regenerate the baseline with mode: refresh',
    },
  },
};

const validators = new Map<StoredKind, ValidateFunction>();

function validator(kind: StoredKind): ValidateFunction {
  let v = validators.get(kind);
  if (!v) {
    v = new Ajv({ strict: false, allErrors: false }).compile(JSON.parse(readFileSync(packagePath(`schema/${kind}.schema.json`), 'utf8')));
    validators.set(kind, v);
  }
  return v;
}

/** A file's text, or undefined when it does not exist and `missingOk`. */
function readText(file: string, noun: string, where: Where, fix: string, missingOk = false): string | undefined {
  try {
    if (statSync(file).size > MAX_BYTES) throw new GateError(`${noun} is larger than ${MAX_BYTES / 1024 / 1024} MiB`, where, fix);
    return readFileSync(file, 'utf8');
  } catch (e) {
    if (e instanceof GateError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    if (missingOk && code === 'ENOENT') return undefined;
    throw new GateError(`cannot read ${noun} (${code ?? (e as Error).message})`, where, fix);
  }
}

/** The parsed JSON object of a file's text; `noun` names it in the error. */
function parseObject(text: string, noun: string, where: Where, fix: string): Record<string, unknown> {
  if (!text.trim()) throw new GateError(`${noun} is empty`, where, fix);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    const m = /position (\d+)/.exec((e as Error).message);
    throw new GateError(`${noun} is not valid JSON (${(e as Error).message})`, { ...where, line: m ? text.slice(0, Number(m[1])).split('\n').length : undefined }, fix);
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) throw new GateError(`${noun} is not a JSON object`, where, fix);
  return data as Record<string, unknown>;
}

/** Migrates and validates parsed data of a known kind; returns it typed, and the version it had. */
function checked(kind: StoredKind, data: Record<string, unknown>, where: Where): { data: Record<string, unknown>; from: number } {
  const { noun, fix } = KIND[kind];
  if (typeof data.schemaVersion !== 'number') throw new GateError(`${noun} has no schemaVersion`, where, fix.bad);
  let version = data.schemaVersion;
  if (version > SCHEMA_VERSION) {
    throw new GateError(`${noun} has schema version ${version}, newer than this version of rabbitmq-perf-gate understands (${SCHEMA_VERSION})`, where, fix.newer);
  }
  const from = version;
  while (version < SCHEMA_VERSION) {
    const step = MIGRATIONS[kind][version];
    if (!step) throw new GateError(`${noun} has schema version ${version}, which can no longer be migrated`, where, fix.bad);
    data = step(data);
    version = data.schemaVersion as number;
  }
  const validate = validator(kind);
  if (!validate(data)) {
    const e = validate.errors![0];
    const p = e.params as { allowedValues?: unknown[]; allowedValue?: unknown };
    const allowed = p.allowedValues ?? p.allowedValue;
    throw new GateError(`${noun} is malformed: ${e.instancePath || '(top level)'} ${e.message}${allowed !== undefined ? ` ${JSON.stringify(allowed)}` : ''}`, where, fix.bad);
  }
  // Older releases left `kind` out of messaging scenarios (same schema version: a repair, not a step).
  if (kind === 'report') data.scenarios = (data.scenarios as RunReport['scenarios']).map(withScenarioKind);
  return { data, from };
}

/** Reads and checks one report.json; throws one GateError naming the first problem. `field`: the
 *  input or option that named the file. */
export function readReport(file: string, field = KIND.report.field): RunReport {
  const { noun, fix } = KIND.report;
  const where = { file, field };
  const text = readText(file, noun, where, fix.read)!;
  return checked('report', parseObject(text, noun, where, fix.json), where).data as unknown as RunReport;
}

/** Reads a stored baseline: missing (no file: nothing to compare with yet), ok (migrated if it was
 *  older), or unusable with one error to show; never throws. */
export function readBaseline(file: string): BaselineRead {
  const { noun, fix, field } = KIND.baseline;
  try {
    const text = readText(file, noun, { file, field }, fix.read, true);
    return text === undefined ? { status: 'missing' } : parseBaseline(text, file);
  } catch (e) {
    if (e instanceof GateError) return { status: 'unusable', error: e };
    throw e;
  }
}

/** Checks (and migrates) a baseline file's text; `file` names it in errors. */
export function parseBaseline(text: string, file: string): BaselineRead {
  const { noun, fix, field } = KIND.baseline;
  const where = { file, field };
  try {
    const { data, from } = checked('baseline', parseObject(text, noun, where, fix.json), where);
    return { status: 'ok', baseline: data as unknown as Baseline, migratedFrom: from < SCHEMA_VERSION ? from : undefined };
  } catch (e) {
    if (e instanceof GateError) return { status: 'unusable', error: e };
    throw e;
  }
}

/** A report.json or a baseline.json, told apart by shape (a report lists its trials, a baseline
 *  keys its scenarios by id), then read as that kind. */
export function readStored(file: string): Stored {
  const where = { file };
  const fix = 'pass the report.json of a run or a stored baseline.json';
  const data = parseObject(readText(file, 'the file', where, 'check the path')!, 'the file', where, fix);
  if (Array.isArray(data.trials)) return { kind: 'report', report: checked('report', data, { file, field: KIND.report.field }).data as unknown as RunReport };
  if (data.scenarios && typeof data.scenarios === 'object' && !Array.isArray(data.scenarios)) {
    return { kind: 'baseline', baseline: checked('baseline', data, { file, field: KIND.baseline.field }).data as unknown as Baseline };
  }
  throw new GateError('the file is neither a report.json (trials, scenarios, comparisons) nor a baseline.json (scenarios by id, fingerprint)', where, fix);
}

/** Writes `content` to `file` atomically: readers see the old file or the new one, never half. */
export function writeFileAtomic(file: string, content: string): void {
  mkdirSync(dirname(file), { recursive: true });
  // Unique per writer, even for two processes with the same pid (containers) in the same millisecond.
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.${Date.now()}.${randomBytes(6).toString('hex')}.tmp`);
  let fd: number | undefined;
  try {
    fd = openSync(tmp, 'w');
    writeSync(fd, content);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, file);
  } catch (e) {
    if (fd !== undefined) closeSync(fd);
    rmSync(tmp, { force: true });
    throw new GateError(`cannot write ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); the previous file is untouched`, { file }, 'check free disk space and permissions');
  }
}

/** Writes a report.json, as readReport and readStored read it back. */
export function writeReport(file: string, r: RunReport): void {
  writeFileAtomic(file, JSON.stringify(r, null, 1) + '\n');
}

export function writeBaseline(file: string, b: Baseline): void {
  writeFileAtomic(file, JSON.stringify(b, null, 1) + '\n');
}
