// Number, verdict and decision-rule formatting shared by every report format.
import type { Comparison, RunReport, Verdict } from '../schema/types';
import { ALPHA, CONFIDENCE } from '../compare/compare';
import { nothingToCompare } from './measured';
import { metricDef } from '../metrics/definitions';

const metricLabel = (id: string) => metricDef(id).label;

export const VERDICT_ICON: Record<Verdict, string> = { pass: '✅', warn: '⚠️', fail: '❌', inconclusive: '❔' };

export function num(x: number | null | undefined, unit = ''): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '–';
  const a = Math.abs(x);
  const s = a >= 1000 ? Math.round(x).toLocaleString('en-US') : a >= 100 ? x.toFixed(0) : a >= 10 ? x.toFixed(1) : x.toFixed(2);
  return unit ? `${s} ${unit}` : s;
}

export function pct(r: number | null | undefined): string {
  if (r === null || r === undefined || !Number.isFinite(r)) return '–';
  const d = (r - 1) * 100;
  return `${d >= 0 ? '+' : '−'}${Math.abs(d).toFixed(1)} %`;
}

/** "90 % CI": the level of every delta's interval (src/compare/compare.ts says why 90 %). */
export const CI = `${Math.round(CONFIDENCE * 100)} % CI`;

/** The CI level of a report's same-run deltas: 90 %, or a sequential A/B's 1 − 2 × its level. */
export function ciLabel(r: Pick<RunReport, 'sequential'>): string {
  return r.sequential ? `${(100 * (1 - 2 * r.sequential.level)).toFixed(1)} % CI` : CI;
}

/** "−6.8 % [−9.0, −4.7]" */
export function delta(c: Comparison): string {
  if (c.ratio === null) return '–';
  if (c.ciLow === null || c.ciHigh === null) return pct(c.ratio);
  const b = (r: number) => ((r - 1) * 100).toFixed(1).replace('-', '−');
  return `${pct(c.ratio)} [${b(c.ciLow)}, ${b(c.ciHigh)}]`;
}

/** n of a comparison: "8 pairs" (same-run, paired by round) or "5+5" (independent samples). */
export function nText(c: Comparison): string {
  return c.paired ? `${c.nCandidate} pairs` : `${c.nBaseline}+${c.nCandidate}`;
}

/** The decision rule in one sentence, naming the test(s) the report's comparisons used. */
export function ruleText(cs: readonly Comparison[], seq?: RunReport['sequential']): string {
  const tests = [
    ...(cs.some((c) => c.paired) ? ['same-run: the exact Wilcoxon signed-rank test of the log ratios of the rounds\' back-to-back pairs'] : []),
    ...(cs.some((c) => !c.paired) || cs.length === 0 ? [`${cs.some((c) => c.paired) ? 'stored baseline: ' : ''}the exact Mann-Whitney U test`] : []),
  ];
  const correction = seq
    ? `Bonferroni-corrected across the selection's ${seq.family} gating metric${seq.family === 1 ? '' : 's'}, α = ${ALPHA} spent across looks at ${seq.looks.join(', ')} pairs (one-sided level ${seq.level.toFixed(4)} at each, Pocock-type, calibrated on the exact signed-rank distribution)`
    : `Holm-corrected across gating metrics (α = ${ALPHA})`;
  const level = seq ? `${(100 * (1 - 2 * seq.level)).toFixed(1)} % CI (each end a one-sided ${(100 * (1 - seq.level)).toFixed(1)} % bound)`
    : `${CI} (each end a one-sided ${Math.round((1 - ALPHA) * 100)} % bound)`;
  return `${tests.join('; ')}, ${correction}; Δ is the Hodges-Lehmann ratio with its distribution-free ${level}; a metric fails only when it is significant and the whole CI lies beyond its tolerance in the bad direction.`;
}

/**
 * A group-sequential A/B in one sentence, for every format's headline: where each scenario
 * stopped and the trial time saved against the fixed design (and, fail-fast, whose fail ended the
 * run); empty otherwise.
 */
export function sequentialText(r: RunReport): string {
  const q = r.sequential;
  if (!q) return '';
  const by = new Map<number, string[]>();
  for (const [id, n] of Object.entries(q.stopped)) by.set(n, [...(by.get(n) ?? []), id]);
  const cap = q.looks.at(-1)!;
  const where = [...by.entries()].sort((a, b) => a[0] - b[0])
    .map(([n, ids]) => `${ids.join(', ')} after ${n} pairs${n === cap ? ' (the cap)' : ` (look ${q.looks.indexOf(n) + 1} of ${q.looks.length})`}`).join('; ');
  const min = Math.abs(q.savedSeconds) / 60;
  const time = q.savedSeconds >= 0 ? `${min.toFixed(1)} min of trials saved` : `${min.toFixed(1)} min of trials more`;
  const fast = q.failedFast ? ` Fail-fast: ${q.failedFast.scenario} failed after ${q.failedFast.pairs} pairs, so the scenarios still undecided stopped there.` : '';
  return `Group-sequential A/B: ${where || 'no scenario finished'}; ${time} against the fixed ${q.fixedPairs} pairs.${fast}`;
}

/** The verdict in words, for every format's headline. */
export function headlineText(r: RunReport): string {
  if (r.verdict === 'fail') return `${r.regressions} regression${r.regressions === 1 ? '' : 's'} beyond tolerance`;
  if (r.verdict === 'warn') return 'significant slowdowns within tolerance';
  if (r.mode === 'refresh' && nothingToCompare(r)) return 'measured: these trials become the baseline';
  if (nothingToCompare(r)) return 'measured, nothing to compare with yet';
  if (r.verdict === 'inconclusive') return 'inconclusive: not enough clean data to decide';
  return 'no regression';
}

/**
 * Stored-only reports: what the comparison could catch at all (Comparison.failsBeyond), one
 * sentence for every format's headline; empty for same-run A/Bs and for older reports.
 */
export function storedPowerText(r: RunReport): string {
  const stored = r.comparisons.filter((c) => c.gating && c.against === 'stored');
  if (!stored.length || r.comparisons.some((c) => c.against !== 'stored') || stored.every((c) => c.failsBeyond === undefined)) return '';
  const able = stored.filter((c) => typeof c.failsBeyond === 'number').sort((a, b) => Math.abs(a.failsBeyond! - 1) - Math.abs(b.failsBeyond! - 1));
  const ab = 'a same-run A/B (input baseline-image, or a target file) resolves a few percent';
  if (!able.length) {
    const why = /never fail: ([^)]*)\)/.exec(r.decidedBy)?.[1];
    return `Stored-baseline comparison on this runner: it can warn but never fail (${why ?? 'too few trials to reach significance'}); ${ab}.`;
  }
  const [best, ...rest] = able;
  const others = rest.length ? `; ${pct(rest[0].failsBeyond)}${rest.length > 1 ? ` to ${pct(rest[rest.length - 1].failsBeyond)}` : ''} for the other gating metric${rest.length > 1 ? 's' : ''}` : '';
  const never = stored.length - able.length ? `; ${stored.length - able.length} cannot fail at this n` : '';
  return `Stored-baseline comparison on this runner: can fail only beyond ${pct(best.failsBeyond)} (${best.scenario} ${metricLabel(best.metric)}${others}${never}), from the baseline's spread, its drift allowance and this run's n; ${ab}.`;
}
