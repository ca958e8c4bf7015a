#!/usr/bin/env node
// Throughput and the load generator's own cost per protocol, and memory per MQTT connection by
// version, on this machine:
// 1. on each image, the same workload over every protocol (protocols_one_fast) and each protocol's
//    own scenarios, N trials each: medians of the rates and latency, and of the generator's CPU per
//    message and cores busy, with the share of trials whose generator was saturated (its event
//    loop full: then the client library, not the broker, set the pace);
// 2. a same-run A/B of the two images on mqtt_idle_connections: the paired ratio of memory per
//    connection with its 90 % CI (the 3.12 native-MQTT post: about 94 % less).
// Results go to bench/results/protocols/protocols-<date>.txt; --write also puts them into docs/performance.md.
//
//   node_modules/.bin/node bench/protocols.mjs [--trials 3] [--pairs 10] [--images rabbitmq-perf-gate/rabbitmq:4.0.5,rabbitmq-perf-gate/rabbitmq:3.10.8] [--write]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchArgs, IMAGES, list } from './lib/args.mjs';
import { ROOT } from './lib/common.mjs';

const { values: opt } = benchArgs({
  trials: 3,
  pairs: 10,
  images: list([IMAGES.v4, IMAGES.v3]),
  scenarios: 'protocols_one_fast,stream_one_fast,stream_consume_only,mqtt_pubsub,amqp10_one_fast',
  write: false,
});
const images = opt.images;
const dir = mkdtempSync(join(tmpdir(), 'perf-gate-protocols-'));
const started = Date.now();

/** The CLI's JSON report (a fail verdict is still a report). */
function gate(args) {
  try {
    return JSON.parse(
      execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'run', ...args, '--no-anchor', '--baseline-file', 'none.json', '--json', '--out', join(dir, 'out')], {
        cwd: dir,
        encoding: 'utf8',
        maxBuffer: 1 << 30,
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
  } catch (e) {
    if (e.status === 1 && e.stdout) return JSON.parse(e.stdout);
    throw e;
  }
}
const median = (xs) => {
  const s = xs.filter((x) => typeof x === 'number').sort((a, b) => a - b);
  return s.length ? (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2 : null;
};
const n0 = (x) => (x === null ? '–' : Math.round(x).toLocaleString('en-US'));
const f = (x, d = 2) => (x === null || x === undefined ? '–' : x.toFixed(d));

const lines = [
  `# protocols, ${new Date().toISOString()}: ${opt.trials} trials per scenario and image, ${opt.pairs} pairs for memory, ${opt.scenarios}`,
  '',
  '| image | scenario | published msg/s | consumed msg/s | latency p99 ms | generator µs/msg | generator cores | saturated | client |',
  '|---|---|--:|--:|--:|--:|--:|--:|---|',
];
for (const image of images) {
  const r = gate(['--image', image, '--scenarios', opt.scenarios, '--repetitions', String(opt.trials)]);
  for (const s of r.scenarios) {
    const ts = r.trials.filter((t) => t.scenario === s.id && t.valid);
    if (!ts.length) continue;
    const m = (k) => median(ts.map((t) => t.metrics[k]));
    const g = (k) => median(ts.map((t) => t.generator?.[k]));
    const sat = ts.filter((t) => t.generator?.saturated).length;
    const client = ts[0].generator?.client ?? `amqplib (${ts[0].generator?.amqpPath ?? '?'} path)`;
    lines.push(
      `| ${image.split(':').pop()} | ${s.id} | ${n0(m('published_rate'))} | ${n0(m('consumed_rate'))} | ${f(m('latency_p99_ms'), 1)} | ${f(g('cpuMicrosPerMessage'))} | ${f(g('cpuCores'))} | ${sat}/${ts.length} | ${client} |`,
    );
  }
  for (const e of r.errors) lines.push(`| ${image.split(':').pop()} | ${e.scope} | skipped: ${e.message.replace(/^Skipped[^:]*: /, '').replace(/\|/g, '/')} |||||||`);
}

const [a, b] = images;
const ab = gate(['--image', a, '--baseline-image', b, '--scenarios', 'mqtt_idle_connections', '--repetitions', String(opt.pairs), '--no-sequential']);
lines.push(
  '',
  `Memory per idle MQTT connection (2,000 connections), ${a.split(':').pop()} / ${b.split(':').pop()}, paired same-run A/B:`,
  '',
  '| metric | ' + `${a.split(':').pop()} median | ${b.split(':').pop()} median | ratio [90 % CI] | pairs |`,
  '|---|--:|--:|--:|--:|',
);
for (const c of ab.comparisons.filter((x) => x.metric.endsWith('per_connection_kib'))) {
  lines.push(`| ${c.metric} | ${f(c.candidateMedian, 1)} KiB | ${f(c.baselineMedian, 1)} KiB | ${f(c.ratio, 3)} [${f(c.ciLow, 3)}, ${f(c.ciHigh, 3)}] | ${c.nCandidate} |`);
}
lines.push('', `(${((Date.now() - started) / 60000).toFixed(1)} min)`);
const text = lines.join('\n');
console.log(text);
writeFileSync(join(ROOT, `bench/results/protocols/protocols-${new Date().toISOString().slice(0, 10)}.txt`), `${text}\n`);
if (opt.write) {
  const file = join(ROOT, 'docs/performance.md');
  const doc = readFileSync(file, 'utf8');
  const [begin, end] = ['<!-- protocols:begin -->', '<!-- protocols:end -->'];
  writeFileSync(file, `${doc.slice(0, doc.indexOf(begin) + begin.length)}\n${text.replace(/^# protocols, /, 'Last run: ')}\n${doc.slice(doc.indexOf(end))}`);
}
