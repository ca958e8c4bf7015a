#!/usr/bin/env node
// Time to verdict of real same-run A/Bs through the bundled CLI (dist/cli.js), on the offline
// images: A/A (3.10.8 against itself) and an injected broker regression (the candidate started with
// Erlang `+S 2:1`: two schedulers online, about −21 % on one_fast here; or a cgroup quota of 1.16
// cores, about −13 to −15 %), each as the preset's
// sequential A/B. Per run: wall time (broker boots included), verdict, where each scenario stopped,
// and the trial time the report says it saved against the fixed design.
// With --append, the runs already in --out are kept and the new ones added (a ledger that grows
// across sessions); the summary then covers them all, with the false fails counted and its 95 %
// upper bound, and the runs' answers (regression / no regression of X % / not decided): recorded
// by the gate since it gives them, re-decided for older rows from their gating CIs and the
// margins of src/compare/margins.ts (the rows keep the verdict they were given).
// Arms cpu10 and cpu5 are smaller quotas' worth of regression (calibrate with bench/power.mjs:
// the effect of a quota depends on what else the machine runs; each run's own estimate is kept).
// Arms busy10 and busy5 put a high-priority process in the candidate broker that spins for a fixed
// share of every 20 ms (bench/lib/arms.mjs: busySetup; size them with bench/knob-calibrate.mjs).
// Arms count10 and count5 set call-count breakpoints on every function of some broker modules (a
// fixed cost per call: bench/lib/arms.mjs, countSetup; size them with bench/knob-calibrate.mjs).
//   node_modules/.bin/node bench/time-to-verdict.mjs [--runs 3] [--arms aa,s21 (any arm of bench/lib/arms.mjs: ARM_NOTES lists them)] [--scenarios pr]
//     [--image rabbitmq-perf-gate/rabbitmq:3.10.8] [--cpus10 1.47] [--cpus5 1.55] [--busy10 0.2] [--busy5 0.1] [--count10 mod+mod] [--count5 mod] [--out bench/results/ttv.json] [--append] [--keep DIR] [-- extra CLI args]
// Extra CLI arguments (after `--`) are kept in each row (cliArgs); keep a ledger per set of them.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchArgs, IMAGES, list, optional } from './lib/args.mjs';
import { armArgs, armSize, checkArms, KNOB_DEFAULTS, runArm } from './lib/arms.mjs';
import { median, ROOT } from './lib/common.mjs';
import { writeStripped } from './lib/strip-report.mjs';

const { values: o, positionals } = benchArgs(
  {
    runs: 3,
    arms: list('aa,s21'),
    scenarios: 'pr',
    image: IMAGES.v3,
    out: optional(),
    append: false,
    // Keep each run's report (stripped and gzipped: bench/lib/strip-report.mjs) in this folder.
    keep: optional(),
    // The knobs' sizes (--cpus10, --cpus5, --busy10, --busy5, --count10, --count5): bench/lib/arms.mjs, KNOB_DEFAULTS.
    ...KNOB_DEFAULTS,
  },
  // Everything after `--` (and any other bare argument) goes to every run's CLI as it is.
  { positionals: true },
);
const dir = mkdtempSync(join(tmpdir(), 'perf-gate-ttv-'));
const ARMS = armArgs(dir, o.image, o);
checkArms('time-to-verdict.mjs', o.arms, ARMS);
const previous = o.append && o.out && existsSync(o.out) ? JSON.parse(readFileSync(o.out, 'utf8')) : undefined;
if (previous && (previous.scenarios !== o.scenarios || previous.image !== o.image)) {
  console.error(`${o.out} holds ${previous.scenarios} on ${previous.image}: append runs of the same selection and image, or choose another --out`);
  process.exit(2);
}
const results = previous?.results ?? [];
const nextRun = (arm) => results.filter((r) => r.arm === arm).reduce((n, r) => Math.max(n, r.run), 0) + 1;
const p90 = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(0.9 * s.length) - 1)];
};

