// The nightly history file (.github/rabbitmq-perf/history.json): read (missing, corrupt or newer
// files give one clear message), one night's entry from a finished run, appended and bounded to
// the newest NIGHTLY_LIMIT nights, written atomically. An entry extends the stored baseline's
// history entry (medians for trends) with what cancels the runner's drift: each gating metric's
// paired ratio against the fixed reference broker of the same job, with the reference's image ID.
import { readFileSync } from 'node:fs';
import type { NightlyEntry, NightlyHistory, RunReport } from '../schema/types';
import { SCHEMA_VERSION } from '../schema/types';
import { GateError } from '../schema/errors';
import { trialValues } from './baseline-file';
import { writeFileAtomic } from './stored';
import { median } from './stats';

/** Nights kept; older ones are dropped (the detector looks at what is left). */
export const NIGHTLY_LIMIT = 200;
export const HISTORY_KIND = 'rabbitmq-perf-gate/nightly-history';
/** Medians kept per scenario besides its gating metrics (the trend chart's headline). */
const HEADLINE = ['consumed_rate', 'published_rate'];

export type HistoryRead = { status: 'ok'; history: NightlyHistory } | { status: 'missing' } | { status: 'unusable'; error: GateError };

export function emptyHistory(): NightlyHistory {
  return { schemaVersion: SCHEMA_VERSION, kind: HISTORY_KIND, entries: [], steps: [] };
}

export function readHistory(file: string): HistoryRead {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { status: 'missing' };
    return { status: 'unusable', error: new GateError(`cannot read the history file (${(e as NodeJS.ErrnoException).code})`, { file, field: 'history-file' }, 'check its permissions') };
  }
  return parseHistory(text, file);
}

export function parseHistory(text: string, file: string): HistoryRead {
  const bad = (message: string, fix = 'restore it from git history, or delete it to start a new history') => ({
    status: 'unusable' as const,
    error: new GateError(message, { file, field: 'history-file' }, fix),
  });
  let data: NightlyHistory;
  try {
    data = JSON.parse(text);
  } catch (e) {
    return bad(`the history file is not valid JSON (${(e as Error).message})`);
  }
  if (!data || typeof data !== 'object' || data.kind !== HISTORY_KIND)
    return bad(`the history file is not a nightly history (no "kind": "${HISTORY_KIND}")`, 'give another history-file path, or delete the file');
  if (typeof data.schemaVersion !== 'number' || data.schemaVersion > SCHEMA_VERSION)
    return bad(`the history file has schema version ${data.schemaVersion}, which this version does not understand`, 'upgrade the action to the release that wrote it');
  if (!Array.isArray(data.entries) || data.entries.some((e) => !e || typeof e.createdAt !== 'string' || typeof e.medians !== 'object'))
    return bad('the history file\'s "entries" is not a list of nights with createdAt and medians');
  for (const e of data.entries) {
    for (const [s, ms] of Object.entries(e.ratios ?? {})) {
      for (const [m, r] of Object.entries(ms)) if (!r || !Number.isFinite(r.ratio) || !(r.ratio > 0)) return bad(`the night of ${e.createdAt} has a ratio for ${s}/${m} that is not a positive number`);
    }
  }
  return { status: 'ok', history: { ...data, steps: Array.isArray(data.steps) ? data.steps : [] } };
}

export function writeHistory(file: string, h: NightlyHistory): void {
  writeFileAtomic(file, JSON.stringify(h, null, 1) + '\n');
}

/** A night's entry from its run: medians of the candidate's gating (and headline) metrics, and the
 *  paired ratio of each gating metric against the same-run reference, when there was one. */
export function nightlyEntry(r: RunReport, o: { commit?: string; runUrl?: string; revision?: string; note?: string } = {}): NightlyEntry {
  const values = trialValues(r, r.candidate);
  const gate: Record<string, string[]> = {};
  const medians: NightlyEntry['medians'] = {};
  for (const s of r.scenarios) {
    const vs = values[s.id];
    if (!vs) continue;
    gate[s.id] = s.gate;
    const keep = Object.entries(vs).filter(([m, xs]) => (s.gate.includes(m) || HEADLINE.includes(m)) && xs.length);
    if (keep.length) medians[s.id] = Object.fromEntries(keep.map(([m, xs]) => [m, median(xs)]));
  }
  const refIds = new Set(r.targets.filter((t) => t.id !== r.candidate).map((t) => t.id));
  const paired = r.comparisons.filter((c) => c.paired && c.gating && refIds.has(c.against) && c.ratio !== null && c.ratio > 0);
  const ratios: NonNullable<NightlyEntry['ratios']> = {};
  for (const c of paired) (ratios[c.scenario] ??= {})[c.metric] = { ratio: c.ratio!, ciLow: c.ciLow, ciHigh: c.ciHigh, pairs: Math.min(c.nBaseline, c.nCandidate) };
  const cand = r.targets.find((t) => t.id === r.candidate);
  const ref = paired.length ? r.targets.find((t) => t.id === paired[0].against) : undefined;
  return {
    createdAt: r.createdAt,
    ...(o.commit ? { commit: o.commit } : {}),
    medians,
    gate,
    ...(cand?.image ? { image: cand.image } : {}),
    ...(cand?.imageId ? { imageId: cand.imageId } : {}),
    ...(o.revision ? { revision: o.revision } : {}),
    ...(ref ? { reference: { image: ref.image ?? ref.label, ...(ref.imageId ? { imageId: ref.imageId } : {}), label: ref.label } } : {}),
    ...(paired.length ? { ratios } : {}),
    verdict: r.verdict,
    ...(o.runUrl ? { runUrl: o.runUrl } : {}),
    ...(o.note ? { note: o.note } : {}),
  };
}

/** The history with `entry` appended, the newest NIGHTLY_LIMIT kept; steps whose nights are gone are dropped. */
export function appendNight(h: NightlyHistory, entry: NightlyEntry, limit = NIGHTLY_LIMIT): NightlyHistory {
  const entries = [...h.entries, entry].slice(-limit);
  const kept = new Set(entries.map((e) => e.createdAt));
  return { ...h, schemaVersion: SCHEMA_VERSION, entries, steps: h.steps.filter((s) => kept.has(s.at)) };
}
