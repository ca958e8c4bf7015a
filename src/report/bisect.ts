// A bisect's report in every format — Markdown (job summary, comment), a terminal table, and a
// self-contained HTML page with the probes charted — from a BisectReport (src/compare/bisect.ts):
// the headline (the first bad image, the images it could be, no regression between the ends, or
// where a stopped search stands), what the ends check measured and how later steps were judged,
// every step (image, outcome, verdict, ratio with its CI, pairs, time), the culprit and the commit
// range it stands for. All user text goes through md() / html().
import type { BisectReport, BisectStep } from '../schema/types';
import { metricDef } from '../metrics/definitions';
import { calibrationText } from '../compare/bisect';
import { html as h, md } from './escape';
import { pct } from './format';
import { paint } from './terminal';
import type { StepsChart } from './charts-data';
import { CHARTS_JS } from './charts-client';
import { inlineSafe, uplotAssets } from './charts-assets';
import { HTML_CSS } from './html-style';
import { jsonScript } from './html';

const OUTCOME_ICON: Record<BisectStep['outcome'], string> = { good: '✅', bad: '❌', undecided: '❔', skipped: '⏭️' };
const STATE_ICON: Record<BisectReport['status']['state'], string> = { found: '🎯', ambiguous: '❔', running: '⏸️', 'no-regression': '➖' };
/** The image cell of a step: the ends check says so. */
const stepImage = (x: BisectStep, code: (s: string) => string) => `${code(x.image)} (${x.index + 1}${x.ends ? ', the ends check' : ''})`;
const short = (sha?: string) => (sha ? sha.slice(0, 12) : '');
const minutes = (s: number) => `${(s / 60).toFixed(1)} min`;

/** "−27.5 % [−37.1, −19.3]" for a step's headline comparison. */
export function stepDelta(x: Pick<BisectStep, 'ratio' | 'ciLow' | 'ciHigh'>): string {
  if (x.ratio === null || x.ratio === undefined) return '–';
  if (x.ciLow == null || x.ciHigh == null) return pct(x.ratio);
  const b = (r: number) => ((r - 1) * 100).toFixed(1).replace('-', '−');
  return `${pct(x.ratio)} [${b(x.ciLow)}, ${b(x.ciHigh)}]`;
}

/** Image k of n, with its commit when known: "my/rabbitmq:sha-ab12… (5 of 8, ab12cd34ef56 Fix x)". */
function imageText(r: BisectReport, i: number, withSubject = true): string {
  const img = r.state.images[i];
  const commit = img.commit ? `, ${short(img.commit)}${withSubject && img.subject ? ` ${img.subject}` : ''}` : '';
  return `${img.image} (${i + 1} of ${r.state.images.length}${commit})`;
}

/** The result in one sentence, plain text. */
export function bisectHeadline(r: BisectReport): string {
  const st = r.status;
  if (st.state === 'found') return `first bad image: ${imageText(r, st.culprit!)}`;
  if (st.state === 'no-regression') {
    const ends = r.state.steps.findLast((x) => x.ends && x.outcome === 'good');
    const delta = ends ? ` (${ends.metric ? `${metricText(ends)} ` : ''}${stepDelta(ends)})` : '';
    return `no regression between the ends: ${imageText(r, st.firstBad, false)} is not significantly worse than ${imageText(r, 0, false)}${delta}, so there is nothing to search`;
  }
  if (st.state === 'ambiguous') {
    const why = (i: number) => (st.skipped.includes(i) ? ' — skipped' : st.undecided.includes(i) ? ' — undecided' : '');
    return `the first bad image is one of: ${st.suspects.map((i) => `${r.state.images[i].image}${why(i)}`).join(', ')}`;
  }
  return `stopped (${r.stopped ?? 'not finished'}): the first bad image is between ${r.state.images[st.lastGood + 1]?.image} and ${r.state.images[st.firstBad].image} (images ${st.lastGood + 2}–${st.firstBad + 1}); run the same command again to resume`;
}