const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
for (let i = 0; i < o.runs; i++) {
  for (const arm of o.arms) {
    const run = nextRun(arm);
    const out = join(dir, `${arm}-${run}`);
    const r = runArm(ARMS[arm], { image: o.image, scenarios: o.scenarios, dir, out, cli: ['--seed', String(1000 + run), ...positionals] });
    const wall = r.seconds;
    const report = r.report;
    if (!report) {
      console.error(`${arm} #${run}: no report (exit ${r.status}): ${r.stderr.split('\n').slice(-5).join(' | ')}`);
      continue;
    }
    const q = report.sequential;
    const gating = report.comparisons
      .filter((c) => c.gating)
      .map((c) => ({ scenario: c.scenario, verdict: c.verdict, answer: c.answer, bound: c.bound, ratio: c.ratio, ciLow: c.ciLow, ciHigh: c.ciHigh, n: c.nCandidate }));
    const row = {
      arm,
      run,
      date: new Date().toISOString(),
      commit,
      ...armSize(arm, o),
      ...(positionals.length ? { cliArgs: positionals } : {}),
      wallSeconds: Math.round(wall),
      verdict: report.verdict,
      answer: report.answer,
      stopped: q?.stopped,
      savedSeconds: q?.savedSeconds,
      fixedPairs: q?.fixedPairs,
      gating,
    };
    results.push(row);
    if (o.keep) {
      mkdirSync(o.keep, { recursive: true });
      writeStripped(join(out, 'report.json'), join(o.keep, `${arm}-${run}.report.json.gz`));
    }
    console.log(
      `${arm} #${row.run}: ${row.answer} (${row.verdict}) in ${(wall / 60).toFixed(1)} min; stopped ${JSON.stringify(q?.stopped ?? {})}; saved ${((q?.savedSeconds ?? 0) / 60).toFixed(1)} min of trials; ` +
        gating.map((g) => `${g.scenario} ${g.verdict} ${((g.ratio - 1) * 100).toFixed(1)} % [${((g.ciLow - 1) * 100).toFixed(1)}, ${((g.ciHigh - 1) * 100).toFixed(1)}] n=${g.n}`).join('; '),
    );
    if (o.out) writeFileSync(o.out, JSON.stringify({ scenarios: o.scenarios, image: o.image, results }, null, 1));
  }
}
// One-sided 95 % upper bound of a rate with k events in n runs (exact binomial, Clopper-Pearson).
const upper95 = (k, n) => {
  const cdf = (p) => {
    let s = 0,
      c = 1;
    for (let i = 0; i <= k; i++) {
      s += c * p ** i * (1 - p) ** (n - i);
      c = (c * (n - i)) / (i + 1);
    }
    return s;
  };
  let lo = k / n,
    hi = 1;
  for (let it = 0; it < 60; it++) {
    const mid = (lo + hi) / 2;
    if (cdf(mid) > 0.05) lo = mid;
    else hi = mid;
  }
  return hi;
};
/** A ledger row's answer: as recorded, or re-decided from its gating CIs (rows from before answers). */
const EQUIVALENCE = { throughput: 0.1, churn: 0.1, latency: 0.25, duration: 0.15, memory: 0.15 };
const KIND = { one_fast: 'throughput', one_one_one: 'throughput', fanout10: 'throughput', fivers: 'latency', queue_churn_durable: 'churn' };
function answerOf(r) {
  if (r.answer) return { answer: r.answer, bound: Math.max(...r.gating.filter((g) => KIND[g.scenario] !== 'latency').map((g) => g.bound ?? Number.POSITIVE_INFINITY)), redecided: false };
  const each = r.gating.map((g) => {
    const kind = KIND[g.scenario] ?? 'throughput';
    // Decided as the gate does (a throughput's bad end as the ratio 1/ciLow against 1 + margin),
    // shown as the gate shows it (the drop, 1 − ciLow).
    const worse = kind === 'latency' ? g.ciHigh : 1 / g.ciLow;
    const bound = kind === 'latency' ? g.ciHigh - 1 : 1 - g.ciLow;
    return { kind, bound, answer: g.verdict === 'fail' ? 'regression' : worse - 1 <= EQUIVALENCE[kind] + 1e-9 ? 'no-regression' : 'undecided' };
  });
  const answer = each.some((e) => e.answer === 'regression') ? 'regression' : each.every((e) => e.answer === 'no-regression') ? 'no-regression' : 'undecided';
  return { answer, bound: Math.max(...each.filter((e) => e.kind !== 'latency').map((e) => e.bound)), redecided: true };
}
console.log(
  '\narm\truns\tmedian min\tp90 min\tfixed-design min (same trials + saved)\tverdicts\tfails (95 % upper bound)\tanswers (re-decided: rows before answers)\tgreen bound X (throughput, churn): median; X ≤ 5 %',
);
/** "fail 3, pass 1": how many of `rows` had each verdict, in the order they first appear. */
const verdictCounts = (rows) => {
  const counts = new Map();
  for (const r of rows) counts.set(r.verdict, (counts.get(r.verdict) ?? 0) + 1);
  return [...counts].map(([v, n]) => `${v} ${n}`).join(', ');
};
// One line per arm and knob size (a quota or busy arm's rows may come from several calibrations).
const groups = (rows) => {
  const out = new Map();
  for (const r of rows) {
    if (!o.arms.includes(r.arm)) continue;
    const key = r.cpus ? `${r.arm} (cpus ${r.cpus})` : r.busy ? `${r.arm} (busy ${r.busy})` : r.arm;
    (out.get(key) ?? out.set(key, []).get(key)).push(r);
  }
  return out;
};
// Then the rows the gate answered itself (three answers, looks to 64: the rules as they are now;
// the older rows' times come from older stopping rules), and this commit's rows.
const labelled = (rows, suffix) => [...groups(rows)].map(([k, v]) => [`${k}, ${suffix}`, v]);
for (const [arm, rs] of [
  ...groups(results),
  ...labelled(
    results.filter((r) => r.answer),
    'answered by the gate',
  ),
  ...labelled(
    results.filter((r) => r.commit === commit),
    `${commit} only`,
  ),
]) {
  const mins = rs.map((r) => r.wallSeconds / 60);
  const fixed = rs.map((r) => (r.wallSeconds + (r.savedSeconds ?? 0)) / 60);
  const verdicts = verdictCounts(rs);
  const fails = rs.filter((r) => r.verdict === 'fail').length;
  const answers = rs.map(answerOf);
  const by = (a) => answers.filter((x) => x.answer === a);
  const answerText = ['regression', 'no-regression', 'undecided'].map((a) => `${a} ${by(a).length} (${by(a).filter((x) => x.redecided).length})`).join(', ');
  const green = by('no-regression').map((x) => x.bound);
  const x = green.length ? `${(100 * median(green)).toFixed(1)} %; ${green.filter((b) => b <= 0.05).length}/${green.length}` : '–';
  console.log(
    `${arm}\t${rs.length}\t${median(mins).toFixed(1)}\t${p90(mins)?.toFixed(1)}\t${median(fixed).toFixed(1)}\t${verdicts}\t${fails}/${rs.length} (${(100 * upper95(fails, rs.length)).toFixed(1)} %)\t${answerText}\t${x}`,
  );
}
// Per scenario (a knob's detection where it lands, e.g. with `-- --no-fail-fast`): each gating
// metric's verdicts over the arm's runs.
console.log('\narm\tscenario\tverdicts of its gating metric as recorded (ratio median)');
for (const [arm, rs] of groups(results)) {
  for (const scenario of [...new Set(rs.flatMap((r) => r.gating.map((g) => g.scenario)))]) {
    const gs = rs.flatMap((r) => r.gating.filter((g) => g.scenario === scenario));
    console.log(`${arm}\t${scenario}\t${verdictCounts(gs)} of ${gs.length} (${((median(gs.map((g) => g.ratio)) - 1) * 100).toFixed(1)} %)`);
  }
}
