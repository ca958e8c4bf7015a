// Time to verdict, fixed vs group-sequential, re-decided on recorded rounds (no brokers): the trials
// bench/power.ts saved (--json) — every round of one_fast on the reference A and on A2 (an A/A),
// B1 and B2 (the same image at lower docker --cpus: real broker-side slowdowns) — are drawn into
// gate runs. The fixed design decides once at --fixed pairs with α; the sequential design
// (src/compare/sequential.ts) looks at --looks with its calibrated nominal level, and each
// scenario stops at the first look where all its gating metrics are a fail or a pass, or their
// CIs rule out a regression of --futility. --tolerance overrides the gating tolerance (a strict
// design, e.g. 0.02 with looks up to 64 pairs).
// Besides the recorded arms, the A/A pairs centred (the run-wide median ratio divided out) and
// then made worse by --shifts give regressions of a known size. --holm 5 adds four null
// scenarios drawn from other centred A/A rounds, so Holm's correction and the stopping rule see
// the pr preset's five gating metrics; a gate run ends as soon as one scenario has failed (the
// gate's fail-fast: the rest keep their verdict at that look) or, with --no-fail-fast, when every
// scenario has stopped.
// Time: pairs × --pair-seconds per scenario (pr: 24 pairs of its five scenarios ≈ 14 min, i.e.
// ~7 s per scenario pair), broker boots not included.
//   node_modules/.bin/node bench/sequential.mjs [--from bench/results/power-2026-11-23-pr16.json] [--k 1000]
//        [--holm 1,5] [--looks 8,12,16,24,32] [--fixed 24] [--shifts 0.10,0.15] [--futility 0.1] [--tolerance 0.02] [--no-fail-fast]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { compareSamples, ALPHA } from '../src/compare/compare';
import { DEFAULT_FUTILITY, DEFAULT_LOOKS, decidedAtLook, failedAtLook, familyRate, sequentialDesign } from '../src/compare/sequential';
import { rng } from '../src/plan/plan';
import { resolveScenarios } from '../src/config/catalogue';
import type { Comparison, ScenarioSpec, Verdict } from '../src/schema/types';

const { values: o } = parseArgs({
  options: {
    from: { type: 'string', default: 'bench/results/power-2026-11-23-pr16.json' },
    k: { type: 'string', default: '1000' },
    fixed: { type: 'string', default: '24' },
    looks: { type: 'string', default: DEFAULT_LOOKS.join(',') },
    shifts: { type: 'string', default: '0.10,0.15' },
    holm: { type: 'string', default: '1,5' },
    'pair-seconds': { type: 'string', default: '7' },
    seed: { type: 'string', default: '11' },
    futility: { type: 'string', default: String(DEFAULT_FUTILITY) },
    tolerance: { type: 'string' },
    'no-fail-fast': { type: 'boolean', default: false },
  },
});
const saved = JSON.parse(readFileSync(o.from!, 'utf8')) as { values: Record<string, Record<string, Record<string, number[]>>>; seconds: number; warmup: number };
const K = Number(o.k);
const FIXED = Number(o.fixed);
const ASKED = o.looks!.split(',').map(Number);
const CAP = ASKED.at(-1)!;
const PAIR_S = Number(o['pair-seconds']);
const FUTILITY = Number(o.futility);
const FAIL_FAST = o['no-fail-fast'] !== true;
const one = resolveScenarios('one_fast').scenarios[0];
// --tolerance: the gating metric's tolerance (default the scenario's, 5 % for throughput).
const base: ScenarioSpec = o.tolerance ? { ...one, tolerances: { ...one.tolerances, [one.gate[0]]: Number(o.tolerance) } } : one;
const METRIC = base.gate[0];
const rounds = (arm: string) => saved.values[arm][base.id][METRIC];
const TOTAL = rounds('A').length;

