#!/usr/bin/env node
// Before/after for the load generator's hot path: builds our generator in several variants and
// runs them interleaved (rotating order each round) on the same broker and workload, measuring
// msg/s and CPU per message exactly as bench/perftest-vs-gate.mjs does (window markers, /proc).
//
//   node_modules/.bin/node bench/gate-ab.mjs [--variants original,batched,current] [--rounds 5]
//        [--seconds 10] [--warmup 3] [--workload one_fast-100 | --flags="-x 7000 ..."] [--rev e85625c] [--broker shared|container]
//
// Variants:
//   original  the generator as it was before the hot-path work: src/workload/{producer,consumer,
//             scheduler,body}.ts from --rev (everything else from this checkout)
//   batched   this checkout without the frame tap: publishes and acks leave in batched writes of
//             amqplib-captured frames, but amqplib still decodes every delivery and confirm
//   current   this checkout
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchArgs, brokerOptions, list, optional } from './lib/args.mjs';
import { ROOT, WORKLOADS, bundle, containerBroker, cpuSeconds, fmt, listenerPid, machineBusySeconds, Management, median, rssBytes, run, sleep, table, vhostUrl } from './lib/common.mjs';

const { values: opt } = benchArgs({
  variants: list('original,current'),
  rounds: 5,
  seconds: 10,
  warmup: 3,
  workload: 'one_fast-100',
  flags: optional(),
  rev: 'e85625c',
  ...brokerOptions('shared'),
});
const flags = opt.flags ?? WORKLOADS[opt.workload];
if (!flags) throw new Error(`unknown --workload ${opt.workload}`);
const SECONDS = opt.seconds;
const WARMUP = opt.warmup;

