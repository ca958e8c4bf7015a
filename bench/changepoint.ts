// How well the nightly change-point detection (src/compare/changepoint.ts, src/compare/nightly.ts)
// finds steps and how often it cries wolf, run night by night as the nightly mode runs it.
// 1. Detection: histories of --nights quiet nights, then a step (−5 %, −10 %), searched after each
//    of the next three nights: recall = a step reported within one night of the true one by the
//    third night after it; precision = the share of reported steps that are that step. Noise:
//    normal at several σ, and "resampled": each night's ratio the Hodges-Lehmann ratio of 12, 24
//    or 40 rounds drawn from the real A/A pairs bench/power.mjs recorded (--recorded: one_fast, A
//    against A2; a quieter hour with 5 s trials and a noisy one with 2 s trials), the step applied
//    to the candidate's side — the nightly mode's own estimator on real noise.
// 2. False alarms: A/A histories of --aa-nights nights, searched every night with the history's
//    record of steps already reported (a step is announced once): new steps per 100 nights.
// 3. A recorded history (--history, written by bench/nightly-history.mjs with real runs): where
//    the steps were reported, night by night, against --truth (the first regressed night, 1-based).
//   node_modules/.bin/node bench/changepoint.mjs [--cases 200] [--nights 30] [--aa-nights 200] [--aa-histories 20] [--seed 34]
//        [--recorded a.json,b.json] [--history bench/results/nightly-history/nightly-history-2026-11-27.json --truth 31]
import { readFileSync } from 'node:fs';
import { type ChangePointOptions, eDivisive } from '../src/compare/changepoint';
import { detectSteps } from '../src/compare/nightly';
import { hodgesLehmannPairedRatio } from '../src/compare/paired';
import { rng } from '../src/plan/plan';
import type { NightlyHistory } from '../src/schema/types';
import { packagePath } from '../src/config/paths';
import { benchArgs, headerOf, list, optional } from './lib/args.mjs';

const { values: o } = benchArgs(
  {
    cases: 200,
    nights: 30,
    'aa-nights': 200,
    'aa-histories': 20,
    recorded: list('bench/results/power/power-2026-11-23-frozen.json,bench/results/power/power-2026-11-23-pr16.json'),
    history: optional(),
    truth: optional('number'),
    seed: 34,
  },
  { script: 'changepoint.mjs', help: headerOf(packagePath('bench/changepoint.mjs')) },
);
const CASES = o.cases;
const PRE = o.nights;
const random = rng(o.seed);
const gauss = () => {
  let u = 0;
  while (u === 0) u = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
};
const t3 = () => gauss() / Math.sqrt((gauss() ** 2 + gauss() ** 2 + gauss() ** 2) / 3);

// Real A/A rounds: A and A2 are the same image, paired by round (one recording per file).
const recordings = o.recorded.map((file) => {
  const rec = JSON.parse(readFileSync(file, 'utf8'));
  const A: number[] = rec.values.A.one_fast.consumed_rate;
  const A2: number[] = rec.values.A2.one_fast.consumed_rate;
  return { name: `${file.replace(/^.*power-/, '').replace(/\.json$/, '')} (${rec.warmup}+${rec.seconds} s trials)`, rounds: A.map((a, i) => [a, A2[i]] as const).filter(([a, b]) => a > 0 && b > 0) };
});
/** One night's ratio: the HL ratio of `pairs` real A/A rounds drawn at random, the candidate × f. */
const resampled = (rounds: ReadonlyArray<readonly [number, number]>, pairs: number) => (f: number) => {
  const x: number[] = [];
  const y: number[] = [];
  for (let i = 0; i < pairs; i++) {
    const [a, b] = rounds[Math.floor(random() * rounds.length)];
    x.push(a);
    y.push(b * f);
  }
  return hodgesLehmannPairedRatio(x, y, 0.9)!.ratio;
};
const normal = (sigma: number) => (f: number) => f * (1 + sigma * gauss());
const heavy = (scale: number) => (f: number) => f * (1 + scale * t3());

const sd = (xs: number[]) => {
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  return Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1));
};
const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

/** Detection within three nights after a step of factor f at night PRE. */
function detection(night: (f: number) => number, f: number, options: ChangePointOptions = {}): { recall: number; precision: number; byNight: number[] } {
  let found = 0;
  let reported = 0;
  let right = 0;
  const byNight = [0, 0, 0];
  for (let c = 0; c < CASES; c++) {
    const xs = Array.from({ length: PRE }, () => night(1));
    let hit = false;
    for (let k = 0; k < 3; k++) {
      xs.push(night(f));
      const { points } = eDivisive(xs, { ...options, seed: c * 7 + k });
      reported += points.length;
      const ok = points.filter((p) => Math.abs(p.index - PRE) <= 1).length;
      right += ok;
      if (ok && !hit) {
        hit = true;
        byNight[k]++;
      }
    }
    if (hit) found++;
  }
  return { recall: found / CASES, precision: reported ? right / reported : 1, byNight: byNight.map((n) => n / CASES) };
}

