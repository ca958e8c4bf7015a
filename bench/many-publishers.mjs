#!/usr/bin/env node
// rabbitmq/testing's seven_thousand_slow_one_queue at full scale on our generator: 7000
// publishers, each on its own connection, at 1 msg/s (-P 1) with 1 unconfirmed message (-c 1),
// and 7 consumers. Prints the sustained published/consumed rate against the 7000 msg/s target,
// the generator's RSS (at the window's end and its peak), event-loop delay and utilisation, and
// CPU — the figures issue 8 asks for.
//
//   node_modules/.bin/node bench/many-publishers.mjs [--producers 7000] [--consumers 7] [--interval 1]
//        [--seconds 30] [--warmup 10] [--runs 1] [--persistent] [--perftest] [--broker container|shared] [--url AMQP] [--management URL]
//        [--config rabbitmq.conf ...]   (container broker: config files placed as a target's `config:`)
//
// --perftest also runs PerfTest with the same flags, alternating which goes first, for the
// broker's own ceiling on this machine and PerfTest's RSS.
//
// The shared service's broker has a 1024 file-descriptor limit (about 830 sockets), so the
// default is a private broker container (offline image, host network, fd limit 20000).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchArgs, brokerOptions } from './lib/args.mjs';
import { ROOT, bundle, containerBroker, cpuSeconds, fmt, listenerPid, Management, median, rssBytes, run, table, vhostUrl } from './lib/common.mjs';

const { values: opt } = benchArgs({
  producers: 7000,
  consumers: 7,
  interval: 1,
  seconds: 30,
  warmup: 10,
  runs: 1,
  persistent: false,
  perftest: false,
  'perftest-path': join(ROOT, '../shared/peers/perf-test/perf-test'),
  ...brokerOptions('container'),
  config: [],
});
const X = opt.producers;
const target = X / opt.interval;
// rabbitmq/testing's command; --persistent adds its classic-queue wrapper flags.
const flags = `-x ${X} -y ${opt.consumers} -P ${opt.interval} -c 1 -u seven_thousand_slow_one_queue -qa x-max-length=1000000${opt.persistent ? ' -ad false -f persistent' : ''}`;

let container;
if (opt.broker === 'container') {
  container = await containerBroker(opt.image, opt.config);
  opt.url = container.amqpUrl;
  opt.management = container.managementUrl;
  process.on('SIGINT', () => container.stop().finally(() => process.exit(130)));
}
const mgmt = new Management(opt.management);
const brokerPid = listenerPid(opt.url);
// A fresh node publishes its fd/socket figures after its first stats interval.
let nodes = await mgmt.request('GET', '/api/nodes');
for (let i = 0; i < 30 && nodes[0].fd_total === undefined; i++) {
  await new Promise((r) => setTimeout(r, 1000));
  nodes = await mgmt.request('GET', '/api/nodes');
}
console.log(`workload: ${flags}`);
console.log(`broker ${container ? `container ${container.container}` : 'shared'} ${new URL(opt.url).host}: fd limit ${nodes[0].fd_total}, socket limit ${nodes[0].sockets_total}`);
console.log(`target ${target} msg/s; warm-up ${opt.warmup} s, window ${opt.seconds} s\n`);
const childJs = await bundle('bench/lib/gate-child.ts');

