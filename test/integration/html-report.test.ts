// The HTML report in headless Chromium with every network request blocked: built by the bundled
// CLI from a real run against the local broker (one target, stored-baseline mode) and from a
// two-target A/B report derived from it. Every chart must draw data (coloured pixels on its
// canvas), with no console errors and no request leaving the page; screenshots go to
// test-artifacts/. The bundled CLI must also write the report with no node_modules around. A
// nightly run's report draws its history's series with the step found in it, and a bisect's page
// its probes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type BrowserContext } from 'playwright-core';
import type { RunReport, TrialResult } from '../../src/schema/types';
import { compareSamples, countChanges, overallVerdict } from '../../src/compare/compare';
import { trialValues } from '../../src/compare/baseline-file';
import { decode, encode, newHistogram } from '../../src/metrics/histogram';
import { metricDef } from '../../src/metrics/definitions';
import { AMQP_URL } from '../support/broker';
import type { BisectReport, NightlyHistory } from '../../src/schema/types';
import { detectSteps, nightlySummary } from '../../src/compare/nightly';
import { bisectStatus, newState } from '../../src/compare/bisect';
import { renderBisectHtml } from '../../src/report/bisect';

const ROOT = resolve(import.meta.dirname, '../..');
const ARTIFACTS = join(ROOT, 'test-artifacts');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const tmp = mkdtempSync(join(tmpdir(), 'perf-gate-html-'));
const fast = ['--scenarios', 'smoke', '--repetitions', '3', '--duration', '2', '--warmup', '1', '--broker-url', AMQP_URL, '--baseline-file', join(tmp, 'baseline.json')];

