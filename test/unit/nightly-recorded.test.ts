// Change points on a history written by real runs: bench/nightly-history.mjs ran the bundled CLI's
// `nightly` (the action's mode: nightly minus GitHub) 30 times on the offline 3.10.8 image against
// its anchored broker (an A/A), then 4 times on an image with a broker-side regression (an
// advanced.config lowering credit_flow_default_credit to {10, 5}: −29 % here). Replayed night by
// night as the nightly mode searches it: nothing is raised in the 30 A/A nights, and the
// regression is reported once, at its first night — on its fourth night: each night was 8 pairs
// of 2 s trials on a machine at load ~10, so a night's ratio had an sd of 10.7 %, and a −29 % step
// is under three of them (bench/changepoint.mjs: within three nights needs about 1 % per 5 %).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectSteps } from '../../src/compare/nightly';
import type { NightlyHistory, NightlyStep } from '../../src/schema/types';

const FILE = join(import.meta.dirname, '../../bench/results/nightly-history/nightly-history-2026-11-27.json');
const QUIET = 30;

describe('a history recorded by real nightly runs', () => {
  const recorded = JSON.parse(readFileSync(FILE, 'utf8')) as NightlyHistory;

  it('holds 34 real nights, each with its paired ratio against the same recorded broker', () => {
    expect(recorded.entries).toHaveLength(QUIET + 4);
    const refs = new Set(recorded.entries.map((e) => e.reference?.imageId));
    expect(refs.size).toBe(1);
    for (const e of recorded.entries) expect(e.ratios?.one_fast?.consumed_rate?.pairs).toBe(8);
  });

  it('replayed night by night: no step in the 30 A/A nights; the regression reported once, at its first night, by its fourth', () => {
    let h: NightlyHistory = { ...recorded, entries: [], steps: [] };
    const reported: Array<{ night: number; step: NightlyStep }> = [];
    for (const [k, e] of recorded.entries.entries()) {
      h = { ...h, entries: [...h.entries, e] };
      const d = detectSteps(h, e.createdAt);
      for (const step of d.newSteps) reported.push({ night: k, step });
      h = d.history;
    }
    const where = (s: NightlyStep) => recorded.entries.findIndex((e) => e.createdAt === s.at);
    expect(reported.filter((r) => r.night < QUIET)).toEqual([]);
    expect(reported).toHaveLength(1);
    expect(reported[0].night).toBeLessThanOrEqual(QUIET + 3);
    expect(Math.abs(where(reported[0].step) - QUIET)).toBeLessThanOrEqual(1);
    expect(reported[0].step.worse).toBe(true);
  });
});
