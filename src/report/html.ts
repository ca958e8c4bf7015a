// The self-contained HTML report of a RunReport: one file with uPlot, its CSS, the chart data and
// the drawing code inlined, and a Content-Security-Policy that forbids every network request.
// A nightly run's history first (each gating metric's series with its change points); then per
// scenario: throughput over time, latency percentile curves, A/B delta bars with CIs, trial
// scatter for the gating metrics, the comparison table, the broker evidence ("Inside the
// broker") and a failing scenario's differential flame graph; then targets, runner fingerprint
// and errors. Every piece of report text goes through html() (attributes too); chart labels are data.
import type { Comparison, RunReport, TargetInfo, Verdict } from '../schema/types';
import { metricDef } from '../metrics/definitions';
import { html as h } from './escape';
import { ANSWER_WORD, answerCell, ciLabel, delta, headlineText, nText, num, ruleText, runAnswer, sequentialText, storedPowerText } from './format';
import { baselineHint, measuredRows, nothingToCompare } from './measured';
import { effectiveLines } from './effective';
import { evidenceGaps, significant } from './evidence';
import { evidenceDef } from '../metrics/evidence';
import { flameSection } from './flame';
import { chartData, type ChartData, type ScenarioCharts } from './charts-data';
import { CHARTS_JS } from './charts-client';
import { inlineSafe, uplotAssets } from './charts-assets';
import { HTML_CSS } from './html-style';
import { machineText } from './machine';

export interface HtmlOptions {
  /** Gate name shown in the title (the action's `name` input). */
  name?: string;
  /** Link to the workflow run, shown when it is an http(s) URL. */
  runUrl?: string;
}

const VERDICTS: Verdict[] = ['pass', 'warn', 'fail', 'inconclusive'];
const CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";
const verdictOf = (v: unknown): Verdict => (VERDICTS.includes(v as Verdict) ? (v as Verdict) : 'inconclusive');

/** The measured numbers, when there is nothing to compare them with (src/report/measured.ts). */
function measuredSection(r: RunReport): string {
  if (!nothingToCompare(r)) return '';
  const rows = measuredRows(r)
    .map(
      (m) =>
        `<tr><td>${h(m.target)}</td><td>${h(m.scenario)}</td><td>${h(m.label)}</td><td class="num">${h(num(m.median, m.unit))}</td>` +
        `<td class="num">${h(num(m.min))} – ${h(num(m.max))}</td><td class="num">${m.n} of ${m.trials}</td></tr>`,
    )
    .join('');
  return (
    `<section id="measured"><h2>Measured</h2><table><thead><tr><th>Target</th><th>Scenario</th><th>Metric</th><th>Median</th><th>Min – max</th><th>Valid trials</th></tr></thead>` +
    `<tbody>${rows}</tbody></table><p class="small muted">${h(baselineHint(r).replace(/`/g, ''))}</p></section>`
  );
}

/** JSON for a <script type="application/json"> element: no way out of the element. */
export function jsonScript(data: unknown): string {
  return JSON.stringify(data)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

function chart(id: string | undefined, title: string, empty: string, note = ''): string {
  const head = `<h3>${h(title)}</h3>${note ? `<div class="small muted">${h(note)}</div>` : ''}`;
  return id ? `<div>${head}<div class="chart" data-chart="${h(id)}"></div></div>` : `<div>${head}<p class="muted">${h(empty)}</p></div>`;
}

function comparisonTable(cs: Comparison[], ci: string): string {
  if (!cs.length) return '';
  const rows = cs
    .map((c) => {
      const v = verdictOf(c.verdict);
      const cls = c.change === 'better' ? 'better' : c.change === 'worse' ? 'worse' : '';
      return (
        `<tr><td>${h(metricDef(c.metric).label)}${c.gating ? ' ★' : ''}</td><td>${h(c.against === 'stored' ? 'stored baseline' : c.baselineLabel)}</td>` +
        `<td class="n">${h(num(c.baselineMedian, c.unit))}</td><td class="n">${h(num(c.candidateMedian, c.unit))}</td>` +
        `<td class="n ${cls}">${h(delta(c))}</td><td class="n">${h(nText(c))}</td><td class="n">${h(num(c.pAdjusted))}</td>` +
        `<td class="t-${v}" title="${h(c.reason)}">${h(answerCell(c))}${c.gating ? '' : ' (info)'}</td></tr>`
      );
    })
    .join('');
  return `<table><thead><tr><th>Metric</th><th>Against</th><th>Baseline</th><th>Now</th><th>Δ [${h(ci)}]</th><th>n</th><th>p (Holm)</th><th>Answer</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** The scenario's broker evidence, paired like the metrics (never gating); bold: the interval excludes 1. */
