// Markdown rendering of a RunReport: the job summary (everything) and the pull-request comment
// (verdict headline, regressions first with what moved inside the broker, improvements next,
// unchanged collapsed, environment and decision rule, trend chart; never over GitHub's
// 65,536-character limit). All user text goes through md().
import { isRunScope } from '../compare/judge';
import { machineText } from './machine';
import type { Comparison, RunReport } from '../schema/types';
import { metricDef } from '../metrics/definitions';
import { commentSafe, md } from './escape';
import { fenced } from '../config/diff';
import { ANSWER_ICON, answerCell, answerIcon, ciLabel, delta, headlineText, nText, num, ruleText, runAnswer, sequentialText, storedPowerText } from './format';
import { answerFor } from '../compare/compare';
import { baselineHint, measuredRows, nothingToCompare } from './measured';
import { effectiveLines } from './effective';
import { evidenceForRegressions, evidenceGaps } from './evidence';
import { flameShiftLines } from './flame';

export const COMMENT_LIMIT = 65_536;

export function marker(name: string): string {
  return `<!-- rabbitmq-perf-gate:${commentSafe(name)} -->`;
}

export interface RenderOptions {
  /** Gate name (input `name`), shown in the title and the hidden marker. */
  name: string;
  runUrl?: string;
  /** Pre-rendered trend section (src/github/trend.ts), shown before the environment. */
  trend?: string;
}

const header = (r: RunReport) => `| Scenario | Metric | Baseline | Now | Δ [${ciLabel(r)}] | n | Answer |\n|---|---|--:|--:|--:|--:|---|`;

function row(c: Comparison, report: RunReport): string {
  const def = metricDef(c.metric);
  const scenario = report.scenarios.find((s) => s.id === c.scenario);
  const against = c.against === 'stored' ? '' : ` vs ${md(c.baselineLabel)}`;
  const gate = c.gating ? '' : ' (info)';
  return `| ${md(scenario?.id ?? c.scenario)}${against} | ${md(def.label)} | ${num(c.baselineMedian, md(c.unit))} | ${num(c.candidateMedian, md(c.unit))} | ${delta(c)} | ${nText(c)} | ${answerIcon(c)} ${answerCell(c)}${gate} |`;
}

function table(cs: Comparison[], report: RunReport): string {
  return cs.length ? `${header(report)}\n${cs.map((c) => row(c, report)).join('\n')}` : '_none_';
}

function headline(r: RunReport, name: string): string {
  // Comparison labels and scenario ids in the headline come from files: escaped.
  return `## ${nothingToCompare(r) ? '📏' : ANSWER_ICON[runAnswer(r)]} ${md(name)}: ${md(headlineText(r))}`;
}

function environment(r: RunReport): string {
  const f = r.fingerprint;
  const targets = r.targets
    .map(
      (t) =>
        `**${md(t.label)}**: RabbitMQ ${md(t.rabbitmqVersion)}, Erlang ${md(t.erlangVersion)}${t.metadataStore ? `, metadata store ${md(t.metadataStore)}` : ''}${t.image ? `, image ${code(t.image)}` : ''}`,
    )
    .join('; ');
  return [
    `**Decided by:** ${md(r.decidedBy)}.`,
    `**Rule:** ${ruleText(r.comparisons, r.sequential)}`,
    `**Targets:** ${targets || '–'}`,
    r.targetNote ? `**How they were chosen:** ${md(r.targetNote)}.` : '',
    r.targetDiff ? `<details><summary>How the two targets differ</summary>\n\n${fenced(r.targetDiff, 'diff')}\n\n</details>` : '',
    r.effectDiff?.length
      ? `<details><summary>How they differ in effect, read back from the brokers (${r.effectDiff.length})</summary>\n\n${r.effectDiff.map((l) => `- ${md(l)}`).join('\n')}\n\n</details>`
      : '',
    effective(r),
    evidenceGapsText(r),
    `**Runner fingerprint:** ${md(f.cpuModel)}, ${f.cores} cores, ${md(f.os)}, Node ${md(f.node)}, ${md(f.tool)} ${md(f.toolVersion)}; preset \`${md(r.preset)}\`, ${r.repetitions} repetitions, seed ${r.seed}, ${r.durationSeconds} s.`,
  ]
    .filter(Boolean)
    .join('\n');
}

/** What each broker was read back to run with (src/report/effective.ts), collapsed. */
function effective(r: RunReport): string {
  const ts = effectiveLines(r);
  if (!ts.length) return '';
  const body = ts.map((t) => `**${md(t.target)}**\n${t.lines.map((l) => `- ${md(l)}`).join('\n')}`).join('\n\n');
  return `<details><summary>Effective configuration, read back from the brokers</summary>\n\n${body}\n\n</details>`;
}

/** Inline code that its content cannot break out of. */
function code(text: string): string {
  return `\`${text.replace(/[`\r\n]/g, '')}\``;
}

function invalidTrials(r: RunReport): string {
  const bad = r.trials.filter((t) => !t.valid);
  if (!bad.length && !r.errors.length) return '';
  const lines = bad.slice(0, 20).map((t) => `- ${md(t.scenario)} on ${md(t.target)}, trial ${t.trial + 1}: ${md(t.invalidReason)}`);
  if (bad.length > 20) lines.push(`- … and ${bad.length - 20} more`);
  for (const e of r.errors.filter((e) => isRunScope(e.scope))) lines.push(`- ${md(e.message)}`);
  // Scenario-level notes (e.g. a restart scenario skipped on a URL target); trial errors are above.
  for (const e of r.errors.filter((e) => !isRunScope(e.scope) && !/, trial \d+$/.test(e.scope))) lines.push(`- ${md(e.scope)}: ${md(e.message)}`);
  return `\n### Excluded trials and errors (${bad.length} of ${r.trials.length} trials invalid)\n${lines.join('\n')}\n`;
}

