// Number, verdict and decision-rule formatting shared by every report format.
import type { Answer, Comparison, MetricKind, RunReport, Verdict } from '../schema/types';
import { ALPHA, answerFor, CONFIDENCE, trialsToDecide } from '../compare/compare';
import { nothingToCompare } from './measured';
import { isRunScope } from '../compare/judge';
import { metricDef } from '../metrics/definitions';

const metricLabel = (id: string) => metricDef(id).label;

export const VERDICT_ICON: Record<Verdict, string> = { pass: '✅', warn: '⚠️', fail: '❌', inconclusive: '❔' };
export const ANSWER_ICON: Record<Answer, string> = { regression: '❌', 'no-regression': '✅', undecided: '❔' };
/** The three answers as every format names them. */
export const ANSWER_WORD: Record<Answer, string> = { regression: 'regression', 'no-regression': 'no regression', undecided: 'not decided' };

/** The run's answer (reports written before answers: from their verdict). */
export const runAnswer = (r: Pick<RunReport, 'answer' | 'verdict'>): Answer => answerFor(r);

/** A bound as a percentage, rounded up to 0.1 so that "no regression of X % or more" never claims more than was shown. */
function boundPct(b: number): string {
  return `${(Math.ceil(Math.max(0, b) * 1000 - 1e-6) / 10).toFixed(1)} %`;
}

/** A comparison's answer for a table cell: "regression", "no regression ≥ 6.2 %", "slower, not by 8.2 %", "not decided: 14.1 % not ruled out". */
export function answerCell(c: Comparison): string {
  const a = answerFor(c);
  const b = c.bound ?? null;
  if (a === 'regression') return 'regression';
  if (a === 'no-regression') {
    if (c.verdict === 'warn' && b !== null) return `slower, but not by ${boundPct(b)}`;
    return b === null ? 'no regression' : b <= 0 ? 'no regression (better)' : `no regression ≥ ${boundPct(b)}`;
  }
  return b === null || b <= 0 ? 'not decided' : `not decided: ${boundPct(b)} not ruled out`;
}

/** Icon of a comparison's answer (a significant slowdown inside the margin: ⚠️). */
export function answerIcon(c: Comparison): string {
  return c.verdict === 'warn' ? VERDICT_ICON.warn : ANSWER_ICON[answerFor(c)];
}

const KIND_WORD: Partial<Record<MetricKind, string>> = { throughput: 'throughput', churn: 'churn rate', latency: 'latency', duration: 'duration', memory: 'memory' };

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

/** "throughput 5 % / 10 %, latency 25 % / 25 %": the gating metrics' tolerance / equivalence margin by kind. */
function marginList(cs: readonly Comparison[]): string {
  const by = new Map<string, string>();
  for (const c of cs.filter((x) => x.gating)) {
    const k = KIND_WORD[metricDef(c.metric).kind] ?? metricDef(c.metric).kind;
    by.set(k, `${+(c.tolerance * 100).toFixed(1)} % / ${+((c.equivalence ?? c.tolerance) * 100).toFixed(1)} %`);
  }
  return [...by.entries()].map(([k, v]) => `${k} ${v}`).join(', ') || 'none gating';
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
    ...(cs.some((c) => c.paired) ? ["same-run: the exact Wilcoxon signed-rank test of the log ratios of the rounds' back-to-back pairs"] : []),
    ...(cs.some((c) => !c.paired) || cs.length === 0 ? [`${cs.some((c) => c.paired) ? 'stored baseline: ' : ''}the exact Mann-Whitney U test`] : []),
  ];
  const correction = seq
    ? `Bonferroni-corrected across the selection's ${seq.family} gating metric${seq.family === 1 ? '' : 's'}, α = ${ALPHA} spent across looks at ${seq.looks.join(', ')} pairs (one-sided level ${seq.level.toFixed(4)} at each, Pocock-type, calibrated on the exact signed-rank distribution)`
    : `Holm-corrected across gating metrics (α = ${ALPHA})`;
  const level = seq
    ? `${(100 * (1 - 2 * seq.level)).toFixed(1)} % CI (each end a one-sided ${(100 * (1 - seq.level)).toFixed(1)} % bound)`
    : `${CI} (each end a one-sided ${Math.round((1 - ALPHA) * 100)} % bound)`;
  return `${tests.join('; ')}, ${correction}; Δ is the Hodges-Lehmann ratio with its distribution-free ${level}; a metric is a regression only when it is significant and the whole CI lies beyond its tolerance in the bad direction, and "no regression of X % or more" once the CI's bad end X lies inside its equivalence margin (tolerance and margin per metric: ${marginList(cs)}); otherwise it is not decided.`;
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
  const where = [...by.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([n, ids]) => `${ids.join(', ')} after ${n} pairs${n === cap ? ' (the cap)' : ` (look ${q.looks.indexOf(n) + 1} of ${q.looks.length})`}`)
    .join('; ');
  const min = Math.abs(q.savedSeconds) / 60;
  const time = q.savedSeconds >= 0 ? `${min.toFixed(1)} min of trials saved` : `${min.toFixed(1)} min of trials more`;
  const fast = q.failedFast ? ` Fail-fast: ${q.failedFast.scenario} failed after ${q.failedFast.pairs} pairs, so the scenarios still undecided stopped there.` : '';
  return `Group-sequential A/B: ${where || 'no scenario finished'}; ${time} against the fixed ${q.fixedPairs} pairs.${fast}`;
}

