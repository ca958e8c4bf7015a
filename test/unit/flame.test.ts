// Differential flame graphs without a broker: folding real `perf script` output of a RabbitMQ
// 3.10.8 node started with +JPperf true (test/fixtures, recorded on this project's machine), the
// merged call tree, the frames whose share moved, and the SVG and Markdown that show them. The
// recording itself, on real containers: test/integration/anchored-baseline.test.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { flameTree, foldPerfScript, threadKind, topShifts, total } from '../../src/metrics/flame';
import { flameSection, flameShiftLines, flameSvg } from '../../src/report/flame';
import { renderComment } from '../../src/report/markdown';
import type { Comparison, FlameGraph, RunReport } from '../../src/schema/types';

const PERF = readFileSync(join(import.meta.dirname, '../fixtures/perf-script-rabbitmq-3.10.8.txt'), 'utf8');

describe('folding perf script output', () => {
  it('merges scheduler threads, runs from the thread to the sampled function, keeps Erlang frames', () => {
    expect(threadKind('1_scheduler')).toBe('scheduler');
    expect(threadKind('2_dirty_cpu_sch')).toBe('dirty_cpu_sch');
    expect(threadKind('erts_sched_2')).toBe('erts_sched');
    const f = foldPerfScript(PERF);
    const samples = PERF.split('\n').filter((l) => l && !/^\s/.test(l)).length;
    expect(total(f)).toBe(samples);
    const threads = new Set(Object.keys(f).map((s) => s.split(';')[0]));
    expect([...threads].every((t) => !/^\d/.test(t))).toBe(true);
    expect(threads.has('scheduler')).toBe(true);
    // A channel's cast, callers first: gen_server2 above rabbit_channel.
    const stack = Object.keys(f).find((s) => s.includes('$rabbit_channel:handle_cast/2'))!;
    expect(stack.indexOf('$gen_server2:handle_msg/2')).toBeLessThan(stack.indexOf('$rabbit_channel:handle_cast/2'));
    expect(Object.keys(f).some((s) => s.includes('[unknown];[unknown]'))).toBe(false);
  });

  it('keeps the most frequent stacks and sums the rest per thread', () => {
    const f = foldPerfScript(PERF, 10);
    expect(Object.keys(f).length).toBeLessThanOrEqual(10 + 10);
    expect(total(f)).toBe(total(foldPerfScript(PERF)));
    expect(Object.keys(f).some((s) => s.endsWith(';[other stacks]'))).toBe(true);
  });
});

describe('comparing two profiles', () => {
  const base = { 'scheduler;a;b': 50, 'scheduler;a;c': 50 };
  const cand = { 'scheduler;a;b': 80, 'scheduler;a;c': 20, 'poller;epoll': 100 };

  it('merges both into one tree with inclusive samples per side', () => {
    const t = flameTree(cand, base);
    expect(t).toMatchObject({ candidate: 200, baseline: 100 });
    const sched = t.children.find((c) => c.name === 'scheduler')!;
    expect(sched.children[0]).toMatchObject({ name: 'a', candidate: 100, baseline: 100 });
    expect(sched.children[0].children.map((c) => [c.name, c.candidate, c.baseline])).toEqual([
      ['b', 80, 50],
      ['c', 20, 50],
    ]);
  });

  it('names the frames whose share of samples moved most', () => {
    const s = topShifts(cand, base, 2);
    expect(s.map((x) => x.frame)).toEqual(['a', 'epoll']);
    expect(s[0]).toMatchObject({ candidateShare: 0.5, baselineShare: 1 });
  });
});

describe('showing it', () => {
  const flame: FlameGraph = {
    scenario: 'one_fast',
    against: 'base',
    candidateLabel: 'head',
    baselineLabel: 'base',
    candidate: { 'scheduler;$x:<script>/1': 90, 'scheduler;$y:z/0': 10 },
    baseline: { 'scheduler;$x:<script>/1': 50, 'scheduler;$y:z/0': 50 },
  };

  it("an SVG: widths by the candidate's share, red where it spends more, frame names escaped", () => {
    const svg = flameSvg(flame)!;
    expect(svg).toMatch(/^<svg [^>]*viewBox="0 0 1100 48"/);
    expect(svg).toContain('$x:&lt;script&gt;/1: 90.0 % of head&#39;s samples, 50.0 % of base&#39;s (+40.0 points)');
    expect(svg).not.toContain('<script>');
    expect(svg).toMatch(/width="990\.0" height="15" fill="rgb\(255,75,40\)"/); // +40 points: saturated red
    expect(flameSvg({ ...flame, baseline: {} })).toBeUndefined();
    expect(flameSection(flame)).toContain('<h3>Differential flame graph</h3>');
  });

  it('the comment names the frames that moved next to the failing scenario', () => {
    expect(flameShiftLines(flame)[0]).toBe('$x:<script>/1 90.0 % of samples (was 50.0 %)');
    const fail: Comparison = {
      scenario: 'one_fast',
      metric: 'consumed_rate',
      unit: 'msg/s',
      direction: 'higher',
      against: 'base',
      baselineLabel: 'base',
      candidateLabel: 'head',
      nBaseline: 8,
      nCandidate: 8,
      baselineMedian: 1,
      candidateMedian: 0.8,
      ratio: 0.8,
      ciLow: 0.75,
      ciHigh: 0.85,
      pValue: 0.01,
      pAdjusted: 0.01,
      tolerance: 0.05,
      change: 'worse',
      verdict: 'fail',
      reason: '',
      gating: true,
      paired: true,
      failsBeyond: null,
    };
    const report = {
      comparisons: [fail],
      flames: [flame],
      targets: [],
      trials: [],
      errors: [],
      scenarios: [{ id: 'one_fast' }],
      fingerprint: { cpuModel: 'c', cores: 2, os: 'o', node: 'n', tool: 't', toolVersion: 'v' },
      verdict: 'fail',
      decidedBy: 'x',
      regressions: 1,
      improvements: 0,
      preset: 'pr',
      repetitions: 8,
      seed: 1,
      durationSeconds: 1,
      flameNote: 'flame graph incomplete: *boom*',
    } as unknown as RunReport;
    const md = renderComment(report, { name: 'gate' });
    expect(md).toContain('  - flame graph (in the HTML report): `$x:<script>/1 90.0 % of samples (was 50.0 %)`');
    expect(md).toContain('> flame graph incomplete: \\*boom\\*');
  });
});
