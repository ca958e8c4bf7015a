// The HTML report and its chart data on a hand-built two-target report: escaping of hostile
// labels, self-containment (CSP, no external URLs, inlined uPlot), and the numbers behind every
// chart (percentile curve, throughput median and band, delta bars, trial scatter).
import { describe, expect, it } from 'vitest';
import type { Comparison, RunReport, TrialResult } from '../../src/schema/types';
import { encode, newHistogram } from '../../src/metrics/histogram';
import { chartData } from '../../src/report/charts-data';
import { renderHtml } from '../../src/report/html';

const EVIL = '<img src=x onerror=alert(1)></script><script>alert(2)</script>';

function trial(target: string, i: number, scale: number): TrialResult {
  const h = newHistogram();
  for (let v = 1; v <= 1000; v++) h.recordValue(Math.round(v * 100 * scale));
  return {
    scenario: 'one_fast',
    target,
    trial: i,
    order: i * 2 + (target === 'candidate' ? 0 : 1),
    startedAt: '2024-01-01T00:00:00Z',
    valid: true,
    metrics: { published_rate: (1000 * (1 + i / 100)) / scale, consumed_rate: 990 / scale, latency_p99_ms: 99 * scale },
    series: [0, 1, 2].map((t) => ({ t, published: 1000 + i * 10 + t, confirmed: 1000, consumed: (990 + i * 10) / scale })),
    histograms: { latency: encode(h) },
  };
}

function comparison(metric: string, verdict: Comparison['verdict'], ratio: number, gating = true): Comparison {
  return {
    scenario: 'one_fast',
    metric,
    unit: 'msg/s',
    direction: metric.startsWith('latency') ? 'lower' : 'higher',
    against: 'baseline',
    baselineLabel: EVIL,
    candidateLabel: 'broker',
    nBaseline: 5,
    nCandidate: 5,
    baselineMedian: 1000,
    candidateMedian: 1000 * ratio,
    ratio,
    ciLow: ratio - 0.05,
    ciHigh: ratio + 0.05,
    pValue: 0.008,
    pAdjusted: 0.024,
    tolerance: 0.1,
    change: verdict === 'fail' ? 'worse' : 'same',
    verdict,
    reason: `because ${EVIL}`,
    gating,
  };
}

function fixture(): RunReport {
  const target = (id: string, label: string) => ({
    id,
    label,
    kind: 'url' as const,
    amqpUrl: 'amqp://guest:***@h:5672',
    managementUrl: 'http://h:15672',
    rabbitmqVersion: '3.13.0',
    erlangVersion: '26.2',
    nodes: [{ name: 'rabbit@h' }],
  });
  return {
    schemaVersion: 1,
    tool: { name: 'rabbitmq-perf-gate', version: 'test' },
    createdAt: '2024-01-01T00:00:00Z',
    mode: 'check',
    fingerprint: { tool: 'rabbitmq-perf-gate', toolVersion: 'test', node: 'v24', os: 'Linux', kernel: '6', cpuModel: EVIL, cores: 2, memoryBytes: 2 ** 33 },
    preset: 'smoke',
    repetitions: 5,
    seed: 1,
    scenarios: [
      {
        id: 'one_fast',
        kind: 'messaging',
        description: `desc ${EVIL}`,
        origin: { source: 'test', command: 'perf_test -x 1' },
        workload: {} as never,
        warmupSeconds: 1,
        durationSeconds: 3,
        gate: ['published_rate', 'consumed_rate', 'latency_p99_ms'],
        tolerances: {},
        file: 'x',
        lines: {},
      },
    ],
    targets: [target('candidate', 'broker'), target('baseline', EVIL)],
    candidate: 'candidate',
    trials: [0, 1, 2, 3, 4].flatMap((i) => [trial('candidate', i, 1.2), trial('baseline', i, 1)]),
    comparisons: [comparison('published_rate', 'fail', 0.8), comparison('consumed_rate', 'pass', 1.01), comparison('latency_p99_ms', 'warn', 1.2), comparison('latency_p50_ms', 'pass', 1, false)],
    decidedBy: `same-run A/B against ${EVIL}`,
    verdict: 'fail',
    regressions: 1,
    improvements: 0,
    errors: [{ scope: 'run', message: EVIL }],
    durationSeconds: 60,
  };
}