/** "one_fast consumed rate −12.3 % [−15.1, −9.4]" */
function named(c: Comparison): string {
  return `${c.scenario} ${metricLabel(c.metric)} ${delta(c)}`;
}

/** The largest bound among comparisons, per metric kind: "7.3 % or more in throughput, 18.0 % or more in latency". */
function boundsByKind(cs: Comparison[]): string {
  const by = new Map<string, number>();
  for (const c of cs) {
    const k = KIND_WORD[metricDef(c.metric).kind] ?? metricDef(c.metric).kind;
    by.set(k, Math.max(by.get(k) ?? Number.NEGATIVE_INFINITY, c.bound ?? Number.POSITIVE_INFINITY));
  }
  const parts = [...by.entries()].map(([k, b]) => ({ k, b }));
  if (parts.length === 1) return `${boundPct(parts[0].b)} or more`;
  return parts.map((p) => `${boundPct(p.b)} or more in ${p.k}`).join(', ');
}

/**
 * The run's answer in words, for every format's headline: "regression: …" (red), "no regression
 * of X % or more" (green; X the one-sided 95 % bound reached, per metric kind), or "not decided:
 * …" (grey: what was ruled out so far and what more would decide it).
 */
export function headlineText(r: RunReport): string {
  if (r.mode === 'refresh' && nothingToCompare(r)) return 'measured: these trials become the baseline';
  if (nothingToCompare(r)) return 'measured, nothing to compare with yet';
  const gating = r.comparisons.filter((c) => c.gating);
  const answer = runAnswer(r);
  if (answer === 'regression' || r.verdict === 'fail') {
    const red = gating.filter((c) => answerFor(c) === 'regression' || c.verdict === 'fail');
    const more = red.length > 2 ? ` and ${red.length - 2} more` : '';
    const tol = [...new Set(red.map((c) => `${+(c.tolerance * 100).toFixed(1)} %`))].join(' / ');
    return `regression: ${red.slice(0, 2).map(named).join('; ')}${more} — beyond the ${tol} tolerance`;
  }
  if (answer === 'no-regression') {
    const slower = gating.filter((c) => c.verdict === 'warn');
    const note = slower.length ? `; significantly slower, within that bound: ${slower.slice(0, 2).map(named).join('; ')}${slower.length > 2 ? ` and ${slower.length - 2} more` : ''}` : '';
    return `no regression of ${boundsByKind(gating)}${note}`;
  }
  const open = gating.filter((c) => answerFor(c) === 'undecided');
  const green = gating.filter((c) => answerFor(c) === 'no-regression');
  if (!gating.length) return 'not decided: no gating metric was compared';
  const first = open[0];
  const more = first ? trialsToDecide(first, 1 + (first.equivalence ?? first.tolerance)) : null;
  const unit = first?.paired ? 'pairs' : 'trials per side';
  const decide = !first ? '' : more !== null && more <= 1000 ? ` — about ${more} ${unit} would likely decide it` : ` — more ${unit}, or a quieter runner, would decide it`;
  const stopped = r.errors.some((e) => isRunScope(e.scope)) ? ' (the run stopped early)' : '';
  const openText = first
    ? `${open.length} of ${gating.length} gating metrics open${stopped}: ${named(first)}${first.bound !== null && first.bound !== undefined && first.bound > 0 ? `, a regression of ${boundPct(first.bound)} not ruled out` : ''}${open.length > 1 ? ` and ${open.length - 1} more` : ''}${decide}`
    : 'the run stopped early';
  const others = green.length === 1 ? 'the other gating metric' : `the other ${green.length}`;
  return `not decided: ${openText}${green.length ? `; no regression of ${boundsByKind(green)} in ${others}` : ''}`;
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