/** A copy of src/ and bench/lib/ with some files replaced or patched. */
function variantTree(name, edit) {
  const dir = mkdtempSync(join(tmpdir(), `perf-gate-${name}-`));
  cpSync(join(ROOT, 'src'), join(dir, 'src'), { recursive: true });
  cpSync(join(ROOT, 'bench/lib'), join(dir, 'bench/lib'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  edit(dir);
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function patch(dir, file, from, to) {
  const p = join(dir, file);
  const s = readFileSync(p, 'utf8');
  if (!s.includes(from)) throw new Error(`variant patch does not apply to ${file}: ${from}`);
  writeFileSync(p, s.replace(from, to));
}

const VARIANTS = {
  original: () =>
    variantTree('original', (dir) => {
      for (const f of ['producer', 'consumer', 'scheduler', 'body']) {
        writeFileSync(join(dir, `src/workload/${f}.ts`), execFileSync('git', ['-C', ROOT, 'show', `${opt.rev}:src/workload/${f}.ts`]));
      }
    }),
  batched: () =>
    variantTree('batched', (dir) => {
      patch(dir, 'src/workload/producer.ts', 'FrameTap.register(ch, this);', '');
      patch(
        dir,
        'src/workload/producer.ts',
        "ch.removeAllListeners('nack');",
        "ch.removeAllListeners('nack');\n      ch.on('ack', (f: { deliveryTag: number; multiple: boolean }) => this.confirm(f.deliveryTag, f.multiple, false));\n      ch.on('nack', (f: { deliveryTag: number; multiple: boolean }) => this.confirm(f.deliveryTag, f.multiple, true));",
      );
      patch(dir, 'src/workload/consumer.ts', 'FrameTap.register(this.ch, { delivery: this.onDelivery });', '');
    }),
  current: () => ROOT,
};

const names = opt.variants;
const children = {};
for (const n of names) {
  if (!VARIANTS[n]) throw new Error(`unknown variant ${n}; one of ${Object.keys(VARIANTS).join(', ')}`);
  children[n] = await bundle('bench/lib/gate-child.ts', VARIANTS[n]());
}

let container;
if (opt.broker === 'container') {
  container = await containerBroker();
  opt.url = container.amqpUrl;
  opt.management = container.managementUrl;
}
const mgmt = new Management(opt.management);
const brokerPid = listenerPid(opt.url);

async function once(name, round) {
  const vhost = `perf-gate-bench-ab-${name}-${process.pid}-${round}`;
  await mgmt.createVhost(vhost, 'guest');
  let start, end, result, pid;
  const snap = () => ({ t: performance.now(), gen: cpuSeconds(pid), broker: brokerPid ? cpuSeconds(brokerPid) : NaN, machine: machineBusySeconds(), rss: rssBytes(pid) });
  try {
    const { child, done } = run(process.execPath, [children[name], '--url', vhostUrl(opt.url, vhost), '--warmup', String(WARMUP), '--seconds', String(SECONDS), '--', ...flags.split(' ')], {
      timeoutMs: (WARMUP + SECONDS + 180) * 1000,
      onLine: (line) => {
        if (!line.startsWith('{')) return;
        const e = JSON.parse(line);
        if (e.event === 'window' && e.phase === 'start') start = snap();
        else if (e.event === 'window' && e.phase === 'end') end = { ...snap(), elu: e.utilization };
        else if (e.event === 'result') result = e;
      },
      onErrLine: (l) => process.stderr.write(`  [${name}] ${l}\n`),
    });
    pid = child.pid;
    await done;
  } finally {
    await mgmt.deleteVhost(vhost).catch(() => undefined);
  }
  if (!start || !end || !result) throw new Error(`${name}: no complete measured window`);
  const wall = (end.t - start.t) / 1000;
  const m = result.metrics;
  const messages = Math.max(m.published_rate ?? 0, m.consumed_rate ?? 0) * wall;
  return {
    published: m.published_rate,
    consumed: m.consumed_rate,
    cpuUsPerMsg: ((end.gen - start.gen) * 1e6) / messages,
    genCores: (end.gen - start.gen) / wall,
    brokerCores: (end.broker - start.broker) / wall,
    otherCores: (end.machine - start.machine - (end.gen - start.gen) - (end.broker - start.broker)) / wall,
    elu: end.elu,
    p50: m.latency_p50_ms,
    p99: m.latency_p99_ms,
    valid: result.valid,
    rssMB: end.rss / 2 ** 20,
  };
}

console.log(`workload ${opt.flags ? 'custom' : opt.workload}: ${flags}`);
console.log(
  `variants ${names.join(', ')} (original = ${opt.rev}); ${opt.rounds} rounds, warm-up ${WARMUP} s, window ${SECONDS} s, broker ${container ? 'container' : 'shared'} ${new URL(opt.url).host}\n`,
);
const rounds = [];
for (let i = 0; i < opt.rounds; i++) {
  const order = names.map((_, j) => names[(i + j) % names.length]);
  const r = {};
  for (const n of order) {
    r[n] = await once(n, i);
    await sleep(2000);
  }
  rounds.push(r);
  console.log(`round ${i + 1} (order: ${order.join(' → ')})`);
  console.log(
    table(
      ['variant', 'cons msg/s', 'pub msg/s', 'gen µs/msg', 'gen cores', 'loop util', 'broker cores', 'other cores', 'RSS MB', 'p50 ms', 'p99 ms'],
      order.map((n) => {
        const x = r[n];
        return [n, fmt(x.consumed), fmt(x.published), fmt(x.cpuUsPerMsg, 1), fmt(x.genCores, 2), fmt(x.elu * 100, 1) + ' %', fmt(x.brokerCores, 2), fmt(x.otherCores, 2), fmt(x.rssMB), x.p50, x.p99];
      }),
    ),
  );
  console.log('');
}
const base = names[0];
console.log(`medians over ${rounds.length} interleaved rounds; ratios are medians of per-round ratios to ${base}`);
console.log(
  table(
    ['variant', 'cons msg/s', `× ${base}`, 'gen µs/msg', `× ${base}`, 'loop util', 'RSS MB'],
    names.map((n) => [
      n,
      fmt(median(rounds.map((r) => r[n].consumed))),
      fmt(median(rounds.map((r) => r[n].consumed / r[base].consumed)), 2),
      fmt(median(rounds.map((r) => r[n].cpuUsPerMsg)), 1),
      fmt(median(rounds.map((r) => r[n].cpuUsPerMsg / r[base].cpuUsPerMsg)), 2),
      fmt(median(rounds.map((r) => r[n].elu)) * 100, 1) + ' %',
      fmt(median(rounds.map((r) => r[n].rssMB))),
    ]),
  ),
);
await container?.stop();