/** What was searched, and what it cost. */
function scopeText(r: BisectReport): string {
  const s = r.state;
  const n = s.images.length;
  const bound = Math.ceil(Math.log2(n)) + 1;
  const skips = s.steps.filter((x) => x.outcome === 'skipped').length;
  return (
    `${n} images from ${s.images[0].image} (known good) to ${s.images[n - 1].image} (known bad), each step a same-run paired A/B against the good end ` +
    `on scenarios ${s.scenarios}${s.range ? `; the images of ${s.range.spec} (first-parent commits, template ${s.range.template})` : ''}. ` +
    `${r.status.verdicts} verdict${r.status.verdicts === 1 ? '' : 's'}${skips ? ` and ${skips} skip${skips === 1 ? '' : 's'}` : ''} in ${minutes(s.seconds)} (a bisect of ${n} images needs at most ⌈log₂ ${n}⌉ + 1 = ${bound} without repeats` +
    `${s.steps.some((x) => x.ends) ? ', the ends check included' : ''}).` +
    (r.status.calibration ? ` The ends check: ${calibrationText(r.status.calibration)}.` : '')
  );
}

function metricText(x: BisectStep): string {
  return x.metric ? `${x.scenario} ${metricDef(x.metric).label}` : '';
}

function designText(x: BisectStep): string {
  return x.looks ? `looks ${x.looks.join(', ')}` : x.repetitions ? `${x.repetitions} pairs fixed` : '';
}

/** The commits the culprit stands for, as Markdown lines. */
function commitLines(r: BisectReport, code: (s: string) => string, text: (s: string) => string): string[] {
  const st = r.status;
  const good = r.state.images[st.lastGood];
  const bad = r.state.images[st.firstBad];
  if (!good.commit || !bad.commit) return [];
  const c = r.commits;
  const head = c
    ? `It stands for ${code(`${short(good.commit)}..${short(bad.commit)}`)}: ${c.count} commit${c.count === 1 ? '' : 's'}${c.count > 1 && st.state === 'found' ? ' (a merge brings in its branch)' : ''}:`
    : `It stands for the commits ${code(`${short(good.commit)}..${short(bad.commit)}`)} (git log ${short(good.commit)}..${short(bad.commit)}).`;
  return [head, ...(c?.list ?? []).slice(0, 20).map((x) => `- ${code(short(x.sha))} ${text(x.subject)}`), ...(c && c.count > 20 ? [`- … and ${c.count - 20} more`] : [])];
}

export function renderBisectMarkdown(r: BisectReport, o: { name: string; runUrl?: string }): string {
  const st = r.status;
  const icon = STATE_ICON[st.state];
  const code = (s: string) => `\`${s.replace(/`/g, '')}\``;
  const rows = r.state.steps.map(
    (x, k) =>
      `| ${k + 1} | ${stepImage(x, code)} | ${x.attempt} | ${OUTCOME_ICON[x.outcome]} ${x.outcome}${x.verdict ? ` (${x.verdict})` : ''} | ${stepDelta(x)} | ${md(metricText(x)) || '–'} | ${x.pairs ?? '–'} | ${minutes(x.seconds)} |`,
  );
  const notes = r.state.steps.map((x, k) => (x.note ? `- step ${k + 1} (${code(x.image)}): ${md(x.note.length > 400 ? `${x.note.slice(0, 400)}…` : x.note)}` : '')).filter(Boolean);
  return [
    `## ${icon} ${md(o.name)} bisect: ${md(bisectHeadline(r))}`,
    '',
    md(scopeText(r)),
    '',
    ...(st.state === 'found' || st.state === 'ambiguous' ? commitLines(r, code, md) : []),
    '',
    '### Steps',
    '| # | Image (position) | Attempt | Outcome (verdict) | Δ [CI] | Metric | Pairs | Time |',
    '|--:|---|--:|---|--:|---|--:|--:|',
    ...(rows.length ? rows : ['| – | _no step yet_ | | | | | | |']),
    '',
    ...(notes.length ? ['<details><summary>Why steps were skipped or undecided</summary>', '', ...notes, '', '</details>', ''] : []),
    `Outcome: ✅ good = verdict pass against the good end; ❌ bad = fail; ❔ undecided = warn or inconclusive (the image is A/B'd again with a wider cap, up to ${r.state.attempts} times, never guessed); ⏭️ skipped = the image could not be pulled or started.`,
    o.runUrl ? `\n[Workflow run](${o.runUrl})` : '',
    '',
  ].join('\n');
}