/** Median pair ratio of an arm against A over all its rounds. */
function medianRatio(arm: string): number {
  const a = rounds('A');
  const d = rounds(arm).map((v, i) => Math.log(v / a[i])).filter(Number.isFinite).sort((x, y) => x - y);
  return Math.exp((d[(d.length - 1) >> 1] + d[d.length >> 1]) / 2);
}

/** n distinct round indices, in a random order (the order the pairs arrive in). */
function draw(n: number, random: () => number): number[] {
  const idx = Array.from({ length: TOTAL }, (_, i) => i);
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(random() * (TOTAL - i));
    [idx[i], idx[j]] = [idx[j], idx[i]];
  }
  return idx.slice(0, n);
}

interface Arm { label: string; arm: string; centre: boolean; shift: number }
/** One scenario's pairs in arrival order: [reference, candidate] values. */
type Pairs = Array<[number, number]>;

function pairsOf(a: Arm, idx: number[], worse: boolean): Pairs {
  const k = a.centre ? 1 / medianRatio(a.arm) : 1;
  const f = worse ? 1 - a.shift : 1;
  return idx.map((i) => [rounds('A')[i], rounds(a.arm)[i] * k * f]);
}

function judge(specs: ScenarioSpec[], data: Pairs[], ns: number[], alpha: number, bonferroni?: number): Comparison[] {
  const values = (side: 0 | 1) => Object.fromEntries(specs.map((s, i) => [s.id, { [METRIC]: data[i].slice(0, ns[i]).map((p) => p[side]) }]));
  return compareSamples({ scenarios: specs, against: 'A', paired: true, alpha, bonferroni, reference: { label: 'A', values: values(0) }, candidate: { label: 'B', values: values(1) } });
}

const rank: Record<Verdict, number> = { fail: 3, warn: 2, inconclusive: 1, pass: 0 };
const worst = (vs: Verdict[]) => vs.reduce((w, v) => (rank[v] > rank[w] ? v : w), 'pass' as Verdict);

/** One gate run of each design on the same drawn pairs: verdicts and scenario-pairs used. */
function gateRun(a: Arm, m: number, random: () => number): { fixed: Verdict; seq: Verdict; seqPairs: number; look: number } {
  const { looks: LOOKS, level: G } = sequentialDesign(ASKED, m, FIXED);
  const specs = Array.from({ length: m }, (_, i) => ({ ...base, id: i ? `${base.id}#null${i}` : base.id }));
  const data = specs.map((_, i) => (i === 0 ? pairsOf(a, draw(CAP, random), true) : pairsOf({ ...a, arm: 'A2', centre: true }, draw(CAP, random), false)));
  const fixed = worst(judge(specs, data, specs.map(() => FIXED), ALPHA).filter((c) => c.gating).map((c) => c.verdict));
  const stopped: Array<{ n: number; verdict: Verdict } | undefined> = specs.map(() => undefined);
  let lastLook = 0;
  for (const [li, n] of LOOKS.entries()) {
    const ns = specs.map((_, i) => stopped[i]?.n ?? n);
    const cs = judge(specs, data, ns, G, m);
    specs.forEach((s, i) => {
      if (stopped[i]) return;
      const mine = cs.filter((c) => c.scenario === s.id);
      if (decidedAtLook(mine, FUTILITY) || li === LOOKS.length - 1) stopped[i] = { n, verdict: worst(mine.map((c) => c.verdict)) };
    });
    // Fail-fast (as the gate's default): a failed scenario ends the run; the undecided ones keep
    // their verdict at this look. --no-fail-fast: each runs until decided.
    if (FAIL_FAST && failedAtLook(cs)) {
      specs.forEach((s, i) => {
        stopped[i] ??= { n, verdict: worst(cs.filter((c) => c.scenario === s.id).map((c) => c.verdict)) };
      });
    }
    lastLook = n;
    if (stopped.every(Boolean)) break;
  }
  return { fixed, seq: worst(stopped.map((x) => x!.verdict)), seqPairs: stopped.reduce((t, x) => t + x!.n, 0), look: lastLook };
}

