// Change points in a nightly history: each gating metric's series — the paired ratio against the
// fixed reference broker where the nights have one (only nights against the newest night's
// reference image: another reference is another series), else the absolute medians — searched
// with E-divisive means (src/compare/changepoint.ts). A step already reported (same series, its
// first night within two nights of the recorded one) is not new; a new one is recorded in the
// history so it is announced once, with the two nights around it and the bisect command that
// would search between them. recordNight does all of it for a finished nightly run.
import type { NightlyEntry, NightlyHistory, NightlySeries, NightlyStep, NightlySummary, RunReport } from '../schema/types';
import { metricDef } from '../metrics/definitions';
import { type ChangePointOptions, eDivisive } from './changepoint';
import { appendNight, nightlyEntry, writeHistory } from './history-file';

/** Two reports of one step may place it a night or two apart as more nights arrive. */
const SAME_STEP_NIGHTS = 2;

interface RawSeries {
  scenario: string;
  metric: string;
  series: 'ratio' | 'median';
  nights: number[];
  values: number[];
}

/** The series to search: every gating metric of the newest night, as ratios when it has them. */
export function historySeries(h: NightlyHistory): RawSeries[] {
  const entries = h.entries;
  const newest = [...entries].reverse().find((e) => e.ratios);
  const out: RawSeries[] = [];
  if (newest) {
    const ref = newest.reference?.imageId ?? newest.reference?.image;
    for (const [scenario, metrics] of Object.entries(newest.ratios!)) {
      for (const metric of Object.keys(metrics)) {
        const nights: number[] = [];
        entries.forEach((e, i) => {
          const r = e.ratios?.[scenario]?.[metric];
          if (r && (e.reference?.imageId ?? e.reference?.image) === ref) nights.push(i);
        });
        out.push({ scenario, metric, series: 'ratio', nights, values: nights.map((i) => entries[i].ratios![scenario][metric].ratio) });
      }
    }
    return out;
  }
  const last = entries.at(-1);
  for (const [scenario, metrics] of Object.entries(last?.gate ?? {})) {
    for (const metric of metrics) {
      const nights = entries.map((e, i) => (Number.isFinite(e.medians?.[scenario]?.[metric]) ? i : -1)).filter((i) => i >= 0);
      out.push({ scenario, metric, series: 'median', nights, values: nights.map((i) => entries[i].medians[scenario][metric]) });
    }
  }
  return out;
}

export interface Detection {
  series: NightlySeries[];
  newSteps: NightlyStep[];
  /** The history with the new steps recorded. */
  history: NightlyHistory;
}

/** Searches every series; `foundAt` stamps the new steps (the night being recorded). */
export function detectSteps(h: NightlyHistory, foundAt: string, options: ChangePointOptions = {}): Detection {
  const index = new Map(h.entries.map((e, i) => [e.createdAt, i]));
  const known = h.steps;
  const newSteps: NightlyStep[] = [];
  const series: NightlySeries[] = historySeries(h).map((s) => {
    const found = s.values.length >= 2 * (options.minSize ?? 3) ? eDivisive(s.values, options).points : [];
    const dir = metricDef(s.metric).direction;
    const steps = found.map((p) => {
      const step: NightlyStep = {
        scenario: s.scenario,
        metric: s.metric,
        series: s.series,
        before: h.entries[s.nights[p.index - 1]].createdAt,
        at: h.entries[s.nights[p.index]].createdAt,
        magnitude: p.magnitude,
        worse: dir === 'higher' ? p.magnitude < 0 : p.magnitude > 0,
        pValue: p.pValue,
        foundAt,
      };
      const at = s.nights[p.index];
      const seen = known.find((k) => k.scenario === s.scenario && k.metric === s.metric && k.series === s.series && index.has(k.at) && Math.abs(index.get(k.at)! - at) <= SAME_STEP_NIGHTS);
      if (!seen) newSteps.push(step);
      // Shown where the nights now place it (more nights place it better), found when first reported.
      return { ...step, foundAt: seen?.foundAt ?? foundAt, index: p.index, isNew: !seen };
    });
    const points = s.nights.map((i) => {
      const e = h.entries[i];
      const r = s.series === 'ratio' ? e.ratios![s.scenario][s.metric] : undefined;
      return {
        createdAt: e.createdAt,
        value: r ? r.ratio : e.medians[s.scenario][s.metric],
        ...(r ? { ciLow: r.ciLow, ciHigh: r.ciHigh } : {}),
        ...(e.image ? { image: e.image } : {}),
        ...(e.revision ? { revision: e.revision } : {}),
      };
    });
    return { scenario: s.scenario, metric: s.metric, series: s.series, points, steps };
  });
  return { series, newSteps, history: { ...h, steps: [...h.steps, ...newSteps] } };
}

