#!/usr/bin/env node
// Time to verdict of real same-run A/Bs through the bundled CLI (dist/cli.js), on the offline
// images: A/A (3.10.8 against itself) and an injected broker regression (the candidate started with
// Erlang `+S 2:1`: two schedulers online, about −21 % on one_fast here), each as the preset's
// sequential A/B. Per run: wall time (broker boots included), verdict, where each scenario stopped,
// and the trial time the report says it saved against the fixed design.
//   node_modules/.bin/node bench/time-to-verdict.mjs [--runs 3] [--arms aa,s21] [--scenarios pr] [--out bench/results/ttv.json] [-- extra CLI args]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { median, ROOT } from './lib/common.mjs';

const { values: o, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    runs: { type: 'string', default: '3' },
    arms: { type: 'string', default: 'aa,s21' },
    scenarios: { type: 'string', default: 'pr' },
    image: { type: 'string', default: 'rabbitmq-perf-gate/rabbitmq:3.10.8' },
    out: { type: 'string' },
  },
});
const dir = mkdtempSync(join(tmpdir(), 'perf-gate-ttv-'));
writeFileSync(join(dir, 's21.yml'), `label: +S 2:1\nimage: ${o.image}\nenv:\n  RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: "+S 2:1"\n`);
const ARMS = {
  aa: ['--image', o.image, '--broker-label', 'A/A candidate'],
  s21: ['--target', join(dir, 's21.yml')],
};
const results = [];
const p90 = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil(0.9 * s.length) - 1)]; };

for (let i = 0; i < Number(o.runs); i++) {
  for (const arm of o.arms.split(',')) {
    const t0 = Date.now();
    const out = join(dir, `${arm}-${i}`);
    const r = spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'run', '--scenarios', o.scenarios, ...ARMS[arm], '--baseline-image', o.image,
      '--baseline-file', join(dir, 'none.json'), '--out', out, '--json', '--seed', String(1000 + i), ...positionals], { encoding: 'utf8', maxBuffer: 1 << 30 });
    const wall = (Date.now() - t0) / 1000;
    let report;
    try { report = JSON.parse(r.stdout); } catch { console.error(`${arm} #${i + 1}: no report (exit ${r.status}): ${r.stderr.split('\n').slice(-5).join(' | ')}`); continue; }
    const q = report.sequential;
    const gating = report.comparisons.filter((c) => c.gating).map((c) => ({ scenario: c.scenario, verdict: c.verdict, ratio: c.ratio, ciLow: c.ciLow, ciHigh: c.ciHigh, n: c.nCandidate }));
    const row = { arm, run: i + 1, wallSeconds: Math.round(wall), verdict: report.verdict, stopped: q?.stopped, savedSeconds: q?.savedSeconds, fixedPairs: q?.fixedPairs, gating };
    results.push(row);
    console.log(`${arm} #${i + 1}: ${row.verdict} in ${(wall / 60).toFixed(1)} min; stopped ${JSON.stringify(q?.stopped ?? {})}; saved ${((q?.savedSeconds ?? 0) / 60).toFixed(1)} min of trials; `
      + gating.map((g) => `${g.scenario} ${g.verdict} ${((g.ratio - 1) * 100).toFixed(1)} % [${((g.ciLow - 1) * 100).toFixed(1)}, ${((g.ciHigh - 1) * 100).toFixed(1)}] n=${g.n}`).join('; '));
    if (o.out) writeFileSync(o.out, JSON.stringify({ scenarios: o.scenarios, image: o.image, results }, null, 1));
  }
}
console.log('\narm\truns\tmedian min\tp90 min\tfixed-design min (same trials + saved)\tverdicts');
for (const arm of o.arms.split(',')) {
  const rs = results.filter((r) => r.arm === arm);
  const mins = rs.map((r) => r.wallSeconds / 60);
  const fixed = rs.map((r) => (r.wallSeconds + (r.savedSeconds ?? 0)) / 60);
  const counts = new Map();
  for (const r of rs) counts.set(r.verdict, (counts.get(r.verdict) ?? 0) + 1);
  const verdicts = [...counts].map(([v, n]) => `${v} ${n}`).join(', ');
  console.log(`${arm}\t${rs.length}\t${median(mins).toFixed(1)}\t${p90(mins)?.toFixed(1)}\t${median(fixed).toFixed(1)}\t${verdicts}`);
}