function hwm(pid) {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

async function runGate(url) {
  const t0 = performance.now();
  let start, end, result, pid, windowOpenedAt;
  const { child, done } = run(process.execPath, [childJs, '--url', url, '--warmup', String(opt.warmup), '--seconds', String(opt.seconds), '--id', 'many', '--', ...flags.split(' ')], {
    timeoutMs: (opt.warmup + opt.seconds + 600) * 1000,
    onLine: (line) => {
      if (!line.startsWith('{')) return;
      const e = JSON.parse(line);
      if (e.event === 'window' && e.phase === 'start') {
        start = snap(pid);
        windowOpenedAt = (start.t - t0) / 1000;
      } else if (e.event === 'window' && e.phase === 'end') end = { ...snap(pid), elu: e.utilization };
      else if (e.event === 'result') result = e;
    },
    onErrLine: (l) => process.stderr.write(`  [gate] ${l}\n`),
  });
  pid = child.pid;
  await done;
  if (!start || !end || !result) throw new Error('no complete measured window');
  const m = result.metrics;
  return {
    ...common(start, end),
    published: m.published_rate,
    consumed: m.consumed_rate,
    loopDelayP99: result.generator.eventLoopDelayP99Ms,
    elu: end.elu,
    setupSeconds: windowOpenedAt - opt.warmup,
    saturated: result.generator.saturated,
    valid: result.valid,
    invalidReason: result.invalidReason,
    latencyP50: m.latency_p50_ms,
    latencyP99: m.latency_p99_ms,
  };
}

/** PerfTest the same way: its per-second lines from T = warm-up to warm-up + window (its clock starts once every connection is open). */
async function runPerfTest(url) {
  const W = opt.warmup;
  const S = opt.seconds;
  const t0 = performance.now();
  let start,
    end,
    pid,
    last,
    published = 0,
    consumed = 0,
    opened;
  const { child, done } = run(opt['perftest-path'], ['-h', url, ...flags.split(' '), '-z', String(W + S + 3)], {
    timeoutMs: (W + S + 600) * 1000,
    onLine: (line, c) => {
      const m = /time:? ([\d.]+) ?s, sent: (\d+) msg\/s.*received: (\d+) msg\/s/.exec(line);
      if (!m) return;
      const t = Number(m[1]);
      opened ??= (performance.now() - t0) / 1000 - t;
      if (!start && t >= W - 0.3) {
        start = snap(pid);
        last = t;
        return;
      }
      if (start && !end) {
        published += Number(m[2]) * (t - last);
        consumed += Number(m[3]) * (t - last);
        last = t;
        if (t >= W + S - 0.3) {
          end = snap(pid);
          c.kill('SIGTERM');
        }
      }
    },
  });
  pid = child.pid;
  await done;
  if (!start || !end) throw new Error('PerfTest produced no complete measured window');
  const wall = (end.t - start.t) / 1000;
  return { ...common(start, end), published: published / wall, consumed: consumed / wall, setupSeconds: opened, valid: true };
}

function snap(pid) {
  return { t: performance.now(), cpu: cpuSeconds(pid), broker: brokerPid ? cpuSeconds(brokerPid) : NaN, rss: rssBytes(pid), hwm: hwm(pid) };
}

function common(start, end) {
  const wall = (end.t - start.t) / 1000;
  return { rssMB: end.rss / 2 ** 20, peakRssMB: end.hwm / 2 ** 20, genCores: (end.cpu - start.cpu) / wall, brokerCores: (end.broker - start.broker) / wall };
}

const kinds = opt.perftest ? ['gate', 'perftest'] : ['gate'];
const rows = { gate: [], perftest: [] };
for (let i = 0; i < opt.runs; i++) {
  const order = i % 2 === 0 ? kinds : [...kinds].reverse();
  for (const kind of order) {
    const vhost = `perf-gate-bench-many-${kind}-${process.pid}-${i}`;
    await mgmt.createVhost(vhost, 'guest');
    let r;
    try {
      r = await (kind === 'gate' ? runGate : runPerfTest)(vhostUrl(opt.url, vhost));
    } finally {
      await mgmt.deleteVhost(vhost).catch(() => undefined);
    }
    r.ofTarget = r.published / target;
    rows[kind].push(r);
    console.log(
      `run ${i + 1} ${kind}: published ${fmt(r.published, 1)} msg/s (${fmt(r.ofTarget * 100, 2)} % of ${target}), consumed ${fmt(r.consumed, 1)}, ` +
        `RSS ${fmt(r.rssMB)} MB (peak ${fmt(r.peakRssMB)}), generator ${fmt(r.genCores, 2)} cores, broker ${fmt(r.brokerCores, 2)} cores, ` +
        `connections opened in ${fmt(r.setupSeconds, 1)} s` +
        (kind === 'gate'
          ? `, loop delay p99 ${r.loopDelayP99} ms, loop utilisation ${fmt(r.elu * 100, 1)} %, latency p50/p99 ${r.latencyP50}/${r.latencyP99} ms, ` +
            `saturated ${r.saturated}, valid ${r.valid}${r.invalidReason ? ` (${r.invalidReason})` : ''}`
          : ''),
    );
  }
}

const med = (kind, k) => median(rows[kind].map((r) => r[k]));
const col = (k, f) => kinds.map((kind) => f(med(kind, k)));
console.log('');
console.log(
  table(
    ['', ...kinds.map((k) => `${k} (median of ${rows[k].length})`)],
    [
      ['published msg/s', ...col('published', (x) => fmt(x, 1))],
      ['consumed msg/s', ...col('consumed', (x) => fmt(x, 1))],
      ['share of target', ...col('ofTarget', (x) => `${fmt(x * 100, 2)} %`)],
      ['generator RSS at window end, MB', ...col('rssMB', (x) => fmt(x))],
      ['generator peak RSS, MB', ...col('peakRssMB', (x) => fmt(x))],
      ['event-loop delay p99, ms', ...col('loopDelayP99', (x) => fmt(x, 1))],
      ['event-loop utilisation', ...col('elu', (x) => `${fmt(x * 100, 1)} %`)],
      ['generator CPU, cores', ...col('genCores', (x) => fmt(x, 2))],
      ['broker CPU, cores', ...col('brokerCores', (x) => fmt(x, 2))],
      ['connection set-up, s', ...col('setupSeconds', (x) => fmt(x, 1))],
    ],
  ),
);
await container?.stop();