describe('chartData', () => {
  const d = chartData(fixture());
  const s = d.scenarios[0];

  it('gives each target a colour, the candidate first', () => {
    expect(d.targets.map((t) => t.id)).toEqual(['candidate', 'baseline']);
    expect(new Set(d.targets.map((t) => t.color)).size).toBe(2);
  });

  it('percentile curve: x = 1/(1-p) from 0 % to 99.999 %, merged per target, non-decreasing, in ms', () => {
    const c = d.charts[s.latency[0]] as { x: number[]; series: { values: number[]; label: string }[] };
    expect(c.x[0]).toBe(1);
    expect(c.x.at(-1)).toBeCloseTo(1e5);
    expect(c.series).toHaveLength(2);
    const v = c.series[0].values;
    for (let i = 1; i < v.length; i++) expect(v[i]).toBeGreaterThanOrEqual(v[i - 1]);
    expect(v.at(-1)).toBeCloseTo(120, 0); // candidate max 1000 × 100 µs × 1.2
    expect(c.series[0].label).toContain('5,000 msgs');
  });

  it('throughput: median line per target and a min–max band of consumed', () => {
    const c = d.charts[s.throughput!] as { x: number[]; series: { label: string; band?: string; values: number[] }[] };
    expect(c.x).toEqual([0, 1, 2]);
    const cand = c.series.filter((x) => x.label.startsWith('broker'));
    expect(cand.map((x) => x.band ?? 'line')).toEqual(['line', 'line', 'max', 'min']);
    expect(cand[0].values[0]).toBeCloseTo(1010 / 1.2);
    expect(cand[2].values[0]).toBeCloseTo(1030 / 1.2);
    expect(cand[3].values[0]).toBeCloseTo(990 / 1.2);
  });

  it('delta bars: gating first, Δ in %, tolerance on the bad side', () => {
    const c = d.charts[s.deltas[0]] as { bars: { label: string; delta: number; tolerance: number; lo: number; gating: boolean }[] };
    expect(c.bars.map((b) => b.gating)).toEqual([true, true, true, false]);
    expect(c.bars[0].delta).toBeCloseTo(-20);
    expect(c.bars[0].lo).toBeCloseTo(-25);
    expect(c.bars[0].tolerance).toBeCloseTo(-10);
    expect(c.bars[2].tolerance).toBeCloseTo(10);
  });

  it('scatter: one dot per valid trial per target, x = run order', () => {
    const c = d.charts[s.scatter[0]] as { x: number[]; series: { values: (number | null)[] }[] };
    expect(c.x).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(c.series.map((x) => x.values.filter((v) => v !== null).length)).toEqual([5, 5]);
  });

  it('one target, no comparisons: no delta chart, the rest still drawn', () => {
    const r = fixture();
    r.targets = r.targets.slice(0, 1);
    r.trials = r.trials.filter((t) => t.target === 'candidate');
    r.comparisons = [];
    const one = chartData(r);
    expect(one.scenarios[0].deltas).toEqual([]);
    expect(one.scenarios[0].throughput).toBeDefined();
    expect(one.scenarios[0].scatter).toHaveLength(3);
  });

  it('a corrupt histogram drops that curve instead of failing the report', () => {
    const r = fixture();
    for (const t of r.trials) t.histograms.latency = 'not-a-histogram';
    expect(chartData(r).scenarios[0].latency).toEqual([]);
  });
});

describe('renderHtml', () => {
  const page = renderHtml(fixture());

  it('escapes every piece of report text', () => {
    expect(page).not.toContain('<img src=x');
    expect(page).not.toContain('<script>alert');
    expect(page).toContain('&lt;img src=x onerror=alert(1)&gt;');
    // Inside the JSON data, < is escaped so nothing can close the script element.
    const json = /<script type="application\/json" id="perf-data">([\s\S]*?)<\/script>/.exec(page)![1];
    expect(json).not.toContain('<');
    expect(JSON.parse(json).targets[1].label).toBe(EVIL);
  });

  it('is self-contained: strict CSP, uPlot inlined, no external resources', () => {
    expect(page).toContain("default-src 'none'");
    expect(page).toMatch(/uPlot/);
    expect(page).not.toMatch(/<(script|link|img|iframe)[^>]+(src|href)=/i);
    expect(page).not.toMatch(/url\(\s*['"]?https?:/i);
    expect(page.match(/data-chart="/g)!.length).toBe(1 + 1 + 1 + 3);
  });

  it('shows the verdict, targets, fingerprint, errors and the comparison table', () => {
    expect(page).toContain('class="badge v-fail"');
    expect(page).toMatch(/<span class="badge v-fail">regression<\/span>[^<]*: regression: .*−20\.0 % \[−25\.0, −15\.0\] — beyond the \d+ % tolerance<\/h1>/);
    expect(page).toContain('rabbit@h');
    expect(page).toContain('<th>Δ [90 % CI]</th>');
    expect(page).toContain('−20.0 % [−25.0, −15.0]');
    expect(page).toContain('id="errors"');
  });

  it('never puts an unknown verdict into a class name', () => {
    const r = fixture();
    (r as { verdict: string }).verdict = '"><script>x</script>';
    const p = renderHtml(r);
    expect(p).toContain('class="badge v-inconclusive"');
    expect(p).not.toContain('<script>x');
  });

  it('links the workflow run only when it is an http(s) URL', () => {
    expect(renderHtml(fixture(), { runUrl: 'https://github.com/o/r/actions/runs/1' })).toContain('href="https://github.com/o/r/actions/runs/1"');
    expect(renderHtml(fixture(), { runUrl: 'javascript:alert(1)' })).not.toContain('javascript:');
  });
});