/** Run-level problems (stopped early: time limit, cancelled) right under the headline, and what a
 *  stored-only comparison could catch. */
function runNotes(r: RunReport): string {
  const power = storedPowerText(r);
  const seq = sequentialText(r);
  return (
    r.errors
      .filter((e) => isRunScope(e.scope))
      .map((e) => `> **${md(e.message)}**\n`)
      .join('') +
    (power ? `> ${md(power)}\n` : '') +
    (seq ? `> ${md(seq)}\n` : '') +
    (r.effectNote ? `> ${md(r.effectNote)}\n` : '') +
    (r.flameNote ? `> ${md(r.flameNote)}\n` : '') +
    (r.machine?.busy ? `> ${md(machineText(r)!)}\n` : '')
  ); // a quiet machine: in the HTML report and the terminal
}

function sections(r: RunReport): { regressions: Comparison[]; improvements: Comparison[]; rest: Comparison[] } {
  const regressions = r.comparisons.filter((c) => c.verdict === 'fail' || c.verdict === 'warn' || (answerFor(c) === 'undecided' && c.gating));
  const improvements = r.comparisons.filter((c) => !regressions.includes(c) && c.change === 'better');
  const rest = r.comparisons.filter((c) => !regressions.includes(c) && !improvements.includes(c));
  return { regressions, improvements, rest };
}

/** Next to the regressions: what moved inside the broker (src/report/evidence.ts). */
function brokerEvidence(r: RunReport): string {
  const groups = evidenceForRegressions(r);
  if (!groups.length) return '';
  // The lines are this tool's own text (registry labels and numbers); the scenario and label are not.
  const lines = groups.map((g) => {
    const flame = r.flames?.find((f) => f.scenario === g.scenario && f.against === g.against);
    // Frame names come from the broker's profile: escaped.
    const shifts = flame
      ? flameShiftLines(flame)
          .map((l) => `\`${l.replace(/`/g, '')}\``)
          .join('; ')
      : '';
    return (
      `- **${md(g.scenario)}** vs ${md(g.baselineLabel)}: ${g.lines.length ? g.lines.join('; ') : `_${md(g.none)}_`}` +
      (flame ? `\n  - flame graph (in the HTML report): ${shifts || 'no frame moved'}` : '')
    );
  });
  return `#### What moved inside the broker\n${lines.join('\n')}\n`;
}

/** Targets that could not provide some broker evidence, and why (collapsed). */
function evidenceGapsText(r: RunReport): string {
  const gaps = evidenceGaps(r);
  return gaps.length ? `<details><summary>Broker evidence not available</summary>\n\n${gaps.map((l) => `- ${md(l)}`).join('\n')}\n\n</details>` : '';
}

/** The measured numbers, when there is nothing to compare them with (src/report/measured.ts). */
function measured(r: RunReport): string {
  const rows = measuredRows(r).map((m) => `| ${md(m.target)} | ${md(m.scenario)} | ${md(m.label)} | ${num(m.median, md(m.unit))} | ${num(m.min)} – ${num(m.max)} | ${m.n} of ${m.trials} |`);
  return `### Measured\n| Target | Scenario | Metric | Median | Min – max | Valid trials |\n|---|---|---|--:|--:|--:|\n${rows.join('\n')}\n\n${baselineHint(r)}\n`;
}

/** The full report for the job summary. */
export function renderSummary(r: RunReport, o: RenderOptions): string {
  const s = sections(r);
  const tables = nothingToCompare(r)
    ? [measured(r)]
    : ['### Needs attention', table(s.regressions, r), brokerEvidence(r), '', '### Improvements', table(s.improvements, r), '', '### Unchanged', table(s.rest, r)];
  return [headline(r, o.name), runNotes(r), ...tables, invalidTrials(r), o.trend ?? '', environment(r), o.runUrl ? `\n[Workflow run](${o.runUrl})` : '', ''].join('\n');
}

/** The sticky PR comment: marker first, unchanged rows collapsed, truncated to fit. */
export function renderComment(r: RunReport, o: RenderOptions): string {
  const s = sections(r);
  const head = [marker(o.name), headline(r, o.name), runNotes(r)];
  const tail = ['', o.trend ?? '', environment(r), o.runUrl ? `\n[Workflow run and full job summary](${o.runUrl})` : ''];
  const body = [
    nothingToCompare(r) ? measured(r) : '',
    s.regressions.length ? `### Needs attention\n${table(s.regressions, r)}\n\n${brokerEvidence(r)}` : '',
    s.improvements.length ? `### Improvements\n${table(s.improvements, r)}\n` : '',
    s.rest.length ? `<details><summary>Unchanged (${s.rest.length})</summary>\n\n${table(s.rest, r)}\n\n</details>\n` : '',
    invalidTrials(r),
  ].join('\n');
  const full = [...head, body, ...tail].join('\n');
  if (full.length <= COMMENT_LIMIT) return full;
  const note = `\n\n_… truncated to fit a comment; the full table is in the job summary${o.runUrl ? ` of [this run](${o.runUrl})` : ''}._\n`;
  const room = COMMENT_LIMIT - head.join('\n').length - tail.join('\n').length - note.length - 16;
  let cut = body.slice(0, Math.max(0, room));
  cut = cut.slice(0, cut.lastIndexOf('\n'));
  if (cut.split('<details>').length > cut.split('</details>').length) cut += '\n\n</details>';
  return [...head, cut + note, ...tail].join('\n');
}
