// Resampled power for bench/power.ts: the gate's real rule (compareSamples, paired by round, Holm
// across the gating metrics) applied to gate runs drawn from the measured rounds, so the detection
// rate at a given n and the smallest slowdown the gate catches are estimated from every pair of a
// run rather than from its few disjoint gate runs.
// - Per arm and n: K gate runs, each n rounds drawn without replacement (a round keeps all its
//   scenarios' pairs, so Holm sees the run's real metrics together).
// - Shift curve: the A/A arm's pairs, centred (each metric's candidate values divided by the median
//   pair ratio of the whole run, so the only difference left is noise), with the first gating
//   metric then made worse by δ (× (1 − δ) when higher is better); the smallest δ failed in 80 %
//   and 95 % of K gate runs. `pr`'s five gating metrics are mimicked by adding
//   null metrics drawn from other A/A rounds (Holm m = 5), since a one- or two-scenario run has fewer.
import { compareSamples, overallVerdict } from '../../src/compare/compare';
import { metricDef } from '../../src/metrics/definitions';
import { rng } from '../../src/plan/plan';
import type { ScenarioSpec } from '../../src/schema/types';

type Values = Record<string, Record<string, Record<string, number[]>>>;
interface Arm {
  id: string;
  label: string;
  ref: string;
}
interface Input {
  scenarios: ScenarioSpec[];
  values: Values;
  arms: Arm[];
  k: number;
  ns: number[];
  seed: number;
}

/** n distinct indices out of 0 … total − 1. */
function draw(total: number, n: number, random: () => number): number[] {
  const idx = Array.from({ length: total }, (_, i) => i);
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(random() * (total - i));
    [idx[i], idx[j]] = [idx[j], idx[i]];
  }
  return idx.slice(0, n);
}

/** Median ratio candidate / reference of a metric over all of the run's pairs. */
const medians = new Map<string, number>();
function medianRatio(inp: Input, arm: Arm, s: ScenarioSpec, m: string): number {
  const key = `${arm.id}/${s.id}/${m}`;
  if (!medians.has(key)) medians.set(key, computeMedianRatio(inp, arm, s, m));
  return medians.get(key)!;
}
function computeMedianRatio(inp: Input, arm: Arm, s: ScenarioSpec, m: string): number {
  const a = inp.values[arm.ref][s.id][m];
  const d = inp.values[arm.id][s.id][m]
    .map((v, i) => Math.log(v / a[i]))
    .filter(Number.isFinite)
    .sort((x, y) => x - y);
  return d.length ? Math.exp((d[(d.length - 1) >> 1] + d[d.length >> 1]) / 2) : 1;
}

/** One gate run's verdict over the given rounds. With `centre`, each candidate metric is divided
 *  by its run-wide median pair ratio and the first scenario's first gating metric is made worse
 *  by `shift`; `extraRounds` add null metrics (centred copies of that metric from other rounds). */
function gate(inp: Input, arm: Arm, rounds: number[], centre = false, shift = 0, extraRounds: number[][] = []): string {
  const pick = (id: string, s: ScenarioSpec, m: string, rs: number[]) => {
    const k = centre && id === arm.id ? 1 / medianRatio(inp, arm, s, m) : 1;
    return rs.map((r) => inp.values[id][s.id][m][r] * k);
  };
  const cand: Values[string] = {};
  const ref: Values[string] = {};
  const specs: ScenarioSpec[] = [];
  inp.scenarios.forEach((s, i) => {
    specs.push(s);
    cand[s.id] = Object.fromEntries(
      s.gate.map((m, j) => {
        const worse = i === 0 && j === 0 ? (metricDef(m).direction === 'higher' ? 1 - shift : 1 + shift) : 1;
        return [m, pick(arm.id, s, m, rounds).map((v) => v * worse)];
      }),
    );
    ref[s.id] = Object.fromEntries(s.gate.map((m) => [m, pick(arm.ref, s, m, rounds)]));
  });
  extraRounds.forEach((rs, j) => {
    const s = { ...inp.scenarios[0], id: `${inp.scenarios[0].id}#null${j + 1}` };
    const base = inp.scenarios[0];
    specs.push(s);
    cand[s.id] = Object.fromEntries(s.gate.map((m) => [m, pick(arm.id, base, m, rs)]));
    ref[s.id] = Object.fromEntries(s.gate.map((m) => [m, pick(arm.ref, base, m, rs)]));
  });
  return overallVerdict(compareSamples({ scenarios: specs, against: 'A', paired: true, candidate: { label: arm.id, values: cand }, reference: { label: 'A', values: ref } }));
}

function rate(inp: Input, arm: Arm, n: number, random: () => number, centre = false, shift = 0, holmM = 0): number {
  const total = inp.values[arm.id][inp.scenarios[0].id][inp.scenarios[0].gate[0]].length;
  const extra = Math.max(0, holmM - inp.scenarios.reduce((k, s) => k + s.gate.length, 0));
  let fails = 0;
  for (let i = 0; i < inp.k; i++) {
    const extraRounds = Array.from({ length: extra }, () => draw(total, n, random));
    if (gate(inp, arm, draw(total, n, random), centre, shift, extraRounds) === 'fail') fails++;
  }
  return fails / inp.k;
}

/** Smallest δ (whole percent, 1 … 30) failed in at least `target` of K gate runs; null if none. */
function smallest(inp: Input, arm: Arm, n: number, target: number, holmM: number): number | null {
  for (let d = 1; d <= 30; d++) if (rate(inp, arm, n, rng(inp.seed + d), true, d / 100, holmM) >= target) return d;
  return null;
}

export function printResampled(inp: Input): void {
  const total = inp.values[inp.arms[0].id][inp.scenarios[0].id][inp.scenarios[0].gate[0]].length;
  const ns = inp.ns.filter((n) => n * 2 <= total);
  const pct = (x: number) => `${Math.round(x * 100)} %`;
  console.log(`\nResampled: ${inp.k} gate runs per cell, each n of the ${total} measured rounds drawn without replacement`);
  console.log(['arm (vs A)', ...ns.map((n) => `n = ${n}`)].join('\t'));
  for (const arm of inp.arms) {
    console.log([arm.label, ...ns.map((n) => pct(rate(inp, arm, n, rng(inp.seed))))].join('\t'));
  }
  const aa = inp.arms.find((a) => a.id === 'A2');
  if (!aa) return;
  const m = inp.scenarios.reduce((k, s) => k + s.gate.length, 0);
  const fa = ns.map((n) => pct(rate(inp, aa, n, rng(inp.seed), true, 0, Math.max(m, 5))));
  console.log(
    `\nSmallest slowdown of ${inp.scenarios[0].id} failed in 80 % / 95 % of gate runs (centred A/A pairs shifted; Holm m = ${m}, and m = 5 as in pr; centred A/A fails at m = 5: ${fa.join(', ')}):`,
  );
  console.log(['Holm m', ...ns.map((n) => `n = ${n}`)].join('\t'));
  for (const holmM of [...new Set([m, Math.max(m, 5)])]) {
    console.log(
      [
        String(holmM),
        ...ns.map((n) => {
          const [a, b] = [smallest(inp, aa, n, 0.8, holmM), smallest(inp, aa, n, 0.95, holmM)];
          return `${a ?? '>30'} / ${b ?? '>30'} %`;
        }),
      ].join('\t'),
    );
  }
}