function cli(args: string[], cwd = tmp, script = join(ROOT, 'dist/cli.js')) {
  const r = spawnSync(process.execPath, [script, ...args], { cwd, encoding: 'utf8', timeout: 180_000, env: { PATH: process.env.PATH ?? '', HOME: tmp } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A same-run A/B report from a real one: five trials per side, the reference clearly faster. */
function abReport(real: RunReport): RunReport {
  const mine = real.trials.filter((t) => t.target === real.candidate && t.valid);
  const jitter = (t: TrialResult, f: number): TrialResult => ({
    ...t,
    metrics: Object.fromEntries(Object.entries(t.metrics).map(([k, v]) => [k, v * f])),
    series: t.series.map((p) => ({ ...p, published: p.published * f, confirmed: p.confirmed * f, consumed: p.consumed * f })),
  });
  const cand = [...mine, jitter(mine[0], 0.97), jitter(mine[1], 1.03)].map((t, i) => ({ ...t, trial: i }));
  const scaleHist = (e: string, f: number) => {
    const h = decode(e);
    const out = newHistogram();
    for (let q = 0; q < 1000; q++) out.recordValueWithCount(Math.max(1, Math.round(h.getValueAtPercentile((q + 0.5) / 10) * f)), Math.max(1, Math.round(h.totalCount / 1000)));
    return encode(out);
  };
  // The reference: the candidate's median per metric, 25 % faster and 30 % lower latency, ±2 % spread.
  const med = (k: string) => [...cand.map((t) => t.metrics[k])].sort((x, y) => x - y)[2];
  const ref = cand.map(
    (t, i): TrialResult => ({
      ...t,
      target: 'baseline',
      metrics: Object.fromEntries(Object.keys(t.metrics).map((k) => [k, med(k) * (metricDef(k).kind === 'latency' ? 0.7 : 1.25) * (1 + (i - 2) / 100)])),
      series: t.series.map((p) => ({ ...p, published: p.published * 1.25, confirmed: p.confirmed * 1.25, consumed: p.consumed * 1.25 })),
      histograms: Object.fromEntries(Object.entries(t.histograms).map(([k, v]) => [k, scaleHist(v, 0.7)])),
    }),
  );
  const trials = cand.flatMap((t, i) => [t, ref[i]]).map((t, order) => ({ ...t, order }));
  const base = real.targets[0];
  const targets = [base, { ...base, id: 'baseline', label: 'rabbitmq 3.10.8 (reference)' }];
  const comparisons = compareSamples({
    scenarios: real.scenarios,
    against: 'baseline',
    candidate: { label: base.label, values: trialValues({ trials }, real.candidate) },
    reference: { label: targets[1].label, values: trialValues({ trials }, 'baseline') },
  });
  return {
    ...real,
    targets,
    trials,
    comparisons,
    repetitions: 5,
    verdict: overallVerdict(comparisons),
    ...countChanges(comparisons),
    decidedBy: `same-run A/B against ${targets[1].label}: both targets ran interleaved on this runner`,
  };
}

interface ChartCheck {
  id: string;
  rendered: string | null;
  width: number;
  coloured: number;
  dataUrl: number;
}

let context: BrowserContext;
let single: RunReport;
/** The A/B report's HTML, made by the CLI from ab.json (one test checks it, another compares with it). */
let made: ReturnType<typeof cli>;
beforeAll(async () => {
  expect(existsSync(join(ROOT, 'dist/cli.js')), 'run `npm run bundle` first').toBe(true);
  const refresh = cli(['refresh', ...fast, '--out', join(tmp, 'refresh')]);
  expect(refresh.code, refresh.stderr).toBe(0);
  const run = cli(['run', ...fast, '--json', '--out', join(tmp, 'run'), '--html', join(tmp, 'single.html')]);
  expect(run.code, run.stderr).toBe(0);
  single = JSON.parse(run.stdout);
  writeFileSync(join(tmp, 'ab.json'), JSON.stringify(abReport(single)));
  made = cli(['report', join(tmp, 'ab.json'), '--html', join(tmp, 'ab.html')]);
  context = await chromium.launchPersistentContext(mkdtempSync(join(tmp, 'chromium-profile-')), {
    executablePath: CHROMIUM,
    viewport: { width: 1280, height: 900 },
    offline: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});
afterAll(async () => {
  await context?.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** Runs in the page (a string: the project's types have no DOM): each chart's canvas, and how many
 *  of its pixels are coloured (plotted data; axes, grid and text are neutral grey). */
const INSPECT = `[...document.querySelectorAll('[data-chart]')].map((el) => {
  const cv = el.querySelector('canvas');
  let coloured = 0;
  if (cv) {
    const d = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
    for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && Math.max(d[i], d[i + 1], d[i + 2]) - Math.min(d[i], d[i + 1], d[i + 2]) >= 40) coloured++;
  }
  return { id: el.dataset.chart, rendered: el.getAttribute('data-rendered'), width: cv ? cv.width : 0, coloured, dataUrl: cv ? cv.toDataURL().length : 0 };
})`;

/** Opens the file with only that file allowed through, and inspects every chart's canvas. */
async function open(file: string, screenshot: string) {
  const page = await context.newPage();
  const url = pathToFileURL(file).href;
  const problems: string[] = [];
  const blocked: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  await page.route('**', (r) => {
    if (r.request().url() === url) return r.continue();
    blocked.push(r.request().url());
    return r.abort();
  });
  await page.goto(url, { waitUntil: 'load' });
  const charts = (await page.evaluate(INSPECT)) as ChartCheck[];
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, screenshot), fullPage: true });
  const text = await page.textContent('body');
  await page.close();
  return { charts, problems, blocked, text: text ?? '' };
}

/** The charts of the one scenario: throughput, two percentile plots, deltas, one scatter per gating metric. */
function expectedCharts(r: RunReport): string[] {
  return ['s0-throughput', 's0-latency', 's0-confirm_latency', 's0-delta0', ...r.scenarios[0].gate.map((m) => `s0-scatter-${m}`)];
}

function expectAllDrawn(charts: ChartCheck[], ids: string[]) {
  expect(charts.map((c) => c.id).sort()).toEqual([...ids].sort());
  for (const c of charts) {
    expect(c.rendered, c.id).toBe('1');
    expect(c.width, c.id).toBeGreaterThan(200);
    expect(c.coloured, `${c.id}: coloured pixels of plotted data`).toBeGreaterThan(150);
    expect(c.dataUrl, c.id).toBeGreaterThan(3000);
  }
}

describe('HTML report in headless Chromium, no network', () => {
  it('one target (stored-baseline mode, a real run): every chart draws data', async () => {
    expect(single.targets).toHaveLength(1);
    expect(single.comparisons.some((c) => c.against === 'stored' && c.ratio !== null)).toBe(true);
    const r = await open(join(tmp, 'single.html'), 'html-report-single.png');
    expect(r.problems).toEqual([]);
    expect(r.blocked).toEqual([]);
    expectAllDrawn(r.charts, expectedCharts(single));
    expect(r.text).toContain('vs the stored baseline');
    expect(r.text).toContain('3.10.8');
    expect(r.text).toContain(single.fingerprint.cpuModel);
  });

  it('two targets (same-run A/B): both targets in every chart, delta bars with CIs', async () => {
    const html = join(tmp, 'ab.html');
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toContain('| Scenario | Metric |');
    const ab: RunReport = JSON.parse(readFileSync(join(tmp, 'ab.json'), 'utf8'));
    expect(ab.comparisons.filter((c) => c.gating && c.ciLow !== null)).toHaveLength(ab.scenarios[0].gate.length);
    const r = await open(html, 'html-report.png');
    expect(r.problems).toEqual([]);
    expect(r.blocked).toEqual([]);
    expectAllDrawn(r.charts, expectedCharts(single));
    expect(r.text).toContain('rabbitmq 3.10.8 (reference)');
    expect(r.text).toContain('(same run)');
  });

  it("a nightly run: the history series with its step, next to the run's own charts", async () => {
    const day = (k: number) => new Date(Date.UTC(2026, 0, 1 + k)).toISOString();
    const h: NightlyHistory = {
      schemaVersion: 1,
      kind: 'rabbitmq-perf-gate/nightly-history',
      steps: [],
      entries: Array.from({ length: 40 }, (_, k) => {
        const ratio = (k < 30 ? 1 : 0.9) * (1 + 0.01 * Math.sin(k * 2.3));
        return {
          createdAt: day(k),
          medians: {},
          reference: { image: 'ref', imageId: 'sha256:r', label: 'ref' },
          ratios: { one_fast: { consumed_rate: { ratio, ciLow: ratio * 0.98, ciHigh: ratio * 1.02, pairs: 24 } } },
        };
      }),
    };
    const d = detectSteps(h, day(39));
    expect(d.newSteps.map((x) => x.at)).toEqual([day(30)]);
    writeFileSync(join(tmp, 'nightly.json'), JSON.stringify({ ...single, nightly: nightlySummary(d, '.github/rabbitmq-perf/history.json') }));
    const made = cli(['report', join(tmp, 'nightly.json'), '--html', join(tmp, 'nightly.html')]);
    expect(made.code, made.stderr).toBe(0);
    const r = await open(join(tmp, 'nightly.html'), 'html-report-nightly.png');
    expect(r.problems).toEqual([]);
    expect(r.blocked).toEqual([]);
    expectAllDrawn(r.charts, [...expectedCharts(single), 'nightly-0']);
    expect(r.text).toContain('Nightly history: 40 nights');
    expect(r.text).toContain('New steps');
  });

  it('a bisect: its probes charted, the culprit marked, every step in the table', async () => {
    const state = newState({ images: Array.from({ length: 8 }, (_, i) => ({ image: `my/rabbitmq:t${i + 1}`, commit: `${i}${'a'.repeat(39)}`, subject: `commit ${i + 1}` })), scenarios: 'one_fast' });
    const step = (index: number, outcome: 'good' | 'bad' | 'skipped', ratio?: number) => ({
      index,
      image: state.images[index].image,
      attempt: 1,
      outcome,
      seconds: 80,
      startedAt: day0,
      ...(ratio
        ? { verdict: outcome === 'good' ? ('pass' as const) : ('fail' as const), ratio, ciLow: ratio - 0.05, ciHigh: ratio + 0.05, metric: 'consumed_rate', scenario: 'one_fast', pairs: 8 }
        : { note: 'could not be pulled or started' }),
    });
    const day0 = new Date().toISOString();
    state.steps = [step(3, 'good', 1.02), step(5, 'skipped'), step(4, 'bad', 0.6)];
    const report: BisectReport = { kind: 'rabbitmq-perf-gate/bisect', tool: { name: 'rabbitmq-perf-gate', version: 'test' }, createdAt: day0, state, status: bisectStatus(state) };
    expect(report.status).toMatchObject({ state: 'found', culprit: 4 });
    writeFileSync(join(tmp, 'bisect.html'), renderBisectHtml(report));
    const r = await open(join(tmp, 'bisect.html'), 'html-report-bisect.png');
    expect(r.problems).toEqual([]);
    expect(r.blocked).toEqual([]);
    expectAllDrawn(r.charts, ['bisect']);
    expect(r.text).toContain('first bad image: my/rabbitmq:t5');
    expect(r.text).toContain('skipped');
  });

  it('the bundled CLI writes the same report with no node_modules anywhere near it', () => {
    const bare = mkdtempSync(join(tmpdir(), 'perf-gate-bare-'));
    for (const d of ['dist', 'scenarios', 'schema', 'package.json']) cpSync(join(ROOT, d), join(bare, d), { recursive: true });
    const r = cli(['report', join(tmp, 'ab.json'), '--html', join(bare, 'out.html')], bare, join(bare, 'dist/cli.js'));
    expect(r.code, r.stderr).toBe(0);
    expect(made.code, made.stderr).toBe(0);
    const html = readFileSync(join(bare, 'out.html'), 'utf8');
    expect(html).toContain('uPlot');
    expect(html).toBe(readFileSync(join(tmp, 'ab.html'), 'utf8'));
    rmSync(bare, { recursive: true, force: true });
  });
});