/** New steps per 100 nights on A/A histories searched every night, as the nightly mode does. */
function falseAlarms(night: (f: number) => number): { per100: number; alarms: number; nights: number } {
  const N = o['aa-nights'];
  const H = o['aa-histories'];
  let alarms = 0;
  let nights = 0;
  for (let hh = 0; hh < H; hh++) {
    let h: NightlyHistory = { schemaVersion: 1, kind: 'rabbitmq-perf-gate/nightly-history', entries: [], steps: [] };
    for (let k = 0; k < N; k++) {
      const at = new Date(Date.UTC(2026, 0, 1) + (hh * N + k) * 86_400_000).toISOString();
      h = {
        ...h,
        entries: [
          ...h.entries,
          { createdAt: at, medians: {}, reference: { image: 'r', imageId: 'r', label: 'r' }, ratios: { s: { consumed_rate: { ratio: night(1), ciLow: null, ciHigh: null, pairs: 24 } } } },
        ],
      };
      nights++;
      if (h.entries.length < 6) continue;
      const d = detectSteps(h, at);
      alarms += d.newSteps.length;
      h = d.history;
    }
  }
  return { per100: (100 * alarms) / nights, alarms, nights };
}

const t0 = Date.now();
console.log(`# change points, E-divisive means (p ≤ 0.001, 9999 shuffles, min size 3, min magnitude 3 %), ${new Date().toISOString()}`);
for (const r of recordings) {
  console.log(
    `# real A/A rounds ${r.name}: ${r.rounds.length}, per-round log-ratio sd ${pct(sd(r.rounds.map(([a, b]) => Math.log(b / a))))}; ` +
      `a night's HL ratio sd at 12 / 24 / 40 pairs: ${[12, 24, 40].map((p) => pct(sd(Array.from({ length: 2000 }, () => resampled(r.rounds, p)(1))))).join(' / ')}`,
  );
}
console.log(`\n## 1. detection within 3 nights of a step after ${PRE} quiet nights (${CASES} histories each)`);
console.log('noise                         | step   | found by night 1 / 2 / 3     | recall  | precision');
const row = (name: string, night: (f: number) => number, f: number, options?: ChangePointOptions) => {
  const r = detection(night, f, options);
  console.log(
    `${name.padEnd(29)} | ${pct(f - 1).padStart(6)} | ${r.byNight
      .map((_x, i) => pct(r.byNight.slice(0, i + 1).reduce((a, b) => a + b, 0)))
      .join(' / ')
      .padEnd(28)} | ${pct(r.recall).padStart(7)} | ${pct(r.precision).padStart(7)}`,
  );
};
for (const s of [0.005, 0.01, 0.015, 0.02]) row(`normal σ = ${pct(s)}`, normal(s), 0.95);
row('normal σ = 2.0 %', normal(0.02), 0.9);
row('normal σ = 1.0 %, κ searched', normal(0.01), 0.95, { kappa: true });
row('t3, scale 1.0 %', heavy(0.01), 0.95);
for (const r of recordings) {
  for (const pairs of [12, 24, 40]) row(`${r.name.split(' ')[0]}, ${pairs} pairs`, resampled(r.rounds, pairs), 0.95);
  row(`${r.name.split(' ')[0]}, 24 pairs`, resampled(r.rounds, 24), 0.9);
}

console.log(`\n## 2. false alarms: A/A histories searched every night (${o['aa-histories']} × ${o['aa-nights']} nights each)`);
const aa: Array<[string, (f: number) => number]> = [
  ['normal σ = 1 %', normal(0.01)],
  ['normal σ = 2 %', normal(0.02)],
  ['t3, scale 1 %', heavy(0.01)],
  ...recordings.flatMap((r) => [12, 24].map((p): [string, (f: number) => number] => [`${r.name.split(' ')[0]}, ${p} pairs`, resampled(r.rounds, p)])),
];
for (const [name, night] of aa) {
  const r = falseAlarms(night);
  console.log(`${name.padEnd(26)} ${String(r.alarms).padStart(3)} new steps in ${r.nights} nights: ${r.per100.toFixed(2)} per 100 nights`);
}

if (o.history) {
  const h = JSON.parse(readFileSync(o.history, 'utf8')) as NightlyHistory;
  const truth = o.truth !== undefined ? o.truth - 1 : undefined;
  console.log(`\n## 3. recorded history ${o.history}: ${h.entries.length} real nights${truth !== undefined ? `, the regression from night ${truth + 1}` : ''}`);
  const ratios = h.entries.map((e) => e.ratios?.one_fast?.consumed_rate?.ratio);
  const quiet = ratios.slice(0, truth).filter((x): x is number => x !== undefined);
  console.log(
    `A/A nights: ratio sd ${pct(sd(quiet))}; after: ${ratios
      .slice(truth)
      .map((x) => x?.toFixed(3))
      .join(', ')}`,
  );
  let replay: NightlyHistory = { ...h, entries: [], steps: [] };
  let tp = 0;
  let fp = 0;
  let firstHit: number | undefined;
  for (const [k, e] of h.entries.entries()) {
    replay = { ...replay, entries: [...replay.entries, e] };
    const d = detectSteps(replay, e.createdAt);
    for (const s of d.newSteps) {
      const at = h.entries.findIndex((x) => x.createdAt === s.at);
      const ok = truth !== undefined && Math.abs(at - truth) <= 1;
      if (ok) {
        tp++;
        firstHit ??= k;
      } else fp++;
      console.log(`night ${k + 1}: new step ${pct(s.magnitude)} at night ${at + 1} (p = ${s.pValue.toFixed(4)}) — ${ok ? 'the regression' : 'FALSE ALARM'}`);
    }
    replay = d.history;
  }
  const aaNights = truth ?? h.entries.length;
  console.log(
    `recall ${truth === undefined ? '-' : tp ? `100 % (found on night ${firstHit! + 1}, ${firstHit! - truth! + 1} night(s) after the step)` : '0 %'}; precision ${tp + fp ? pct(tp / (tp + fp)) : '-'}; false alarms ${fp} in ${aaNights} A/A nights`,
  );
}
console.log(`\n# ${((Date.now() - t0) / 1000).toFixed(0)} s`);