export function bisectTerminal(r: BisectReport, color: boolean): string {
  const c = paint(color);
  const oc: Record<string, string> = { good: '32', bad: '1;31', undecided: '33', skipped: '2' };
  const head = ['#', 'Image', 'Pos', 'Try', 'Outcome', 'Verdict', 'Δ [CI]', 'Metric', 'Pairs', 'Time'];
  const rows = r.state.steps.map((x, k) => [
    String(k + 1),
    x.image,
    `${x.index + 1}${x.ends ? ' (ends)' : ''}`,
    String(x.attempt),
    x.outcome,
    x.verdict ?? '–',
    stepDelta(x),
    metricText(x) || '–',
    String(x.pairs ?? '–'),
    minutes(x.seconds),
  ]);
  const w = head.map((hd, i) => Math.max(hd.length, ...rows.map((row) => row[i].length)));
  const pad = (row: string[]) => row.map((s, i) => ([0, 2, 3, 6, 8, 9].includes(i) ? s.padStart(w[i]) : s.padEnd(w[i])));
  const st = r.status;
  const title = st.state === 'found' ? c('1;31', '✘ FOUND') : st.state === 'ambiguous' ? c('33', '? AMBIGUOUS') : st.state === 'no-regression' ? c('32', '– NO REGRESSION') : c('2', '… STOPPED');
  const commits =
    st.state === 'found' || st.state === 'ambiguous'
      ? commitLines(
          r,
          (s) => s,
          (s) => s,
        )
      : [];
  return [
    `${title}  ${bisectHeadline(r)}`,
    scopeText(r),
    ...commits,
    '',
    c('1', pad(head).join('  ').trimEnd()),
    ...rows.map((row, k) => {
      const cells = pad(row);
      cells[4] = c(oc[r.state.steps[k].outcome], cells[4]);
      return cells.join('  ').trimEnd();
    }),
    ...r.state.steps.map((x, k) => (x.note ? `  step ${k + 1}: ${x.note.length > 300 ? `${x.note.slice(0, 300)}…` : x.note}` : '')).filter(Boolean),
    '',
  ].join('\n');
}

