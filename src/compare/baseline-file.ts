// The stored baseline file's lifecycle: read (missing, corrupt, older or newer schema all give a
// clear message, never a crash), build from a run, and write atomically (temp file + fsync +
// rename in the same folder, so a crash mid-write leaves the old file intact), keeping a bounded
// history of past refreshes for trends.
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Baseline, BaselineHistoryEntry, Fingerprint, RunReport, ScenarioSpec, TargetInfo } from '../schema/types';
import { fingerprintMismatch } from '../metrics/fingerprint';
import { SCHEMA_VERSION } from '../schema/types';
import { GateError } from '../schema/errors';
import { median } from './stats';

/** Refreshes remembered for trend charts; older ones are dropped. */
export const HISTORY_LIMIT = 30;

export type BaselineRead =
  | { status: 'ok'; baseline: Baseline; migratedFrom?: number }
  | { status: 'missing' }
  | { status: 'unusable'; error: GateError };

/** Upgrades from older schema versions, one step each: MIGRATIONS[v] turns v into v + 1. */
const MIGRATIONS: Record<number, (b: Record<string, unknown>) => Record<string, unknown>> = {};

export function readBaseline(file: string): BaselineRead {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { status: 'missing' };
    return unusable(file, `cannot read the baseline file (${(e as NodeJS.ErrnoException).code})`, 'check its permissions');
  }
  return parseBaseline(text, file);
}

/** Checks (and migrates) a baseline file's text; `file` names it in errors. */
export function parseBaseline(text: string, file: string): BaselineRead {
  if (!text.trim()) return unusable(file, 'the baseline file is empty', 'delete it and run the gate with mode: refresh');
  let data: Record<string, unknown>;
  try {
    data = JSON.parse(text);
  } catch (e) {
    const line = lineOfJsonError(text, e as Error);
    return unusable(file, `the baseline file is not valid JSON (${(e as Error).message})`,
      'restore it from git history or regenerate it with mode: refresh', line);
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) {
    return unusable(file, 'the baseline file is not a JSON object', 'regenerate it with mode: refresh');
  }
  if (typeof data.schemaVersion !== 'number') return unusable(file, 'the baseline file has no schemaVersion', 'regenerate it with mode: refresh');
  let version: number = data.schemaVersion;
  if (version > SCHEMA_VERSION) {
    return unusable(file, `the baseline file has schema version ${version}, newer than this version of rabbitmq-perf-gate understands (${SCHEMA_VERSION})`,
      'upgrade the action to the release that wrote it, or regenerate the baseline with mode: refresh');
  }
  const from = version;
  while (version < SCHEMA_VERSION) {
    const step = MIGRATIONS[version];
    if (!step) return unusable(file, `the baseline file has schema version ${version}, which can no longer be migrated`, 'regenerate it with mode: refresh');
    data = step(data);
    version = data.schemaVersion as number;
  }
  const problem = shapeProblem(data);
  if (problem) return unusable(file, `the baseline file is malformed: ${problem}`, 'regenerate it with mode: refresh');
  return { status: 'ok', baseline: data as unknown as Baseline, migratedFrom: from < SCHEMA_VERSION ? from : undefined };
}

function unusable(file: string, message: string, fix: string, line?: number): BaselineRead {
  return { status: 'unusable', error: new GateError(message, { file, line, field: 'baseline-file' }, fix) };
}

function lineOfJsonError(text: string, e: Error): number | undefined {
  const m = /position (\d+)/.exec(e.message);
  return m ? text.slice(0, Number(m[1])).split('\n').length : undefined;
}

function shapeProblem(d: Record<string, unknown>): string | undefined {
  if (!d.scenarios || typeof d.scenarios !== 'object') return 'no "scenarios" object';
  for (const [id, s] of Object.entries(d.scenarios as Record<string, { metrics?: unknown }>)) {
    if (!s || typeof s.metrics !== 'object' || s.metrics === null) return `scenario "${id}" has no "metrics" object`;
    for (const [m, vs] of Object.entries(s.metrics as Record<string, unknown>)) {
      if (!Array.isArray(vs) || vs.some((v) => typeof v !== 'number' || !Number.isFinite(v))) return `scenario "${id}" metric "${m}" is not a list of numbers`;
    }
  }
  for (const [id, s] of Object.entries(d.scenarios as Record<string, { window?: Record<string, unknown> }>)) {
    const w = s.window;
    if (w !== undefined && (typeof w !== 'object' || w === null || !Number.isFinite(w.warmupSeconds) || !Number.isFinite(w.durationSeconds))) {
      return `scenario "${id}" has a "window" without numeric warmupSeconds and durationSeconds`;
    }
  }
  if (!d.fingerprint || typeof d.fingerprint !== 'object') return 'no "fingerprint" object';
  if (d.history !== undefined && !Array.isArray(d.history)) return '"history" is not a list';
  return undefined;
}

