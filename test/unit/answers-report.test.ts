// The run's three answers in words, in every format (PR comment and job summary, terminal, HTML),
// from trials judged by the real rule (judge(): paired signed-rank, Hodges-Lehmann CI, the margins
// of src/compare/margins.ts): a regression is red and names what regressed; a harmless change is
// green with the bound it reached ("no regression of X % or more"), never "no significant
// difference"; a run too noisy to tell is grey and says what was ruled out and what would decide it.
import { describe, expect, it } from 'vitest';
import { judge } from '../../src/compare/judge';
import { resolveScenarios } from '../../src/config/catalogue';
import { rng } from '../../src/plan/plan';
import { renderComment, renderSummary } from '../../src/report/markdown';
import { terminalTable } from '../../src/report/terminal';
import { renderHtml } from '../../src/report/html';
import type { RunReport, TrialResult } from '../../src/schema/types';

const scenarios = resolveScenarios('one_fast,fanout10').scenarios;

/** A same-run A/B report: `pairs` rounds per scenario, the candidate `factor` × the reference, with `noise` per pair. */
function report(factor: number, noise: number, pairs: number): RunReport {
  const random = rng(7);
  const trials: TrialResult[] = [];
  for (const s of scenarios) {
    for (let i = 0; i < pairs; i++) {
      const base = 20_000 * (1 + random() * 0.3);
      const e = (random() - 0.5) * 2 * noise;
      for (const [target, v] of [
        ['reference', base],
        ['candidate', base * factor * (1 + e)],
      ] as const) {
        trials.push({
          scenario: s.id,
          target,
          trial: i,
          order: trials.length,
          startedAt: '2026-11-27T00:00:00Z',
          valid: true,
          metrics: Object.fromEntries(s.gate.map((m) => [m, v])),
          series: [],
          histograms: {},
        });
      }
    }
  }
  const j = judge({ scenarios, trials, candidate: { id: 'candidate', label: 'head', values: {} }, sameRun: { id: 'reference', label: 'base' }, judged: true, incomplete: false });
  const target = (id: string, label: string) => ({ id, label, kind: 'docker' as const, amqpUrl: 'amqp://x', managementUrl: 'http://x', rabbitmqVersion: '3.10.8', erlangVersion: '25', nodes: [] });
  return {
    schemaVersion: 1,
    tool: { name: 'rabbitmq-perf-gate', version: 'test' },
    createdAt: '2026-11-27T00:00:00Z',
    mode: 'run',
    fingerprint: { tool: 'rabbitmq-perf-gate', toolVersion: 'test', node: 'v24', os: 'Linux', kernel: '6', cpuModel: 'cpu', cores: 2, memoryBytes: 2 ** 33 },
    preset: 'test',
    repetitions: pairs,
    seed: 7,
    scenarios,
    targets: [target('candidate', 'head'), target('reference', 'base')],
    candidate: 'candidate',
    trials,
    ...j,
    errors: [],
    durationSeconds: 60,
  };
}

const formats = (r: RunReport) => ({
  comment: renderComment(r, { name: 'gate' })
    .split('\n')
    .find((l) => l.startsWith('## '))!,
  summary: renderSummary(r, { name: 'gate' }).split('\n')[0],
  terminal: terminalTable(r, false).split('\n')[0],
  html: /<h1>([\s\S]*?)<\/h1>/.exec(renderHtml(r, { name: 'gate' }))![1],
});

describe('the answer in every format', () => {
  it('a harmless change: green, with the bound reached', () => {
    const r = report(1, 0.02, 16);
    expect([r.answer, r.verdict]).toEqual(['no-regression', 'pass']);
    const f = formats(r);
    expect(f.comment).toMatch(/^## ✅ gate: no regression of \d+\.\d % or more$/);
    expect(f.summary).toBe(f.comment);
    expect(f.terminal).toMatch(/^✔ NO REGRESSION {2}no regression of \d+\.\d % or more — decided by same-run A\/B against base/);
    expect(f.html).toMatch(/^<span class="badge v-pass">no regression<\/span>gate: no regression of \d+\.\d % or more$/);
    for (const text of Object.values(f)) expect(text).not.toMatch(/significant difference|inconclusive|not enough/);
    // The bound is the largest CI bad end of the gating metrics, rounded up.
    const worst = Math.max(...r.comparisons.filter((c) => c.gating).map((c) => c.bound!));
    expect(Number(/of (\d+\.\d) %/.exec(f.comment)![1])).toBeCloseTo(Math.ceil(worst * 1000) / 10, 5);
  });

  it('a 15 % regression: red, naming the metric, its Δ and CI and the tolerance', () => {
    const r = report(0.85, 0.02, 12);
    expect([r.answer, r.verdict]).toEqual(['regression', 'fail']);
    const f = formats(r);
    expect(f.comment).toMatch(/^## ❌ gate: regression: one\\_fast consumed −1\d\.\d % \\\[−\d+\.\d, −\d+\.\d\\\]; fanout10 consumed −1\d\.\d % .* — beyond the 5 % tolerance$/);
    expect(f.terminal).toMatch(/^✘ REGRESSION {2}regression: .* — beyond the 5 % tolerance — decided by/);
    expect(f.html).toMatch(/^<span class="badge v-fail">regression<\/span>gate: regression: /);
  });

  it('too noisy to tell: grey, with what was ruled out and what would decide it', () => {
    const r = report(1, 0.4, 8);
    expect(r.answer).toBe('undecided');
    const f = formats(r);
    expect(f.comment).toMatch(/^## ❔ gate: not decided: [12] of 2 gating metrics open: .* consumed .*, a regression of \d+\.\d % not ruled out/);
    expect(f.comment).toMatch(/(about \d+|more) pairs(, or a quieter runner,)? would (likely )?decide it/);
    expect(f.terminal).toMatch(/^\? NOT DECIDED {2}not decided: /);
    expect(f.html).toMatch(/^<span class="badge v-inconclusive">not decided<\/span>gate: not decided: /);
  });

  it('each gating row says its answer in words', () => {
    const md = renderSummary(report(1, 0.02, 16), { name: 'gate' });
    expect(md).toContain('| Answer |');
    expect(md).toMatch(/✅ no regression ≥ \d+\.\d %/);
  });
});
