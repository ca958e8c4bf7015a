#!/usr/bin/env node
// Real bisects through the bundled CLI: --count local image tags made from the offline 3.10.8 image
// (test/support/bisect-images.ts), the tags from --culprit on carrying a broker-side regression:
// --knob credit (credit_flow_default_credit lowered to --credit in an advanced.config; {14, 7} is
// about −15 % on one_fast here but drifts, {10, 5} −27 to −54 %, {2, 1} −65 %) or a rabbitmq.conf
// arm of bench/lib/arms.mjs in conf.d (--knob embed0: queue_index_embed_msgs_below = 0, measured
// −12.8 % on one_one_one and −24.5 % on fanout10, one_fast unmoved, steady over hours), judged on
// --scenario's gating metric (one_fast, one_one_one or fanout10); --broken tags whose command exits
// at once. --runs bisects, each from a fresh state file (the culprit's position drawn at random
// with --culprit random). Per run: every step (image, outcome, verdict, ratio, pairs, seconds), the
// verdicts against ⌈log₂ N⌉ + 1, the wall time, and whether the culprit was found; then a summary.
// With --measure N, a fixed N-pair A/B of the last tag against the first says how large the step
// really was on this machine at that moment, and the knob is read back from both brokers' `rabbit`
// application environment (the report's effective configuration): set on the last tag, not on the first.
//   node_modules/.bin/node bench/bisect.mjs [--runs 3] [--count 8] [--culprit 5|random] [--knob credit|embed0] [--credit 14,7]
//        [--scenario one_fast] [--broken 6] [--tolerance 0.1] [--looks 10,12,16,24,32,40] [--duration 2] [--warmup 1]
//        [--measure 16] [--seed 34] [--out bench/results/bisect/bisect.json]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchArgs, numberList, optional } from './lib/args.mjs';
import { CONF_LINES } from './lib/arms.mjs';
import { bundle, median, ROOT } from './lib/common.mjs';

const { values: o } = benchArgs({
  runs: 3,
  count: 8,
  culprit: '5',
  knob: 'credit',
  credit: numberList('14,7'),
  scenario: 'one_fast',
  broken: numberList(''),
  tolerance: 0.1,
  looks: '10,12,16,24,32,40',
  duration: 2,
  warmup: 1,
  measure: 0,
  seed: 34,
  out: optional(),
});
const N = o.count;
const bound = Math.ceil(Math.log2(N)) + 1;
const dir = mkdtempSync(join(tmpdir(), 'perf-gate-bisect-bench-'));
if (o.knob !== 'credit' && !CONF_LINES[o.knob]) {
  console.error(`bisect.mjs: unknown --knob ${o.knob} (credit or one of ${Object.keys(CONF_LINES).join(', ')})`);
  process.exit(2);
}
if (!['one_fast', 'one_one_one', 'fanout10'].includes(o.scenario)) {
  console.error(`bisect.mjs: --scenario ${o.scenario} is not one_fast, one_one_one or fanout10`);
  process.exit(2);
}
const scenario = join(dir, `${o.scenario}.yml`);
const scenarioText = readFileSync(join(ROOT, `scenarios/${o.scenario}.yml`), 'utf8');
const gateMetric = /^gate: \[(\w+)\]$/m.exec(scenarioText)[1];
writeFileSync(scenario, `${scenarioText.replace(/^tolerances:.*$/m, '').trimEnd()}\ntolerances: { ${gateMetric}: ${o.tolerance} }\n`);
const { buildImageSeries, confRegression, creditRegression } = await import(await bundle('test/support/bisect-images.ts'));
const regression = o.knob === 'credit' ? creditRegression(o.credit) : confRegression(CONF_LINES[o.knob]);
const knobText = o.knob === 'credit' ? `credit_flow_default_credit {${o.credit}}` : CONF_LINES[o.knob];
let seed = o.seed;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};

function cli(args) {
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), ...args], { cwd: dir, encoding: 'utf8', timeout: 4 * 3_600_000, maxBuffer: 256 << 20 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, seconds: (Date.now() - t0) / 1000 };
}

/** The knob as the brokers ran it in the --measure run, read back from their `rabbit` application
 *  environment (report.targets[].effective.node, src/broker/effective.ts): the last (bad) tag must
 *  carry it, the first (good) tag must not. */
const KNOB_KEY = o.knob === 'credit' ? 'credit_flow_default_credit' : CONF_LINES[o.knob].split('=')[0].trim();
const KNOB_BAD = o.knob === 'credit' ? `{${o.credit}}` : CONF_LINES[o.knob].split('=')[1].trim();
function knobReadBack(targets, images) {
  const value = (image) => targets.find((t) => t.image === image)?.effective?.node?.[KNOB_KEY];
  const bad = value(images[N - 1]);
  const good = value(images[0]);
  const ok = bad !== undefined && bad.replace(/\s/g, '') === KNOB_BAD.replace(/\s/g, '') && good !== bad;
  return { ok, text: `${KNOB_KEY} = ${bad ?? '(not read)'} on image ${N}, ${good ?? '(unset: the default)'} on image 1 — ${ok ? 'as built' : 'NOT AS BUILT'}` };
}