function evidencePanel(r: RunReport, scenario: string): string {
  const cs = (r.evidence ?? []).filter((c) => c.scenario === scenario);
  if (!cs.length) return '';
  const rows = cs
    .map((c) => {
      const cls = !significant(c) ? '' : (c.direction === 'lower' ? c.ratio! > 1 : c.ratio! < 1) ? 'worse' : 'better';
      return (
        `<tr><td title="${h(evidenceDef(c.metric)?.capture ?? '')}">${h(metricDef(c.metric).label)}</td><td>${h(c.baselineLabel)}</td>` +
        `<td class="n">${h(num(c.baselineMedian, c.unit))}</td><td class="n">${h(num(c.candidateMedian, c.unit))}</td>` +
        `<td class="n ${cls}">${significant(c) ? `<b>${h(delta(c))}</b>` : h(delta(c))}</td><td class="n">${h(nText(c))}</td></tr>`
      );
    })
    .join('');
  return (
    `<h3>Inside the broker</h3><div class="small muted">broker evidence over each trial's window, paired like the metrics (90 % CI, never gating); bold: the interval excludes no change; hover a name for how it is captured</div>` +
    `<table><thead><tr><th>Evidence</th><th>Against</th><th>Baseline</th><th>Now</th><th>Δ [90 % CI]</th><th>n</th></tr></thead><tbody>${rows}</tbody></table>`
  );
}

/** Each target's largest queue processes in the scenario's first round (management API). */
function topQueuesPanel(r: RunReport, scenario: string): string {
  const label = (id: string) => r.targets?.find((t) => t.id === id)?.label ?? id;
  const rows = r.trials
    .filter((t) => t.scenario === scenario && t.topQueues?.length)
    .flatMap((t) =>
      t.topQueues!.map(
        (q) =>
          `<tr><td>${h(label(t.target))}</td><td>${h(q.name)}</td><td class="n">${h(num(q.memoryBytes / 2 ** 20, 'MiB'))}</td>` +
          `<td class="n">${h(num(q.reductions))}</td><td class="n">${h(num(q.reductionsPerSecond))}</td><td class="n">${h(num(q.messages))}</td></tr>`,
      ),
    );
  if (!rows.length) return '';
  return (
    `<h3>Largest queue processes</h3><div class="small muted">first round, as the window closed (management API; its stats lag by up to the broker's statistics interval)</div>` +
    `<table><thead><tr><th>Target</th><th>Queue</th><th>Memory</th><th>Reductions</th><th>Reductions/s</th><th>Messages</th></tr></thead><tbody>${rows.join('')}</tbody></table>`
  );
}

const deltaKey = (ci: string) =>
  `<div class="key"><span><i class="sw" style="background:#dc2626"></i>fail</span><span><i class="sw" style="background:#d97706"></i>warn</span>` +
  `<span><i class="sw" style="background:#16a34a"></i>better</span><span><i class="sw" style="background:#64748b"></i>no significant change / inconclusive</span>` +
  `<span><i class="tol"></i>tolerance (bad side)</span><span>│ ${h(ci)}</span><span>★ gating metric (faded bars: reported only)</span></div>`;

function scenarioSection(r: RunReport, sc: ScenarioCharts, data: ChartData, i: number): string {
  const s = sc.scenario;
  const cs = r.comparisons.filter((c) => c.scenario === s.id).sort((a, b) => Number(b.gating) - Number(a.gating));
  const trials = r.trials.filter((t) => t.scenario === s.id);
  const invalid = trials.filter((t) => !t.valid);
  const tol = Object.entries(s.tolerances ?? {})
    .map(([m, v]) => `${m} ${Math.round(v * 100)} %`)
    .join(', ');
  const deltas = sc.deltas.map((id) => `<h3>${h((data.charts[id] as { title: string }).title)}</h3>${deltaKey(ciLabel(r))}<div class="chart" data-chart="${h(id)}"></div>`).join('');
  return (
    `<section id="scenario-${i}"><h2>${h(s.id)}</h2><p>${h(s.description)}</p>` +
    `<pre>${h(s.origin?.command || '')}</pre><div class="small muted">from ${h(s.origin?.source)} · warm-up ${h(s.warmupSeconds)} s, measured ${h(s.durationSeconds)} s · ` +
    `gate: ${h((s.gate ?? []).join(', ') || '–')}${tol ? ` · tolerances: ${h(tol)}` : ''} · ${trials.length - invalid.length} of ${trials.length} trials valid</div>` +
    `<div class="grid">${chart(sc.throughput, 'Throughput per second', 'no valid trial recorded a per-second series', 'median of the trials; shaded: min–max consumed; dashed: published')}` +
    (sc.latency.length
      ? sc.latency.map((id) => chart(id, (data.charts[id] as { title: string }).title, '', 'HdrHistogram of all valid trials merged, per target')).join('')
      : chart(undefined, 'Latency percentiles', 'no latency histograms in the valid trials')) +
    `</div>` +
    (deltas || `<h3>A/B deltas</h3><p class="muted">${cs.length ? 'no comparison produced a ratio' : 'nothing to compare with: no stored baseline and no reference target in this run'}</p>`) +
    comparisonTable(cs, ciLabel(r)) +
    evidencePanel(r, s.id) +
    topQueuesPanel(r, s.id) +
    (r.flames ?? [])
      .filter((f) => f.scenario === s.id)
      .map(flameSection)
      .join('') +
    (sc.scatter.length
      ? `<h3>Trials (one dot per trial, in run order)</h3><div class="grid3">${sc.scatter.map((id) => `<div><div class="small">${h((data.charts[id] as { title: string }).title)}</div><div class="chart" data-chart="${h(id)}"></div></div>`).join('')}</div>`
      : '') +
    (invalid.length ? `<h3>Excluded trials</h3><ul>${invalid.map((t) => `<li>${h(t.target)} trial ${t.trial + 1}: ${h(t.invalidReason ?? t.error)}</li>`).join('')}</ul>` : '') +
    `</section>`
  );
}

