// Time to verdict, fixed vs group-sequential, re-decided on recorded rounds (no brokers): the trials
// bench/power.ts saved (--json) — every round of one_fast on the reference A and on A2 (an A/A),
// B1 and B2 (the same image at lower docker --cpus: real broker-side slowdowns) — are drawn into
// gate runs. The fixed design decides once at --fixed pairs with α; the sequential design
// (src/compare/sequential.ts) looks at --looks with its calibrated nominal level, and each
// scenario stops at the first look where every gating metric has an answer — a regression, or no
// regression beyond its equivalence margin (src/compare/margins.ts) — driven by the gate's own
// stopping policy (SequentialRun). --tolerance overrides the gating tolerance (a strict design,
// e.g. 0.02 with looks up to 64 pairs); the answers' shares are printed per cell: red, green (and
// green with a bound of 5 % or less: "no regression of 5 % or more"), grey.
// Besides the recorded arms, the A/A pairs centred (the run-wide median ratio divided out) and
// then made worse by --shifts give regressions of a known size. --holm 5 adds four null
// scenarios drawn from other centred A/A rounds, so Holm's correction and the stopping rule see
// the pr preset's five gating metrics; a gate run ends as soon as one scenario has failed (the
// gate's fail-fast: the rest keep their verdict at that look) or, with --no-fail-fast, when every
// scenario has stopped.
// Time: pairs × --pair-seconds per scenario (pr: 24 pairs of its five scenarios ≈ 14 min, i.e.
// ~7 s per scenario pair), broker boots not included.
//   node_modules/.bin/node bench/sequential.mjs [--from bench/results/power/power-2026-11-23-pr16.json] [--k 1000]
//        [--holm 1,5] [--looks 8,12,16,24,32] [--fixed 24] [--shifts 0.10,0.15] [--pair-seconds 7] [--seed 11] [--tolerance 0.02] [--margin 0.05] [--no-fail-fast]
import { readFileSync } from 'node:fs';
import { compareSamples, ALPHA, overallAnswer } from '../src/compare/compare';
import { marginsFor } from '../src/compare/margins';
import { DEFAULT_LOOKS, familyRate, sequentialDesign, SequentialRun } from '../src/compare/sequential';
import { rng } from '../src/plan/plan';
import { resolveScenarios } from '../src/config/catalogue';
import type { Answer, Comparison, ScenarioSpec, Verdict } from '../src/schema/types';
import { packagePath } from '../src/config/paths';
import { benchArgs, headerOf, numberList, optional } from './lib/args.mjs';

const { values: o } = benchArgs(
  {
    from: 'bench/results/power/power-2026-11-23-pr16.json',
    k: 1000,
    fixed: 24,
    looks: numberList([...DEFAULT_LOOKS]),
    shifts: numberList('0.10,0.15'),
    holm: numberList('1,5'),
    'pair-seconds': 7,
    seed: 11,
    tolerance: optional('number'),
    margin: optional('number'),
    'no-fail-fast': false,
  },
  { script: 'sequential.mjs', help: headerOf(packagePath('bench/sequential.mjs')) },
);
const saved = JSON.parse(readFileSync(o.from, 'utf8')) as { values: Record<string, Record<string, Record<string, number[]>>>; seconds: number; warmup: number };
const K = o.k;
const FIXED = o.fixed;
const ASKED = o.looks;
const CAP = ASKED.at(-1)!;
const PAIR_S = o['pair-seconds'];
const FAIL_FAST = !o['no-fail-fast'];
const one = resolveScenarios('one_fast').scenarios[0];
// --tolerance: the gating metric's tolerance (default the scenario's, 5 % for throughput).
// --margin: its equivalence margin (default src/compare/margins.ts's, 10 % for throughput).
const base: ScenarioSpec = {
  ...one,
  ...(o.tolerance !== undefined ? { tolerances: { ...one.tolerances, [one.gate[0]]: o.tolerance } } : {}),
  ...(o.margin !== undefined ? { margins: { ...one.margins, [one.gate[0]]: o.margin } } : {}),
};
const METRIC = base.gate[0];
const rounds = (arm: string) => saved.values[arm][base.id][METRIC];
const TOTAL = rounds('A').length;

