// The nightly history without a broker: a night's entry from a run's report (ratios against the
// same-run reference, medians, the reference's image ID), appending and bounding, reading broken
// files (one clear error each), which series are searched (another reference is another series),
// a step announced once as nights arrive, and the bisect command a step suggests.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appendNight, emptyHistory, nightlyEntry, readHistory } from '../../src/compare/history-file';
import { bisectSuggestion, detectSteps, historySeries } from '../../src/compare/nightly';
import type { Comparison, NightlyEntry, NightlyHistory, RunReport } from '../../src/schema/types';
import { nightlySection } from '../../src/github/trend';

const dir = mkdtempSync(join(tmpdir(), 'nightly-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const day = (k: number) => new Date(Date.UTC(2026, 0, 1 + k)).toISOString();

function night(k: number, ratio: number | undefined, ref = 'sha256:ref', extra: Partial<NightlyEntry> = {}): NightlyEntry {
  return {
    createdAt: day(k),
    medians: { one_fast: { consumed_rate: 20_000 * (ratio ?? 1) } },
    gate: { one_fast: ['consumed_rate'] },
    image: 'my/rmq:nightly',
    revision: `${String(k).padStart(2, '0')}${'f'.repeat(38)}`,
    ...(ratio === undefined
      ? {}
      : { reference: { image: 'my/rmq:ref', imageId: ref, label: 'ref' }, ratios: { one_fast: { consumed_rate: { ratio, ciLow: ratio * 0.98, ciHigh: ratio * 1.02, pairs: 30 } } } }),
    ...extra,
  };
}
const wobble = (k: number) => 1 + 0.008 * Math.sin(k * 2.1);
const history = (entries: NightlyEntry[]): NightlyHistory => ({ ...emptyHistory(), entries });

describe('nightly entry', () => {
  it('from a run: the paired ratio of each gating metric against the reference, its image ID, and the medians', () => {
    const c = (metric: string, gating: boolean, against = 'baseline-broker'): Comparison => ({
      scenario: 'one_fast',
      metric,
      unit: 'msg/s',
      direction: 'higher',
      against,
      baselineLabel: 'ref',
      candidateLabel: 'cand',
      nBaseline: 30,
      nCandidate: 30,
      baselineMedian: 100,
      candidateMedian: 95,
      ratio: 0.95,
      ciLow: 0.93,
      ciHigh: 0.97,
      pValue: 0.001,
      pAdjusted: 0.001,
      tolerance: 0.05,
      change: 'worse',
      verdict: 'warn',
      reason: '',
      gating,
      paired: true,
    });
    const r = {
      createdAt: day(0),
      candidate: 'candidate',
      verdict: 'warn',
      scenarios: [{ id: 'one_fast', gate: ['consumed_rate'] }],
      targets: [
        { id: 'candidate', label: 'tonight', image: 'my/rmq:nightly', imageId: 'sha256:tonight' },
        { id: 'baseline-broker', label: 'ref', image: 'my/rmq:ref', imageId: 'sha256:ref' },
      ],
      trials: [10, 20, 30].map((v, i) => ({ scenario: 'one_fast', target: 'candidate', trial: i, valid: true, metrics: { consumed_rate: v, published_rate: v + 1, latency_p99_ms: 5 } })),
      comparisons: [c('consumed_rate', true), c('published_rate', false)],
    } as unknown as RunReport;
    const e = nightlyEntry(r, { revision: 'abc', runUrl: 'https://x/run' });
    expect(e).toMatchObject({
      createdAt: day(0),
      image: 'my/rmq:nightly',
      imageId: 'sha256:tonight',
      revision: 'abc',
      verdict: 'warn',
      runUrl: 'https://x/run',
      gate: { one_fast: ['consumed_rate'] },
    });
    expect(e.reference).toEqual({ image: 'my/rmq:ref', imageId: 'sha256:ref', label: 'ref' });
    expect(e.ratios).toEqual({ one_fast: { consumed_rate: { ratio: 0.95, ciLow: 0.93, ciHigh: 0.97, pairs: 30 } } });
    // Medians of the gating metric and the headline rates only.
    expect(e.medians).toEqual({ one_fast: { consumed_rate: 20, published_rate: 21 } });
    // No same-run reference: no ratios, only medians.
    expect(nightlyEntry({ ...r, comparisons: [{ ...c('consumed_rate', true, 'stored'), paired: false }] } as RunReport).ratios).toBeUndefined();
  });

  it('appending keeps the newest nights, and the steps whose nights are still there', () => {
    let h = emptyHistory();
    for (let k = 0; k < 12; k++) h = appendNight(h, night(k, 1), 10);
    expect(h.entries.map((e) => e.createdAt)).toEqual(Array.from({ length: 10 }, (_, i) => day(i + 2)));
    h = { ...h, steps: [{ scenario: 'one_fast', metric: 'consumed_rate', series: 'ratio', before: day(2), at: day(3), magnitude: -0.1, worse: true, pValue: 0.0001, foundAt: day(6) }] };
    expect(appendNight(h, night(12, 1), 10).steps).toHaveLength(1);
    expect(appendNight(appendNight(h, night(12, 1), 10), night(13, 1), 10).steps).toHaveLength(0);
  });

  it('a broken history file is one clear error naming the file and history-file; a missing one is missing', () => {
    const f = join(dir, 'h.json');
    expect(readHistory(f).status).toBe('missing');
    for (const [text, message] of [
      ['{', /not valid JSON/],
      ['{"kind":"x"}', /not a nightly history/],
      ['[]', /not a nightly history/],
      [JSON.stringify({ ...emptyHistory(), schemaVersion: 99 }), /schema version 99/],
      [JSON.stringify({ ...emptyHistory(), entries: [{ createdAt: 1 }] }), /"entries" is not a list/],
      [JSON.stringify(history([night(0, -1)])), /not a positive number/],
    ] as const) {
      writeFileSync(f, text);
      const r = readHistory(f);
      expect(r.status, text).toBe('unusable');
      if (r.status === 'unusable') {
        expect(r.error.message).toMatch(message);
        expect(r.error.where).toMatchObject({ file: f, field: 'history-file' });
      }
    }
  });
});

describe('nightly steps', () => {
  it("the series searched: ratios against the newest night's reference only; medians when no night has a ratio", () => {
    const h = history([...Array.from({ length: 5 }, (_, k) => night(k, 0.8, 'sha256:old')), night(5, undefined), ...Array.from({ length: 6 }, (_, k) => night(6 + k, 1))]);
    const [s] = historySeries(h);
    expect(s).toMatchObject({ scenario: 'one_fast', metric: 'consumed_rate', series: 'ratio' });
    expect(s.nights).toEqual([6, 7, 8, 9, 10, 11]);
    const medians = historySeries(history(Array.from({ length: 4 }, (_, k) => night(k, undefined))));
    expect(medians[0]).toMatchObject({ series: 'median', nights: [0, 1, 2, 3] });
  });

  it('a quiet history raises nothing; a −8 % step is announced once, by its third night, then placed where the nights say', () => {
    let h = history(Array.from({ length: 30 }, (_, k) => night(k, wobble(k))));
    expect(detectSteps(h, day(29)).newSteps).toEqual([]);
    const found: string[][] = [];
    for (let k = 30; k < 36; k++) {
      h = { ...h, entries: [...h.entries, night(k, 0.92 * wobble(k))] };
      const d = detectSteps(h, day(k));
      found.push(d.newSteps.map((s) => s.at));
      h = d.history;
      if (k >= 32) expect(d.series[0].steps.map((s) => [s.at, s.isNew])).toEqual([[day(30), k === h.entries.findIndex((e) => e.createdAt === h.steps[0].foundAt)]]);
    }
    // Found on its second night here (with the last quiet night in its segment: placed a night early).
    expect(found.flat()).toHaveLength(1);
    const when = found.findIndex((x) => x.length);
    expect(when).toBeLessThanOrEqual(2);
    expect([day(29), day(30)]).toContain(found[when][0]);
    expect(h.steps).toHaveLength(1);
    expect(h.steps[0]).toMatchObject({ worse: true, foundAt: day(30 + when), series: 'ratio' });
    expect(h.steps[0].magnitude).toBeCloseTo(-0.08, 1);
  });

  it('a step suggests the bisect between the revisions of its two nights; without them, what is missing', () => {
    const h = history([night(0, 1), night(1, 1), night(2, 0.9), night(3, 0.9)]);
    const step = { scenario: 'one_fast', metric: 'consumed_rate', series: 'ratio' as const, before: day(1), at: day(2), magnitude: -0.1, worse: true, pValue: 0.0001, foundAt: day(3) };
    const b = bisectSuggestion(step, h, { template: 'my/rmq:sha-{sha}', scenarios: 'pr' });
    // One night wider on each side: from the night before the last quiet one to the night after the first changed one.
    expect(b.command).toBe(`rabbitmq-perf-gate bisect --template 'my/rmq:sha-{sha}' --range 00${'f'.repeat(38)}..03${'f'.repeat(38)} --repo PATH/TO/CHECKOUT --scenarios pr`);
    expect(b.note).toMatch(/mode: bisect, bisect-template: my\/rmq:sha-\{sha\}/);
    const none = bisectSuggestion(step, history([night(0, 1, undefined, { revision: undefined }), night(1, 0.9, undefined, { revision: undefined })]), { template: 'x:{sha}' });
    expect(none.note).toMatch(/record each night's source commit/);
    // The Markdown section carries the step, its nights and the command.
    const md = nightlySection({ file: 'h.json', nights: 2, series: [], newSteps: [step], bisect: [b], notes: [] });
    expect(md).toContain('1 new step');
    expect(md).toContain('−10.0 %');
    expect(md).toContain(b.command);
  });
});
