#!/usr/bin/env node
// Variance-reduction experiments on real brokers (issue 32): the pair-to-pair spread of each
// gating metric in real A/A runs of a preset (fixed design, the same image on both sides through
// the bundled CLI), under several arms run alternately in one session, so that the machine's
// hour affects every arm alike. An arm is a way of running the same A/A:
//   base     the gate as it ships (both brokers on every core, the idle one frozen)
//   pin      the load generator on CPU 0 (taskset) and both brokers on CPU 1 (target files'
//            resources.cpuset), so the generator and the measured broker never share a core
//   pingen   only the generator pinned (CPU 0); brokers on every core
//   shm      both brokers keep their database and message store in the container's /dev/shm
//            (env RABBITMQ_MNESIA_BASE): no disk writes and no fsync waits, which the machine's
//            other work makes uneven (one_one_one confirms after each persist; queue_churn_durable
//            writes each durable queue's declaration)
//   w1       1 s windows (1 s warm-up), w05: 0.5 s warm-up and 1.5 s window, w15: 1 s warm-up and
//            1.5 s window — shorter trials, more pairs a minute; compared by information per minute,
//            1 / (pair variance × seconds a pair), and (with --reference) by the effect estimated
// A /proc/stat sampler runs beside every run, so each trial's window also gets the machine's
// steal and iowait share, and the spread is printed before and after a CUPED-style adjustment of
// the pair log ratios on the pair's difference in those covariates (θ fitted per arm).
// With --reference IMAGE the runs are A/Bs (--image the candidate, IMAGE the reference) instead of
// A/As, and the median pair ratio each arm estimates is printed too: an arm that changes how a
// trial measures must leave a real difference where it was (not only shrink the spread).
// Reports are kept (--keep DIR, gzipped; --from reads them back) so that every figure can be recomputed.
//   node_modules/.bin/node bench/variance.mjs [--arms base,pin] [--runs 3] [--pairs 12] [--scenarios pr]
//     [--image rabbitmq-perf-gate/rabbitmq:3.10.8] [--reference IMAGE] [--keep bench/results/variance/NAME] [--from DIR] [-- extra CLI args]
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { benchArgs, IMAGES, list, optional } from './lib/args.mjs';
import { bundle, median, ROOT, sd, table } from './lib/common.mjs';

const { values: o, positionals } = benchArgs(
  { arms: list('base,pin'), runs: 3, pairs: 12, scenarios: 'pr', image: IMAGES.v3, reference: optional(), keep: optional(), from: optional() },
  // Everything after `--` (and any other bare argument) goes to every run's CLI as it is.
  { positionals: true },
);

const tmp = mkdtempSync(join(tmpdir(), 'perf-gate-variance-'));
/** A target file; the baseline side's (name ending in 2) runs --reference when given. */
const target = (name, cpuset, env = '') => {
  const f = join(tmp, `${name}.yml`);
  const image = name.endsWith('2') ? (o.reference ?? o.image) : o.image;
  writeFileSync(f, `label: ${name}\nimage: ${image}\n${cpuset ? `resources:\n  cpuset: "${cpuset}"\n` : ''}${env ? `env:\n  ${env}\n` : ''}`);
  return f;
};
const SHM = 'RABBITMQ_MNESIA_BASE: /dev/shm/rabbitmq';
const ARMS = {
  base: { pin: undefined, args: ['--target', target('A', ''), '--baseline-target', target('A2', '')] },
  pin: { pin: '0', args: ['--target', target('pA', '1'), '--baseline-target', target('pA2', '1')] },
  pingen: { pin: '0', args: ['--target', target('gA', ''), '--baseline-target', target('gA2', '')] },
  shm: { pin: undefined, args: ['--target', target('sA', '', SHM), '--baseline-target', target('sA2', '', SHM)] },
  w1: { pin: undefined, args: ['--target', target('wA', ''), '--baseline-target', target('wA2', ''), '--warmup', '1', '--duration', '1'] },
  w05: { pin: undefined, args: ['--target', target('vA', ''), '--baseline-target', target('vA2', ''), '--warmup', '0.5', '--duration', '1.5'] },
  w15: { pin: undefined, args: ['--target', target('uA', ''), '--baseline-target', target('uA2', ''), '--warmup', '1', '--duration', '1.5'] },
};

/** /proc/stat's aggregate line every 200 ms: [ms, user, nice, system, idle, iowait, irq, softirq, steal]. */
function sampler() {
  const samples = [];
  const read = () => {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number);
    samples.push([Date.now(), ...f]);
  };
  read();
  const t = setInterval(read, 200);
  return { samples, stop: () => clearInterval(t) };
}