/** Median pair ratio of an arm against A over all its rounds. */
function medianRatio(arm: string): number {
  const a = rounds('A');
  const d = rounds(arm)
    .map((v, i) => Math.log(v / a[i]))
    .filter(Number.isFinite)
    .sort((x, y) => x - y);
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

interface Arm {
  label: string;
  arm: string;
  centre: boolean;
  shift: number;
}
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

interface GateRun {
  fixed: Verdict;
  fixedAnswer: Answer;
  seq: Verdict;
  answer: Answer;
  bound: number;
  seqPairs: number;
  look: number;
}

/** One gate run of each design on the same drawn pairs: verdicts, answers and scenario-pairs used.
 *  `bound`: the largest CI bad end over the gating metrics (the run's "no regression of X %"). */
function gateRun(a: Arm, m: number, random: () => number): GateRun {
  const design = sequentialDesign(ASKED, m, FIXED);
  const specs = Array.from({ length: m }, (_, i) => ({ ...base, id: i ? `${base.id}#null${i}` : base.id }));
  const data = specs.map((_, i) => (i === 0 ? pairsOf(a, draw(CAP, random), true) : pairsOf({ ...a, arm: 'A2', centre: true }, draw(CAP, random), false)));
  const fixedCs = judge(
    specs,
    data,
    specs.map(() => FIXED),
    ALPHA,
  ).filter((c) => c.gating);
  // The gate's own stopping policy, driven look by look with every scenario's pairs so far.
  const policy = new SequentialRun(design, FAIL_FAST);
  const last = new Map<string, Comparison[]>();
  let lastLook = 0;
  for (const n of design.looks) {
    const running = specs.filter((s) => policy.runs(s.id, n - 1));
    if (!running.length) break;
    const cs = judge(
      specs,
      data,
      specs.map((s) => policy.stopped.get(s.id) ?? n),
      design.level,
      m,
    );
    for (const s of running) {
      const mine = cs.filter((c) => c.scenario === s.id);
      last.set(s.id, mine);
      policy.look(s.id, n, mine);
    }
    lastLook = n;
  }
  policy.finish(new Map(specs.map((s) => [s.id, lastLook])));
  const final = specs.flatMap((s) => last.get(s.id) ?? []).filter((c) => c.gating);
  return {
    fixed: worst(fixedCs.map((c) => c.verdict)),
    fixedAnswer: overallAnswer(fixedCs),
    seq: worst(final.map((c) => c.verdict)),
    answer: overallAnswer(final),
    bound: Math.max(...final.map((c) => c.bound ?? Number.POSITIVE_INFINITY)),
    seqPairs: specs.reduce((t, s) => t + (policy.stopped.get(s.id) ?? lastLook), 0),
    look: lastLook,
  };
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
  ...o.shifts.map((d) => ({ label: `centred A/A −${Math.round(d * 100)} %`, arm: 'A2', centre: true, shift: d })),
  { label: `B1 (${((medianRatio('B1') - 1) * 100).toFixed(1)} %)`, arm: 'B1', centre: false, shift: 0 },
  { label: `B2 (${((medianRatio('B2') - 1) * 100).toFixed(1)} %)`, arm: 'B2', centre: false, shift: 0 },
];
console.log(`${o.from}: ${TOTAL} recorded rounds per arm, ${saved.warmup}+${saved.seconds} s trials; ${K} gate runs per cell, each drawing its pairs without replacement in a random order`);
for (const m of o.holm) {
  const d = sequentialDesign(ASKED, m, FIXED);
  console.log(
    `fixed: ${FIXED} pairs at α = ${ALPHA}, Holm over ${m}; sequential with ${m} gating metric(s): looks at ${d.looks.join(', ')} pairs, Bonferroni over ${m}, nominal one-sided level ${d.level.toFixed(4)} at every look (family rate under the null ${familyRate(d.level, d.looks).toFixed(4)}; the fixed level at every look would give ${familyRate(ALPHA, d.looks).toFixed(3)})`,
  );
}
console.log(`tolerance: ${o.tolerance !== undefined ? `${o.tolerance * 100} % (--tolerance)` : "the scenario's"}`);
const mg = marginsFor(METRIC, base.tolerances);
console.log(
  `answers: red = a regression (whole CI beyond the ${Math.round(mg.tolerance * 100)} % tolerance); green = the CI's bad end inside the ${Math.round(mg.equivalence * 100)} % equivalence margin; grey = neither at the cap`,
);
console.log(`fail-fast: ${FAIL_FAST ? 'on (a failed scenario ends the gate run)' : 'off (--no-fail-fast: every scenario runs until decided)'}`);
console.log(`time: ${PAIR_S} s per scenario pair (broker boots not included)\n`);
console.log(
  [
    'Holm m',
    'arm',
    'fixed: red / green',
    'seq: red',
    'seq: green',
    'seq: green ≤ 5 %',
    'seq: grey',
    'seq: red or warn',
    'seq: median bound',
    'fixed: min (pairs)',
    'seq: median / p90 min',
    'seq: gate runs ended after N pairs',
  ].join('\t'),
);
for (const m of o.holm) {
  for (const a of arms) {
    const random = rng(o.seed + m);
    const runs = Array.from({ length: K }, () => gateRun(a, m, random));
    const mins = runs.map((r) => (r.seqPairs * PAIR_S) / 60);
    const ends = [...new Set(runs.map((r) => r.look))].sort((x, y) => x - y).map((n) => `${n}: ${runs.filter((r) => r.look === n).length}`);
    console.log(
      [
        String(m),
        a.label,
        `${pct(runs.filter((r) => r.fixedAnswer === 'regression').length, K)} / ${((100 * runs.filter((r) => r.fixedAnswer === 'no-regression').length) / K).toFixed(1)} %`,
        pct(runs.filter((r) => r.answer === 'regression').length, K),
        pct(runs.filter((r) => r.answer === 'no-regression').length, K),
        pct(runs.filter((r) => r.answer === 'no-regression' && r.bound <= 0.05).length, K),
        pct(runs.filter((r) => r.answer === 'undecided').length, K),
        pct(runs.filter((r) => r.seq === 'fail' || r.seq === 'warn').length, K),
        `${(
          100 *
            quantile(
              runs.map((r) => r.bound),
              0.5,
            )
        ).toFixed(1)} %`,
        `${((FIXED * m * PAIR_S) / 60).toFixed(1)} (${FIXED})`,
        `${quantile(mins, 0.5).toFixed(1)} / ${quantile(mins, 0.9).toFixed(1)}`,
        ends.join(', '),
      ].join('\t'),
    );
  }
}