/** Why a stored baseline is not like for like with this run (another runner, RabbitMQ version,
 *  or trial length), or undefined: a stored comparison may then warn but never fail. */
export function storedMismatch(stored: Baseline, now: Fingerprint, nowTarget: TargetInfo, scenarios: readonly ScenarioSpec[]): string | undefined {
  return [fingerprintMismatch(stored.fingerprint, stored.target, now, nowTarget), windowMismatch(stored, scenarios)].filter(Boolean).join('; ') || undefined;
}

/** Why the stored trials are not like for like with this run's scenarios because their warm-up or
 *  window differs (e.g. a preset's trial length changed), or undefined. Files that did not record
 *  the window are taken as they are. */
export function windowMismatch(stored: Baseline, scenarios: readonly ScenarioSpec[]): string | undefined {
  const diffs = scenarios.flatMap((s) => {
    const w = stored.scenarios[s.id]?.window;
    return w && (w.warmupSeconds !== s.warmupSeconds || w.durationSeconds !== s.durationSeconds)
      ? [`${s.id} (${w.warmupSeconds}+${w.durationSeconds} s → ${s.warmupSeconds}+${s.durationSeconds} s)`] : [];
  });
  return diffs.length ? `the baseline's trials used another warm-up or window: ${diffs.join(', ')}` : undefined;
}

/** scenario → metric → values of the valid trials of one target in a run. */
export function trialValues(report: Pick<RunReport, 'trials'>, target: string): Record<string, Record<string, number[]>> {
  const out: Record<string, Record<string, number[]>> = {};
  for (const t of report.trials) {
    if (t.target !== target || !t.valid) continue;
    const s = (out[t.scenario] ??= {});
    for (const [m, v] of Object.entries(t.metrics)) (s[m] ??= []).push(v);
  }
  return out;
}

/** A new baseline from a run's candidate trials, carrying the previous file's history forward. */
export function baselineFromRun(report: RunReport, previous: Baseline | undefined, commit?: string): Baseline {
  const values = trialValues(report, report.candidate);
  const scenarios: Baseline['scenarios'] = {};
  const spec = new Map(report.scenarios.map((s) => [s.id, s]));
  for (const [id, metrics] of Object.entries(values)) {
    const s = spec.get(id);
    scenarios[id] = s ? { metrics, window: { warmupSeconds: s.warmupSeconds, durationSeconds: s.durationSeconds } } : { metrics };
  }
  // Scenarios not run this time keep their previous values rather than vanish.
  for (const [id, s] of Object.entries(previous?.scenarios ?? {})) scenarios[id] ??= s;
  const entry: BaselineHistoryEntry = { createdAt: report.createdAt, commit, medians: {} };
  for (const [id, metrics] of Object.entries(values)) {
    entry.medians[id] = Object.fromEntries(Object.entries(metrics).map(([m, vs]) => [m, median(vs)]));
  }
  const target = report.targets.find((t) => t.id === report.candidate)!;
  return {
    schemaVersion: SCHEMA_VERSION,
    createdAt: report.createdAt,
    commit,
    fingerprint: report.fingerprint,
    target,
    repetitions: report.repetitions,
    scenarios,
    history: [...(previous?.history ?? []), entry].slice(-HISTORY_LIMIT),
    ...(report.anchor ? { anchor: report.anchor } : {}),
  };
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
    throw new GateError(`cannot write ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); the previous file is untouched`,
      { file }, 'check free disk space and permissions');
  }
}

export function writeBaseline(file: string, b: Baseline): void {
  writeFileAtomic(file, JSON.stringify(b, null, 1) + '\n');
}