/** Share of the machine's CPU time in [from, to] spent in steal and iowait. */
function covariates(samples, from, to) {
  const at = (ms) => samples.reduce((best, s) => (Math.abs(s[0] - ms) < Math.abs(best[0] - ms) ? s : best), samples[0]);
  const a = at(from);
  const b = at(to);
  const d = b.map((x, i) => x - a[i]);
  const total = d.slice(1).reduce((x, y) => x + y, 0) || 1;
  return { steal: d[8] / total, iowait: d[5] / total };
}

function runOnce(arm, seed, outDir) {
  const a = ARMS[arm];
  const cli = [
    join(ROOT, 'dist/cli.js'),
    'run',
    '--scenarios',
    o.scenarios,
    ...a.args,
    '--repetitions',
    String(o.pairs),
    '--baseline-file',
    join(tmp, 'none.json'),
    '--out',
    outDir,
    '--json',
    '--seed',
    String(seed),
    ...positionals,
  ];
  const [cmd, args] = a.pin ? ['taskset', ['-c', a.pin, process.execPath, ...cli]] : [process.execPath, cli];
  return new Promise((resolve) => {
    const s = sampler();
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (b) => {
      out += b;
    });
    child.stderr.on('data', (b) => {
      err += b;
    });
    child.on('close', (code) => {
      s.stop();
      try {
        const report = JSON.parse(out);
        const windowOf = (t) => {
          const sc = report.scenarios.find((x) => x.id === t.scenario);
          const start = Date.parse(t.startedAt) + sc.warmupSeconds * 1000;
          return [start, start + sc.durationSeconds * 1000];
        };
        for (const t of report.trials) t.machine = covariates(s.samples, ...windowOf(t));
        resolve(report);
      } catch {
        console.error(`${arm}: no report (exit ${code}): ${err.split('\n').slice(-4).join(' | ')}`);
        resolve(undefined);
      }
    });
  });
}

/** Per gating metric of a report: the pairs' log ratios and their covariate differences. */
function pairsOf(r) {
  const ref = r.targets.find((t) => t.id !== r.candidate).id;
  const out = {};
  for (const s of r.scenarios) {
    for (const metric of s.gate) {
      const by = (target) => new Map(r.trials.filter((t) => t.scenario === s.id && t.target === target && t.valid && t.metrics[metric] > 0).map((t) => [t.trial, t]));
      const a = by(ref);
      const c = by(r.candidate);
      const rows = [...c.keys()]
        .filter((k) => a.has(k))
        .map((k) => ({
          d: Math.log(c.get(k).metrics[metric] / a.get(k).metrics[metric]),
          x: c.get(k).machine ? [c.get(k).machine.steal - a.get(k).machine.steal, c.get(k).machine.iowait - a.get(k).machine.iowait] : [0, 0],
        }));
      out[`${s.id} ${metric}`] = rows;
    }
  }
  return out;
}

/** Pair sd after regressing d on the covariate differences (one covariate at a time, the better one). */
function cuped(rows) {
  let best = sd(rows.map((r) => r.d));
  for (const k of [0, 1]) {
    const x = rows.map((r) => r.x[k]);
    const vx = sd(x) ** 2;
    if (!(vx > 0)) continue;
    const mx = x.reduce((p, q) => p + q, 0) / x.length;
    const md = rows.reduce((p, r) => p + r.d, 0) / rows.length;
    const theta = rows.reduce((p, r, i) => p + (r.d - md) * (x[i] - mx), 0) / (rows.length - 1) / vx;
    best = Math.min(best, sd(rows.map((r, i) => r.d - theta * (x[i] - mx))));
  }
  return best;
}