/** The probes as a chart: each tested image's ratio with its CI (y: Δ %), by position; the culprit marked. */
export function bisectChart(r: BisectReport): StepsChart {
  const n = r.state.images.length;
  const last = new Map<number, BisectStep>();
  for (const x of r.state.steps) last.set(x.index, x);
  const at = (i: number, f: (x: BisectStep) => number | null | undefined) => {
    const x = last.get(i);
    const v = x && f(x);
    return v == null ? null : (v - 1) * 100;
  };
  const kinds = Array.from({ length: n }, (_, i) => {
    const x = last.get(i);
    return !x ? 'other' : x.outcome === 'good' ? 'good' : x.outcome === 'bad' ? 'bad' : x.outcome === 'skipped' ? 'skip' : 'other';
  });
  const st = r.status;
  const metric = r.state.steps.find((x) => x.metric);
  return {
    type: 'steps',
    title: `Δ % against the good end per image${metric ? ` (${metricText(metric)}, the step's headline metric)` : ''}`,
    unit: 'Δ %',
    labels: r.state.images.map((img, i) => `${i + 1}${img.commit ? ` ${short(img.commit).slice(0, 7)}` : ''}`),
    values: Array.from({ length: n }, (_, i) => at(i, (x) => x.ratio)),
    lo: Array.from({ length: n }, (_, i) => at(i, (x) => x.ciLow)),
    hi: Array.from({ length: n }, (_, i) => at(i, (x) => x.ciHigh)),
    kinds,
    line: false,
    ref: { value: 0, label: 'the good end' },
    marks: st.state === 'found' ? [{ at: st.culprit!, label: 'first bad' }] : st.state === 'ambiguous' ? [{ at: st.suspects[0], label: 'first bad is from here' }] : [],
  };
}

export function renderBisectHtml(r: BisectReport, o: { name?: string; runUrl?: string } = {}): string {
  const assets = uplotAssets();
  const name = o.name ?? 'rabbitmq-perf-gate';
  const st = r.status;
  const cls = st.state === 'found' ? 'fail' : st.state === 'ambiguous' ? 'warn' : st.state === 'no-regression' ? 'pass' : 'inconclusive';
  const rows = r.state.steps
    .map(
      (x, k) =>
        `<tr><td class="n">${k + 1}</td><td><code>${h(x.image)}</code></td><td class="n">${x.index + 1}${x.ends ? ' (ends)' : ''}</td><td class="n">${x.attempt}</td>` +
        `<td class="t-${x.outcome === 'good' ? 'pass' : x.outcome === 'bad' ? 'fail' : 'inconclusive'}">${h(x.outcome)}${x.verdict ? ` (${h(x.verdict)})` : ''}</td><td class="n">${h(stepDelta(x))}</td>` +
        `<td>${h(metricText(x) || '–')}</td><td class="n">${h(x.pairs ?? '–')}</td><td>${h(designText(x))}</td><td class="n">${h(minutes(x.seconds))}</td><td class="small">${h(x.note ?? '')}</td></tr>`,
    )
    .join('');
  const commits =
    st.state === 'found' || st.state === 'ambiguous'
      ? commitLines(
          r,
          (s) => s,
          (s) => s,
        )
      : [];
  const runLink = o.runUrl && /^https?:\/\//.test(o.runUrl) ? ` · <a href="${h(o.runUrl)}">workflow run</a>` : '';
  const images = r.state.images
    .map((img, i) => `<tr><td class="n">${i + 1}</td><td><code>${h(img.image)}</code></td><td><code>${h(short(img.commit))}</code> ${h(img.subject ?? '')}</td></tr>`)
    .join('');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">
<meta name="viewport" content="width=device-width,initial-scale=1"><title>${h(name)} bisect: ${h(st.state)}</title>
<style>${inlineSafe(assets.css)}</style><style>${HTML_CSS}</style></head>
<body><main>
<header><h1><span class="badge v-${cls}">${h(st.state)}</span>${h(name)} bisect: ${h(bisectHeadline(r))}</h1>
<div class="sub">${h(r.createdAt)}${runLink}</div>
<p>${h(scopeText(r))}</p>
${
  commits.length
    ? `<p>${h(commits[0])}</p><ul>${commits
        .slice(1)
        .map((l) => `<li>${h(l.replace(/^- /, ''))}</li>`)
        .join('')}</ul>`
    : ''
}
</header>
<section id="chart"><h2>Probes</h2><div class="small muted">each tested image's ratio against the good end with its CI (the step's headline gating metric); green good, red bad, grey skipped, blue undecided</div><div class="chart" data-chart="bisect"></div></section>
<section id="steps"><h2>Steps</h2><table><thead><tr><th>#</th><th>Image</th><th>Position</th><th>Attempt</th><th>Outcome (verdict)</th><th>Δ [CI]</th><th>Metric</th><th>Pairs</th><th>Design</th><th>Time</th><th>Note</th></tr></thead><tbody>${rows || '<tr><td colspan="11">no step yet</td></tr>'}</tbody></table></section>
<section id="images"><h2>Images searched</h2><table><thead><tr><th>#</th><th>Image</th><th>Commit</th></tr></thead><tbody>${images}</tbody></table></section>
<p class="small muted">${h(r.tool.name)} ${h(r.tool.version)} · self-contained report: charts drawn with uPlot, no network access.</p>
</main>
<script type="application/json" id="perf-data">${jsonScript({ targets: [], charts: { bisect: bisectChart(r) } })}</script>
<script>${inlineSafe(assets.js)}</script>
<script>${inlineSafe(CHARTS_JS)}</script>
</body></html>
`;
}