const runs = [];
console.log(
  `# ${o.runs} bisects of ${N} images, culprit ${o.culprit}, ${knobText}, broken ${o.broken.length ? o.broken : 'none'}; ${o.scenario} ${o.warmup}+${o.duration} s, tolerance ${o.tolerance} on ${gateMetric}, looks ${o.looks}; bound ⌈log₂ ${N}⌉ + 1 = ${bound}; ${new Date().toISOString()}`,
);
for (let k = 0; k < o.runs; k++) {
  const culprit = o.culprit === 'random' ? 2 + Math.floor(random() * (N - 1)) : Number(o.culprit);
  const series = buildImageSeries({ repo: `rabbitmq-perf-gate/bisect-bench-${process.pid}-${k}`, count: N, regressFrom: culprit, broken: o.broken, regression });
  try {
    let measured = '';
    let readBack;
    if (o.measure > 0) {
      const m = cli([
        'run',
        '--image',
        series.images[N - 1],
        '--baseline-image',
        series.images[0],
        '--scenarios',
        scenario,
        '--duration',
        String(o.duration),
        '--warmup',
        String(o.warmup),
        '--repetitions',
        String(o.measure),
        '--json',
        '--out',
        join(dir, `measure-${k}`),
        '--baseline-file',
        join(dir, 'none.json'),
      ]);
      const mr = m.code === 0 || m.code === 1 ? JSON.parse(m.stdout) : undefined;
      const c = mr?.comparisons.find((x) => x.gating && x.paired);
      readBack = mr ? knobReadBack(mr.targets, series.images) : { ok: false, text: `not read: the measuring run failed (exit ${m.code})` };
      measured = c
        ? `; the step measured (${o.measure} pairs, last vs first): ${((c.ratio - 1) * 100).toFixed(1)} % [${((c.ciLow - 1) * 100).toFixed(1)}, ${((c.ciHigh - 1) * 100).toFixed(1)}]`
        : `; measuring failed (exit ${m.code})`;
    }
    const r = cli([
      'bisect',
      '--images',
      series.images.join(','),
      '--scenarios',
      scenario,
      '--duration',
      String(o.duration),
      '--warmup',
      String(o.warmup),
      '--looks',
      o.looks,
      '--out',
      join(dir, `run-${k}`),
      '--time-limit',
      '0',
      '--json',
    ]);
    if (r.code !== 0 && r.code !== 1) throw new Error(`bisect ${k + 1} failed (exit ${r.code}): ${r.stderr.slice(-3000)}`);
    const rep = JSON.parse(r.stdout);
    const found = rep.status.state === 'found' && rep.status.culprit === culprit - 1;
    const steps = rep.state.steps.map((s) => ({ position: s.index + 1, outcome: s.outcome, verdict: s.verdict, ratio: s.ratio, pairs: s.pairs, seconds: s.seconds }));
    runs.push({
      run: k + 1,
      culprit,
      found,
      status: rep.status.state,
      named: rep.status.culprit === undefined ? null : rep.status.culprit + 1,
      suspects: rep.status.suspects.map((i) => i + 1),
      verdicts: rep.status.verdicts,
      wall: Math.round(r.seconds),
      steps,
      measured,
      readBack,
    });
    console.log(
      `run ${k + 1}: culprit ${culprit} → ${rep.status.state}${rep.status.culprit !== undefined ? ` ${rep.status.culprit + 1}` : ` (suspects ${rep.status.suspects.map((i) => i + 1).join(', ')})`} ${found ? 'FOUND' : 'MISSED'}; ${rep.status.verdicts} verdicts (bound ${bound}), ${(r.seconds / 60).toFixed(1)} min wall${measured}`,
    );
    if (readBack) console.log(`  broker side: ${readBack.text}`);
    for (const s of steps)
      console.log(
        `  image ${s.position}: ${s.outcome}${s.verdict ? ` (${s.verdict})` : ''}${s.ratio ? ` ratio ${s.ratio.toFixed(3)}` : ''}${s.pairs ? `, ${s.pairs} pairs` : ''}, ${(s.seconds / 60).toFixed(1)} min`,
      );
  } finally {
    series.remove();
  }
}
const found = runs.filter((r) => r.found).length;
const readBacks = runs.filter((r) => r.readBack);
if (readBacks.length) console.log(`# broker side: the knob read back as built in ${readBacks.filter((r) => r.readBack.ok).length} of ${readBacks.length} runs`);
const decided = runs.flatMap((r) => r.steps.filter((s) => s.outcome !== 'skipped'));
console.log(
  `# summary: culprit found in ${found} of ${runs.length}; verdicts median ${median(runs.map((r) => r.verdicts))}, max ${Math.max(...runs.map((r) => r.verdicts))} (bound ${bound}), within the bound in ${runs.filter((r) => r.verdicts <= bound).length} of ${runs.length}; ` +
    `wall median ${(median(runs.map((r) => r.wall)) / 60).toFixed(1)} min; a step (one A/B, boots included) median ${(median(decided.map((s) => s.seconds)) / 60).toFixed(1)} min, its pairs median ${median(decided.map((s) => s.pairs ?? 0))}`,
);
if (o.out) writeFileSync(o.out, `${JSON.stringify({ options: o, date: new Date().toISOString(), runs }, null, 1)}\n`);
rmSync(dir, { recursive: true, force: true });