function targetsTable(targets: TargetInfo[], data: ChartData): string {
  const color = (id: string) => data.targets.find((t) => t.id === id)?.color ?? '#475569';
  const rows = targets
    .map(
      (t) =>
        `<tr><td><i class="sw" style="background:${h(color(t.id))}"></i>${h(t.label)}</td><td>${h(t.id)}</td><td>${h(t.kind)}</td>` +
        `<td>${h(t.rabbitmqVersion)}${t.metadataStore ? `<br><span class="small muted">${h(t.metadataStore)}</span>` : ''}</td><td>${h(t.erlangVersion)}</td><td>${h(t.image ?? '–')}${t.configDigest ? `<br><span class="small muted">config ${h(t.configDigest.slice(0, 19))}</span>` : ''}</td>` +
        `<td><code>${h(t.amqpUrl)}</code><br><code>${h(t.managementUrl)}</code></td>` +
        `<td>${(t.nodes ?? []).map((n) => `${h(n.name)}${n.processors ? `, ${n.processors} cpu` : ''}${n.memLimitBytes ? `, mem limit ${h(num(n.memLimitBytes / 2 ** 30))} GiB` : ''}`).join('<br>') || '–'}</td></tr>`,
    )
    .join('');
  return `<table><thead><tr><th>Target</th><th>Id</th><th>Kind</th><th>RabbitMQ</th><th>Erlang</th><th>Image</th><th>URLs</th><th>Nodes</th></tr></thead><tbody>${rows || '<tr><td colspan="8">none started</td></tr>'}</tbody></table>`;
}

function environment(r: RunReport, data: ChartData): string {
  const f = r.fingerprint ?? ({} as RunReport['fingerprint']);
  const rows: [string, string][] = [
    ['CPU', `${f.cpuModel} (${f.cores} cores)`],
    ['Memory', `${num((f.memoryBytes ?? 0) / 2 ** 30)} GiB`],
    ['OS', f.os],
    ['Kernel', f.kernel],
    ['Node', f.node],
    ['Tool', `${f.tool} ${f.toolVersion}`],
  ];
  const eff = effectiveLines(r);
  const effective = eff.length
    ? `<h2 style="margin-top:16px">Effective configuration, read back from the brokers</h2>` +
      (r.effectDiff?.length ? `<p><b>How they differ in effect:</b></p><ul>${r.effectDiff.map((l) => `<li>${h(l)}</li>`).join('')}</ul>` : '') +
      eff.map((t) => `<h3>${h(t.target)}</h3><ul>${t.lines.map((l) => `<li>${h(l)}</li>`).join('')}</ul>`).join('')
    : '';
  const gaps = evidenceGaps(r);
  const evidence = gaps.length ? `<h2 style="margin-top:16px">Broker evidence not available</h2><ul>${gaps.map((l) => `<li>${h(l)}</li>`).join('')}</ul>` : '';
  return (
    `<section id="environment"><h2>Targets</h2>${targetsTable(r.targets ?? [], data)}${effective}${evidence}<h2 style="margin-top:16px">Runner fingerprint</h2>` +
    `<table><tbody>${rows.map(([k, v]) => `<tr><th style="width:140px">${h(k)}</th><td>${h(v)}</td></tr>`).join('')}</tbody></table></section>`
  );
}

