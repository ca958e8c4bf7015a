#!/usr/bin/env node
// A runner's noise, per gating metric, from the report.json of an A/A run (the same broker twice,
// e.g. `run --image X --baseline-image X --repetitions 10`): the trial-to-trial spread of each
// target (sd of log values), the spread of the rounds' pair ratios (what the same-run test sees)
// and what it would be if the pairs were not paired, and the run's own ratio and CI. Use it to
// choose tolerances: a tolerance below about 2·(pair sd)/√n leaves most runs inconclusive.
//   node bench/aa-noise.mjs rabbitmq-perf-gate-report/report.json
import { readFileSync } from 'node:fs';
import { benchArgs } from './lib/args.mjs';
import { sd } from './lib/common.mjs';

const [file] = benchArgs({}, { positionals: true }).positionals;
if (!file) {
  console.error('usage: node bench/aa-noise.mjs REPORT.json   (the report of a same-run A/B, ideally A/A)');
  process.exit(2);
}
const r = JSON.parse(readFileSync(file, 'utf8'));
const reference = r.targets.find((t) => t.id !== r.candidate)?.id;
if (!reference) {
  console.error(`${file}: one target only; run an A/B (--baseline-image or --baseline-target) to measure pair noise`);
  process.exit(2);
}
const pct = (x) => `${(x * 100).toFixed(1)} %`;
const rows = [['scenario', 'metric', `sd ${reference}`, `sd ${r.candidate}`, 'pair sd', 'unpaired equiv.', 'pairs', 'ratio [CI]', 'verdict']];
for (const s of r.scenarios) {
  for (const metric of s.gate) {
    const byRound = (target) => new Map(r.trials.filter((t) => t.scenario === s.id && t.target === target && t.valid && t.metrics[metric] > 0).map((t) => [t.trial, t.metrics[metric]]));
    const a = byRound(reference);
    const c = byRound(r.candidate);
    const la = [...a.values()].map(Math.log);
    const lc = [...c.values()].map(Math.log);
    const d = [...c.keys()].filter((k) => a.has(k)).map((k) => Math.log(c.get(k) / a.get(k)));
    const cmp = r.comparisons.find((x) => x.scenario === s.id && x.metric === metric && x.against === reference);
    const ci = cmp?.ratio ? `${cmp.ratio.toFixed(3)} [${cmp.ciLow?.toFixed(3)}, ${cmp.ciHigh?.toFixed(3)}]` : '–';
    rows.push([s.id, metric, pct(sd(la)), pct(sd(lc)), pct(sd(d)), pct(Math.sqrt(sd(la) ** 2 + sd(lc) ** 2)), String(d.length), ci, cmp?.verdict ?? '–']);
  }
}
const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
for (const row of rows)
  console.log(
    row
      .map((x, i) => x.padEnd(widths[i]))
      .join('  ')
      .trimEnd(),
  );
console.log(`\n${r.trials.length} trials (${r.trials.filter((t) => !t.valid).length} invalid) in ${r.durationSeconds} s; sd of log values ≈ relative spread.`);
