// The trend picture in the comment and job summary: a small Mermaid `xychart-beta` line chart of
// one headline metric's median across the stored baseline's history plus the current run.
// Every label is reduced to a safe character set (it goes inside Mermaid's quoted strings).
import type { BaselineHistoryEntry, RunReport } from '../schema/types';
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
  const title = safe(`${h.scenario} ${def.label}, median${def.unit ? ` ${def.unit}` : ''}`);
  return [
    `### Trend: ${md(h.scenario)} ${md(def.label)} (median${def.unit ? ` ${md(def.unit)}` : ''}, stored baseline history${now?.length ? ' and this run' : ''})`,
    '```mermaid',
    'xychart-beta',
    `  title "${title}"`,
    `  x-axis [${points.map((p) => `"${p.label}"`).join(', ')}]`,
    `  y-axis "${safe(def.unit || h.metric)}"`,
    `  line [${points.map((p) => round(p.value)).join(', ')}]`,
    '```',
    '',
  ].join('\n');
}
