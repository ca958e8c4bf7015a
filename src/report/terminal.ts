// The comparison table for a terminal (the CLI's stdout when it is a TTY): verdict headline,
// gating metrics plus reported-only metrics that moved, Δ as the Hodges-Lehmann ratio with its
// CI, verdicts and deltas coloured unless colour is off, what moved inside the broker next to a
// regression; and when colour is allowed on a stream.
import type { Comparison, RunReport } from '../schema/types';
import { metricDef } from '../metrics/definitions';
import { ANSWER_WORD, answerCell, ciLabel, delta, headlineText, nText, num, runAnswer, sequentialText, storedPowerText } from './format';
import { baselineHint, measuredRows, nothingToCompare } from './measured';
import { evidenceForRegressions } from './evidence';

/** Colour on a stream: FORCE_COLOR forces it; NO_COLOR, TERM=dumb or no TTY turn it off. */
export const colorAllowed = (s: NodeJS.WriteStream) =>
  (Boolean(process.env.FORCE_COLOR) && process.env.FORCE_COLOR !== '0') || (Boolean(s.isTTY) && !process.env.NO_COLOR && process.env.TERM !== 'dumb');
export const paint = (on: boolean) => (code: string, s: string) => (on ? `\x1b[${code}m${s}\x1b[0m` : s);

/** Aligned columns, the numeric ones (by index) right-aligned. */
function columns(header: string[], rows: string[][], right: Set<number>): { pad: (row: string[]) => string[] } {
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  return { pad: (row) => row.map((s, i) => (right.has(i) ? s.padStart(w[i]) : s.padEnd(w[i]))) };
}

/** The measured numbers when there is nothing to compare with (src/report/measured.ts). */
function measuredTable(r: RunReport, c: (code: string, s: string) => string): string {
  const rows = measuredRows(r).map((m) => [m.target, m.scenario, m.label, num(m.median, m.unit), `${num(m.min)} – ${num(m.max)}`, `${m.n} of ${m.trials}`]);
  const header = ['Target', 'Scenario', 'Metric', 'Median', 'Min – max', 'Valid trials'];
  const { pad } = columns(header, rows, new Set([3, 4, 5]));
  return [c('1', pad(header).join('  ').trimEnd()), ...rows.map((row) => pad(row).join('  ').trimEnd()), '', baselineHint(r).replace(/`/g, ''), ''].join('\n');
}

/** The comparison table for a terminal, verdicts and deltas coloured unless colour is off. */
export function terminalTable(r: RunReport, color: boolean): string {
  const c = paint(color);
  const vc: Record<string, string> = { pass: '32', warn: '33', fail: '1;31', inconclusive: '2' };
  if (nothingToCompare(r)) return `${c('1', '= MEASURED')}  ${headlineText(r)}\n\n${measuredTable(r, c)}`;
  const answer = runAnswer(r);
  const ac: Record<string, string> = { regression: '1;31', 'no-regression': r.verdict === 'warn' ? '33' : '32', undecided: '2' };
  const ai: Record<string, string> = { regression: '✘', 'no-regression': r.verdict === 'warn' ? '!' : '✔', undecided: '?' };
  const head = `${c(ac[answer], `${ai[answer]} ${ANSWER_WORD[answer].toUpperCase()}`)}  ${headlineText(r)} — decided by ${r.decidedBy}`;
  if (!r.comparisons.length) return `${head}\n`;
  const power = storedPowerText(r);
  const order = (x: Comparison) => (x.verdict === 'fail' ? 0 : x.verdict === 'warn' ? 1 : x.gating ? 2 : 3);
  // Gating metrics always; reported-only ones when they moved. Everything is in --json / --html.
  const cs = r.comparisons.filter((x) => x.gating || x.verdict === 'fail' || x.verdict === 'warn' || x.change === 'better' || x.change === 'worse').sort((a, b) => order(a) - order(b));
  const multi = new Set(r.comparisons.map((x) => x.against)).size > 1;
  const rows = cs.map((x) => [
    x.scenario + (multi ? ` vs ${x.against === 'stored' ? 'stored' : x.baselineLabel}` : ''),
    metricDef(x.metric).label + (x.gating ? ' ★' : ''),
    num(x.baselineMedian, x.unit),
    num(x.candidateMedian, x.unit),
    delta(x),
    nText(x),
    answerCell(x) + (x.gating ? '' : ' (info)'),
  ]);
  const hidden = r.comparisons.length - cs.length;
  const against = multi ? '' : `${r.comparisons[0].candidateLabel} vs ${r.comparisons[0].against === 'stored' ? 'the stored baseline' : r.comparisons[0].baselineLabel}\n`;
  const header = ['Scenario', 'Metric', 'Baseline', 'Now', `Δ [${ciLabel(r)}]`, 'n', 'Answer'];
  const { pad } = columns(header, rows, new Set([2, 3, 4, 5]));
  const body = rows.map((row, k) => {
    const x = cs[k];
    const cells = pad(row);
    if (x.change !== 'same' && x.change !== 'unknown') cells[4] = c(x.change === 'better' ? '32' : '31', cells[4]);
    cells[6] = c(vc[x.verdict] ?? '0', row[6]);
    return cells.join('  ').trimEnd();
  });
  const foot = `★ gating metric; Δ is the Hodges-Lehmann ratio with its ${ciLabel(r)}${hidden ? `; ${hidden} unchanged reported-only metric${hidden === 1 ? '' : 's'} not shown (see --json or --html)` : ''}.`;
  const seq = sequentialText(r);
  const inside = evidenceForRegressions(r).map((g) => `  ${g.scenario} vs ${g.baselineLabel}: ${g.lines.length ? g.lines.join('; ') : g.none}`);
  const evidence = inside.length ? [c('1', 'What moved inside the broker'), ...inside, ''] : [];
  return [head, ...(power ? [power] : []), ...(seq ? [seq] : []), ...(r.effectNote ? [r.effectNote] : []), against, c('1', pad(header).join('  ').trimEnd()), ...body, '', ...evidence, foot, ''].join(
    '\n',
  );
}