const shellQuote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** The command that would bisect around a step: with the nights' revisions and an image template,
 *  a git-range bisect from the night before the last quiet one to the night after the first changed
 *  one (a step found on its second or third night may sit one night off: the range spans that);
 *  otherwise what is missing for one. */
export function bisectSuggestion(step: NightlyStep, h: NightlyHistory, o: { template?: string; scenarios?: string } = {}): { scenario: string; metric: string; command: string; note?: string } {
  const i = h.entries.findIndex((e) => e.createdAt === step.before);
  const j = h.entries.findIndex((e) => e.createdAt === step.at);
  const widen = (k: number, by: number) => (k < 0 ? undefined : h.entries[Math.max(0, Math.min(h.entries.length - 1, k + by))]);
  const before: NightlyEntry | undefined = widen(i, -1);
  const after: NightlyEntry | undefined = widen(j, 1);
  const scenarios = o.scenarios ?? step.scenario;
  if (before?.revision && after?.revision && o.template) {
    return {
      scenario: step.scenario,
      metric: step.metric,
      command: `rabbitmq-perf-gate bisect --template ${shellQuote(o.template)} --range ${before.revision}..${after.revision} --repo PATH/TO/CHECKOUT --scenarios ${shellQuote(scenarios)}`,
      note: `or the action with mode: bisect, bisect-template: ${o.template}, bisect-range: ${before.revision}..${after.revision}, scenarios: ${scenarios} (from workflow_dispatch)`,
    };
  }
  const img = (e?: NightlyEntry) => (e ? `${e.image ?? '?'}${e.imageId ? `@${e.imageId.replace(/^sha256:/, '').slice(0, 12)}` : ''}` : '?');
  return {
    scenario: step.scenario,
    metric: step.metric,
    command: `rabbitmq-perf-gate bisect --images ${shellQuote(`${before?.image ?? 'GOOD'},…,${after?.image ?? 'BAD'}`)} --scenarios ${shellQuote(scenarios)}`,
    note: `the nights around it ran ${img(before)} and ${img(after)}; ${!before?.revision || !after?.revision ? "record each night's source commit (input revision, or the image label org.opencontainers.image.revision)" : 'give an image template (input bisect-template)'} to get a git-range bisect command`,
  };
}

/** The nightly part of a run's report. */
export function nightlySummary(d: Detection, file: string, o: { template?: string; scenarios?: string; notes?: string[] } = {}): NightlySummary {
  return {
    file,
    nights: d.history.entries.length,
    series: d.series,
    newSteps: d.newSteps,
    bisect: d.newSteps.map((s) => bisectSuggestion(s, d.history, o)),
    notes: o.notes ?? [],
  };
}

export interface NightOptions {
  /** The history file to write, and how to name it in reports. */
  file: string;
  displayFile: string;
  commit?: string;
  runUrl?: string;
  revision?: string;
  /** An image template for the suggested bisect command. */
  template?: string;
  scenarios?: string;
  /** Sentences for the summary (e.g. why tonight has no ratios). */
  notes?: string[];
  change?: ChangePointOptions;
}

/**
 * Records a finished nightly run: its entry appended to the history (bounded), the series searched
 * for steps, new steps recorded, the file written atomically; returns the report's nightly part.
 */
export function recordNight(r: RunReport, history: NightlyHistory, o: NightOptions): { summary: NightlySummary; history: NightlyHistory } {
  const ratios = r.comparisons.some((c) => c.paired && c.gating);
  const note = ratios ? undefined : `no paired ratio tonight (${r.decidedBy}): only the absolute medians were recorded, and they carry the runner's drift`;
  const entry = nightlyEntry(r, { commit: o.commit, runUrl: o.runUrl, revision: o.revision, note });
  const d = detectSteps(appendNight(history, entry), entry.createdAt, o.change);
  writeHistory(o.file, d.history);
  return { summary: nightlySummary(d, o.displayFile, { template: o.template, scenarios: o.scenarios, notes: [...(o.notes ?? []), ...(note ? [note] : [])] }), history: d.history };
}
