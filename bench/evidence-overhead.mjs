#!/usr/bin/env node
// What capturing broker evidence costs the measurement: a same-run A/A of two identical broker
// containers in which only the candidate captures evidence (microstate accounting switched on,
// a Prometheus scrape and two cgroup file reads at each window edge) and the reference has
// `evidence: false`. The paired ratio of each gating metric, evidence / none, with its 90 % CI, is
// the overhead; the candidate's evidence medians are printed alongside. Results go to
// bench/results/evidence-overhead/evidence-overhead-<date>.txt; --write also puts the summary into docs/evidence.md.
//
//   node_modules/.bin/node bench/evidence-overhead.mjs [--pairs 12] [--scenarios one_fast,fanout10] [--image rabbitmq-perf-gate/rabbitmq:3.10.8] [--write]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchArgs, IMAGES } from './lib/args.mjs';
import { ROOT } from './lib/common.mjs';

const { values: opt } = benchArgs({ pairs: 12, scenarios: 'one_fast,fanout10', image: IMAGES.v3, write: false });
const dir = mkdtempSync(join(tmpdir(), 'perf-gate-evidence-overhead-'));
writeFileSync(join(dir, 'with.yml'), `label: with evidence\nimage: ${opt.image}\n`);
writeFileSync(join(dir, 'without.yml'), `label: without evidence\nimage: ${opt.image}\nevidence: false\n`);
const args = [
  join(ROOT, 'dist/cli.js'),
  'run',
  '--target',
  'with.yml',
  '--baseline-target',
  'without.yml',
  '--scenarios',
  opt.scenarios,
  '--repetitions',
  String(opt.pairs),
  '--no-sequential',
  '--no-anchor',
  '--baseline-file',
  'none.json',
  '--json',
  '--out',
  join(dir, 'out'),
];
const started = Date.now();
let out;
try {
  out = execFileSync(process.execPath, args, { cwd: dir, encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'inherit'] });
} catch (e) {
  if (e.status === 1 && e.stdout)
    out = e.stdout; // a fail verdict is still a report
  else throw e;
}
const r = JSON.parse(out);
const f = (x, d = 3) => (x === null || x === undefined ? '–' : x.toFixed(d));
const lines = [
  `# evidence overhead, ${new Date().toISOString()}: ${opt.image}, ${opt.scenarios}, ${opt.pairs} pairs, ${((Date.now() - started) / 60000).toFixed(1)} min`,
  '',
  'Gating metrics, with evidence / without (paired, 90 % CI):',
  '',
  '| scenario | metric | ratio [90 % CI] | pairs | verdict |',
  '|---|---|--:|--:|---|',
];
for (const c of r.comparisons.filter((x) => x.gating)) lines.push(`| ${c.scenario} | ${c.metric} | ${f(c.ratio)} [${f(c.ciLow)}, ${f(c.ciHigh)}] | ${c.nCandidate} | ${c.verdict} |`);
lines.push('', "The capturing target's evidence (median of its valid trials):", '', '| scenario | evidence | median |', '|---|---|--:|');
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2 : null;
};
for (const s of r.scenarios) {
  const ts = r.trials.filter((t) => t.scenario === s.id && t.target === r.candidate && t.valid && t.evidence);
  for (const k of Object.keys(ts[0]?.evidence ?? {})) lines.push(`| ${s.id} | ${k} | ${f(median(ts.map((t) => t.evidence[k])))} |`);
}
const text = lines.join('\n');
console.log(text);
const stamp = new Date().toISOString().slice(0, 10);
writeFileSync(join(ROOT, `bench/results/evidence-overhead/evidence-overhead-${stamp}.txt`), `${text}\n`);
if (opt.write) {
  const file = join(ROOT, 'docs/evidence.md');
  const doc = readFileSync(file, 'utf8');
  const [b, e] = ['<!-- evidence-overhead:begin -->', '<!-- evidence-overhead:end -->'];
  const summary = lines
    .slice(0, lines.indexOf("The capturing target's evidence (median of its valid trials):"))
    .join('\n')
    .trim()
    .replace(/^# evidence overhead, /, 'Last run: ');
  writeFileSync(file, `${doc.slice(0, doc.indexOf(b) + b.length)}\n${summary}\n${doc.slice(doc.indexOf(e))}`);
}