/** A nightly run's history: each gating metric's series with its steps, the new ones first. */
function nightlySection(r: RunReport, data: ChartData): string {
  const n = r.nightly;
  if (!n) return '';
  const pct = (m: number) => `${m >= 0 ? '+' : '−'}${Math.abs(m * 100).toFixed(1)} %`;
  const steps = n.newSteps
    .map(
      (s) =>
        `<li><b>${h(s.scenario)} ${h(metricDef(s.metric).label)}</b>: ${s.worse ? 'worse' : 'better'} by ${h(pct(s.magnitude))} (${s.series === 'ratio' ? 'paired ratio' : 'median'}) between the nights of ${h(s.before)} and ${h(s.at)}, p = ${h(s.pValue.toFixed(4))}</li>`,
    )
    .join('');
  const cmds = n.bisect.map((b) => `<li>${h(b.scenario)} ${h(metricDef(b.metric).label)}: <code>${h(b.command)}</code>${b.note ? `<div class="small muted">${h(b.note)}</div>` : ''}</li>`).join('');
  const charts = data.nightly.map((id) => `<h3>${h((data.charts[id] as { title: string }).title)}</h3><div class="chart" data-chart="${h(id)}"></div>`).join('');
  return (
    `<section id="nightly"><h2>Nightly history: ${n.nights} nights</h2><div class="small muted">${h(n.file)} · change points by E-divisive means with a permutation test; dashed: each segment's mean; red line: a step</div>` +
    (steps ? `<p><b>New steps</b></p><ul>${steps}</ul><p>To search between the nights around each:</p><ul>${cmds}</ul>` : "<p>No new step in any gating metric's series.</p>") +
    n.notes.map((x) => `<p class="small">${h(x)}</p>`).join('') +
    (charts || '<p class="muted">no series yet</p>') +
    `</section>`
  );
}

/** The whole report as one HTML document that needs no network to display. */
export function renderHtml(r: RunReport, o: HtmlOptions = {}): string {
  const data = chartData(r);
  const assets = uplotAssets();
  const name = o.name ?? 'rabbitmq-perf-gate';
  const v = verdictOf(r.verdict);
  const valid = r.trials.filter((t) => t.valid).length;
  const runLink = o.runUrl && /^https?:\/\//.test(o.runUrl) ? ` · <a href="${h(o.runUrl)}">workflow run</a>` : '';
  const swatches = data.targets.map((t) => `<span><i class="sw" style="background:${h(t.color)}"></i>${h(t.label)}${t.id === r.candidate ? ' (candidate)' : ''}</span>`).join('');
  const errors = r.errors?.length ? `<section id="errors"><h2>Errors</h2><ul>${r.errors.map((e) => `<li><b>${h(e.scope)}</b>: ${h(e.message)}</li>`).join('')}</ul></section>` : '';
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="viewport" content="width=device-width,initial-scale=1"><title>${h(name)}: ${h(ANSWER_WORD[runAnswer(r)])} (${h(r.createdAt)})</title>
<style>${inlineSafe(assets.css)}</style><style>${HTML_CSS}</style></head>
<body><main>
<header><h1><span class="badge v-${v}">${h(ANSWER_WORD[runAnswer(r)])}</span>${h(name)}: ${h(headlineText(r))}</h1>
<div class="sub">${h(r.createdAt)} · preset ${h(r.preset)} · mode ${h(r.mode)} · ${h(r.repetitions)} repetitions · seed ${h(r.seed)} · ${h(r.durationSeconds)} s · ${valid} of ${r.trials.length} trials valid${runLink}</div>
${storedPowerText(r) ? `<p><b>${h(storedPowerText(r))}</b></p>` : ''}${sequentialText(r) ? `<p><b>${h(sequentialText(r))}</b></p>` : ''}${r.effectNote ? `<p><b>${h(r.effectNote)}</b></p>` : ''}${r.flameNote ? `<p>${h(r.flameNote)}</p>` : ''}${machineText(r) ? `<p>${h(machineText(r))}</p>` : ''}
<p><b>Decided by:</b> ${h(r.decidedBy)}. <b>Rule:</b> ${h(ruleText(r.comparisons, r.sequential))}</p>
<div class="key">${swatches}</div>
<nav>${r.nightly ? '<a href="#nightly">nightly history</a>' : ''}${r.scenarios.map((s, i) => `<a href="#scenario-${i}">${h(s.id)}</a>`).join('')}<a href="#environment">environment</a>${errors ? '<a href="#errors">errors</a>' : ''}</nav></header>
${nightlySection(r, data)}
${measuredSection(r)}
${data.scenarios.map((sc, i) => scenarioSection(r, sc, data, i)).join('\n')}
${environment(r, data)}
${errors}
<p class="small muted">${h(r.tool?.name)} ${h(r.tool?.version)} · self-contained report: charts drawn with uPlot, no network access.</p>
</main>
<script type="application/json" id="perf-data">${jsonScript({ targets: data.targets, charts: data.charts })}</script>
<script>${inlineSafe(assets.js)}</script>
<script>${inlineSafe(CHARTS_JS)}</script>
</body></html>
`;
}