const quantile = (xs: number[], q: number) => [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
/** Wilson score interval (95 %): stable for the 1000-run cells here. */
function wilson(k: number, n: number): [number, number] {
  const z = 1.96;
  const p = k / n;
  const c = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
  const h = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / (1 + (z * z) / n);
  return [Math.max(0, c - h), Math.min(1, c + h)];
}
const pct = (k: number, n: number) => {
  const [lo, hi] = wilson(k, n);
  return `${((100 * k) / n).toFixed(1)} % [${(100 * lo).toFixed(1)}, ${(100 * hi).toFixed(1)}]`;
};

const arms: Arm[] = [
  { label: 'A/A (A2 vs A)', arm: 'A2', centre: false, shift: 0 },
  ...o.shifts!.split(',').map(Number).map((d) => ({ label: `centred A/A −${Math.round(d * 100)} %`, arm: 'A2', centre: true, shift: d })),
  { label: `B1 (${((medianRatio('B1') - 1) * 100).toFixed(1)} %)`, arm: 'B1', centre: false, shift: 0 },
  { label: `B2 (${((medianRatio('B2') - 1) * 100).toFixed(1)} %)`, arm: 'B2', centre: false, shift: 0 },
];
console.log(`${o.from}: ${TOTAL} recorded rounds per arm, ${saved.warmup}+${saved.seconds} s trials; ${K} gate runs per cell, each drawing its pairs without replacement in a random order`);
for (const m of o.holm!.split(',').map(Number)) {
  const d = sequentialDesign(ASKED, m, FIXED);
  console.log(`fixed: ${FIXED} pairs at α = ${ALPHA}, Holm over ${m}; sequential with ${m} gating metric(s): looks at ${d.looks.join(', ')} pairs, Bonferroni over ${m}, nominal one-sided level ${d.level.toFixed(4)} at every look (family rate under the null ${familyRate(d.level, d.looks).toFixed(4)}; the fixed level at every look would give ${familyRate(ALPHA, d.looks).toFixed(3)})`);
}
console.log(`tolerance: ${o.tolerance ? `${Number(o.tolerance) * 100} % (--tolerance)` : "the scenario's"}`);
console.log(`futility: a scenario also stops when every gating CI rules out a regression of ${Math.round(FUTILITY * 100)} % or more (0 = off)`);
console.log(`fail-fast: ${FAIL_FAST ? "on (a failed scenario ends the gate run)" : "off (--no-fail-fast: every scenario runs until decided)"}`);
console.log(`time: ${PAIR_S} s per scenario pair (broker boots not included)\n`);
console.log(['Holm m', 'arm', 'fixed: fail', 'seq: fail', 'seq: pass', 'fixed: min (pairs)', 'seq: median / p90 min', 'seq: gate runs ended after N pairs'].join('\t'));
for (const m of o.holm!.split(',').map(Number)) {
  for (const a of arms) {
    const random = rng(Number(o.seed) + m);
    const runs = Array.from({ length: K }, () => gateRun(a, m, random));
    const mins = runs.map((r) => (r.seqPairs * PAIR_S) / 60);
    const ends = [...new Set(runs.map((r) => r.look))].sort((x, y) => x - y).map((n) => `${n}: ${runs.filter((r) => r.look === n).length}`);
    console.log([
      String(m), a.label,
      pct(runs.filter((r) => r.fixed === 'fail').length, K),
      pct(runs.filter((r) => r.seq === 'fail').length, K),
      pct(runs.filter((r) => r.seq === 'pass').length, K),
      `${((FIXED * m * PAIR_S) / 60).toFixed(1)} (${FIXED})`,
      `${quantile(mins, 0.5).toFixed(1)} / ${quantile(mins, 0.9).toFixed(1)}`,
      ends.join(', '),
    ].join('\t'));
  }
}