const reports = {};
if (o.from) {
  for (const f of readdirSync(o.from)
    .filter((f) => /\.json(\.gz)?$/.test(f))
    .sort()) {
    const [arm] = f.split('-');
    const raw = readFileSync(join(o.from, f));
    (reports[arm] ??= []).push(JSON.parse((f.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8')));
  }
} else {
  if (o.keep) mkdirSync(o.keep, { recursive: true });
  const arms = o.arms;
  for (const a of arms) if (!ARMS[a]) throw new Error(`unknown arm ${a}; one of ${Object.keys(ARMS).join(', ')}`);
  if (arms.some((a) => ARMS[a].pin) && spawnSync('taskset', ['-V']).status !== 0) throw new Error('taskset (util-linux) is needed for the pinned arms');
  for (let run = 1; run <= o.runs; run++) {
    for (const arm of run % 2 ? arms : [...arms].reverse()) {
      const t0 = Date.now();
      const r = await runOnce(arm, 7000 + run, join(tmp, `${arm}-${run}`));
      if (!r) continue;
      (reports[arm] ??= []).push(r);
      if (o.keep) writeFileSync(join(o.keep, `${arm}-${String(run).padStart(2, '0')}.json.gz`), gzipSync(JSON.stringify({ ...r, trials: r.trials.map(({ series, histograms, ...t }) => t) })));
      const per = Object.entries(pairsOf(r))
        .map(([k, rows]) => `${k.split(' ')[0]} ${(sd(rows.map((x) => x.d)) * 100).toFixed(1)}`)
        .join(', ');
      console.log(`${arm} #${run}: ${((Date.now() - t0) / 60000).toFixed(1)} min, pair sd % ${per}`);
    }
  }
}

console.log(`\npair sd of the log ratio per gating metric (median over runs / pooled over all pairs; after CUPED on steal or iowait, pooled)`);
const keys = [
  ...new Set(
    Object.values(reports)
      .flat()
      .flatMap((r) => Object.keys(pairsOf(r))),
  ),
];
const spread = keys.map((k) => [
  k,
  ...Object.keys(reports).map((a) => {
    const per = reports[a].map((r) => pairsOf(r)[k] ?? []).filter((x) => x.length > 2);
    const pooled = per.flat();
    if (!pooled.length) return '–';
    return `${(median(per.map((x) => sd(x.map((y) => y.d)))) * 100).toFixed(1)} / ${(sd(pooled.map((y) => y.d)) * 100).toFixed(1)} → ${(cuped(pooled) * 100).toFixed(1)} %`;
  }),
]);
console.log(table(['metric', ...Object.keys(reports).map((a) => `${a} (${reports[a].length} runs)`)], spread));
// The effect each arm estimates: the median pair ratio over all its pairs (an A/A's is noise around
// 0), and whether another arm's pair ratios differ from the first arm's (the gate's own Mann–Whitney).
const { mannWhitneyExact } = await import(await bundle('src/compare/stats.ts'));
const arms = Object.keys(reports);
const logRatios = (a, k) => reports[a].flatMap((r) => pairsOf(r)[k] ?? []).map((y) => y.d);
console.log(`\nmedian pair ratio (candidate / reference) per gating metric, pooled over the arm's pairs; p: its pairs against ${arms[0]}'s`);
console.log(
  table(
    ['metric', ...arms.map((a) => `${a} (pairs${a === arms[0] ? '' : ', p'})`)],
    keys.map((k) => [
      k,
      ...arms.map((a) => {
        const d = logRatios(a, k);
        if (!d.length) return '–';
        const base = logRatios(arms[0], k);
        const p = a === arms[0] || !base.length ? '' : `, p ${mannWhitneyExact(d, base).p.toFixed(2)}`;
        return `${((Math.exp(median(d)) - 1) * 100).toFixed(1)} % (${d.length}${p})`;
      }),
    ]),
  ),
);
/** Median over gating metrics of (pair variance × seconds a pair): lower is more information a minute. */
const cost = (a) => {
  const perPair = median(reports[a].map((r) => r.durationSeconds / (r.repetitions * r.scenarios.length)));
  const v = keys.map((k) => sd(reports[a].flatMap((r) => pairsOf(r)[k] ?? []).map((y) => y.d)) ** 2).filter((x) => x > 0);
  return { perPair, each: keys.map((k) => sd(reports[a].flatMap((r) => pairsOf(r)[k] ?? []).map((y) => y.d)) ** 2 * perPair), v };
};
const first = Object.keys(reports)[0];
for (const a of Object.keys(reports)) {
  const c = cost(a);
  const b = cost(first);
  const rel = c.each.map((x, i) => b.each[i] / x).filter(Number.isFinite);
  console.log(`${a}: ${c.perPair.toFixed(1)} s a scenario pair; information a minute against ${first}, per metric: ${rel.map((x) => x.toFixed(2)).join(', ')} (median ${median(rel).toFixed(2)})`);
}
for (const a of Object.keys(reports)) {
  const walls = reports[a].map((r) => r.durationSeconds / 60);
  const steal = reports[a].flatMap((r) => r.trials.map((t) => t.machine?.steal ?? 0));
  console.log(`${a}: run wall ${median(walls).toFixed(1)} min (median), steal ${(median(steal) * 100).toFixed(1)} % of CPU time (median trial)`);
}
if (existsSync(tmp) && !o.keep) console.log(`(reports not kept; --keep DIR keeps them)`);
