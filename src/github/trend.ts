// The trend pictures in the comment and job summary, as small Mermaid `xychart-beta` line charts:
// one headline metric's median across the stored baseline's history plus the current run, and a
// nightly run's section (mode: nightly) — each gating metric's paired ratio across the nightly
// history with the steps found in it, the new ones with the two nights around them and the
// bisect command that would search between them. Every chart label is reduced to a safe
// character set (it goes inside Mermaid's quoted strings); other text goes through md().
import type { BaselineHistoryEntry, NightlySummary, RunReport } from '../schema/types';
import { trialValues } from '../compare/baseline-file';
import { median } from '../compare/stats';
import { metricDef } from '../metrics/definitions';
import { md } from '../report/escape';

/** History points shown at most (the newest ones). */
const MAX_POINTS = 20;
const PREFERRED = ['consumed_rate', 'published_rate'];

const safe = (s: string): string => s.replace(/[^\w .,:%/()+-]/g, '').slice(0, 60);
const round = (x: number): number => Number(x.toPrecision(4));

/** Which scenario/metric to draw: `pick` ("scenario/metric") or the first scenario's throughput. */
export function headlineMetric(r: RunReport, pick?: string): { scenario: string; metric: string } | undefined {
  if (pick) {
    const [scenario, metric] = pick.split('/');
    return scenario && metric ? { scenario, metric } : undefined;
  }
  const values = trialValues(r, r.candidate);
  for (const s of r.scenarios) {
    const metrics = Object.keys(values[s.id] ?? {});
    const metric = PREFERRED.find((m) => metrics.includes(m)) ?? s.gate.find((m) => metrics.includes(m));
    if (metric) return { scenario: s.id, metric };
  }
  return undefined;
}

/** Markdown section with the chart, or '' when there is no history to draw against. */
export function trendChart(r: RunReport, history: BaselineHistoryEntry[] | undefined, pick?: string): string {
  const h = headlineMetric(r, pick);
  if (!h || !history?.length) return '';
  const now = trialValues(r, r.candidate)[h.scenario]?.[h.metric];
  const points = history
    .map((e) => ({ label: safe(String(e.createdAt ?? '').slice(5, 10) || '?'), value: e.medians?.[h.scenario]?.[h.metric] }))
    .filter((p): p is { label: string; value: number } => typeof p.value === 'number' && Number.isFinite(p.value))
    .slice(-MAX_POINTS);
  if (now?.length) points.push({ label: 'this run', value: median(now) });
  if (points.length < 2) return '';
  const def = metricDef(h.metric);
  return mermaidLine(
    `### Trend: ${md(h.scenario)} ${md(def.label)} (median${def.unit ? ` ${md(def.unit)}` : ''}, stored baseline history${now?.length ? ' and this run' : ''})`,
    `${h.scenario} ${def.label}, median${def.unit ? ` ${def.unit}` : ''}`,
    def.unit || h.metric,
    points,
  );
}

/** A heading and one Mermaid line chart of labelled points. */
function mermaidLine(heading: string, title: string, yLabel: string, points: Array<{ label: string; value: number }>): string {
  return [
    heading,
    '```mermaid',
    'xychart-beta',
    `  title "${safe(title)}"`,
    `  x-axis [${points.map((p) => `"${safe(p.label)}"`).join(', ')}]`,
    `  y-axis "${safe(yLabel)}"`,
    `  line [${points.map((p) => round(p.value)).join(', ')}]`,
    '```',
    '',
  ].join('\n');
}

const signed = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x * 100).toFixed(1)} %`;
/** Series charted at most in the Markdown (all of them are in the HTML report). */
const MAX_SERIES = 4;

/** A nightly run's section: new steps first (with the nights around them and the bisect command),
 *  then each gating metric's series over the newest nights, with the steps found in it. */
export function nightlySection(n: NightlySummary): string {
  const night = (t: string) => md(t.slice(0, 16).replace('T', ' '));
  const pointOf = (scenario: string, metric: string, t: string) => n.series.find((x) => x.scenario === scenario && x.metric === metric)?.points.find((p) => p.createdAt === t);
  const nightText = (scenario: string, metric: string, t: string) => {
    const p = pointOf(scenario, metric, t);
    return `${night(t)}${p?.image ? ` ${md(p.image)}` : ''}${p?.revision ? ` (${md(p.revision.slice(0, 12))})` : ''}`;
  };
  const lines = [`### Nightly history: ${n.nights} night${n.nights === 1 ? '' : 's'} in ${md(n.file)}`, ''];
  if (n.newSteps.length) {
    lines.push(
      `**${n.newSteps.length} new step${n.newSteps.length === 1 ? '' : 's'}** (E-divisive means, permutation test):`,
      '',
      '| Scenario | Metric | Series | Step | Last night before | First night after | p |',
      '|---|---|---|--:|---|---|--:|',
      ...n.newSteps.map(
        (s) =>
          `| ${md(s.scenario)} | ${md(metricDef(s.metric).label)} | ${s.series === 'ratio' ? 'paired ratio' : 'median'} | ${s.worse ? '🔴' : '🟢'} ${signed(s.magnitude)} | ${nightText(s.scenario, s.metric, s.before)} | ${nightText(s.scenario, s.metric, s.at)} | ${s.pValue.toFixed(4)} |`,
      ),
      '',
      ...n.bisect.flatMap((b) => [`To search between them (${md(b.scenario)} ${md(metricDef(b.metric).label)}):`, '```sh', b.command, '```', ...(b.note ? [md(b.note), ''] : [''])]),
    );
  } else lines.push("No new step in any gating metric's series.", '');
  for (const x of n.series.slice(0, MAX_SERIES)) {
    const def = metricDef(x.metric);
    const pts = x.points.slice(-MAX_POINTS).map((p) => ({ label: p.createdAt.slice(5, 10), value: x.series === 'ratio' ? (p.value - 1) * 100 : p.value }));
    const steps = x.steps.map((s) => `${s.isNew ? 'new' : 'known'} step ${signed(s.magnitude)} at ${night(s.at)}`).join('; ');
    if (pts.length >= 2) {
      lines.push(
        mermaidLine(
          `#### ${md(x.scenario)} ${md(def.label)}: ${x.series === 'ratio' ? 'Δ % against the reference broker, paired' : `median${def.unit ? ` ${md(def.unit)}` : ''}`}${steps ? ` — ${steps}` : ''}`,
          `${x.scenario} ${def.label}`,
          x.series === 'ratio' ? 'delta %' : def.unit || x.metric,
          pts,
        ),
      );
    }
  }
  if (n.series.length > MAX_SERIES) lines.push(`_${n.series.length - MAX_SERIES} more series in the HTML report._`, '');
  for (const note of n.notes) lines.push(`> ${md(note)}`, '');
  return lines.join('\n');
}
