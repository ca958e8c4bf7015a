#!/usr/bin/env node
// rabbitmq/testing's seven_thousand_slow_one_queue at full scale on our generator: 7000
// publishers, each on its own connection, at 1 msg/s (-P 1) with 1 unconfirmed message (-c 1),
// and 7 consumers. Prints the sustained published/consumed rate against the 7000 msg/s target,
// the generator's RSS (at the window's end and its peak), event-loop delay and utilisation, and
// CPU — the figures issue 8 asks for.
//
//   node_modules/.bin/node bench/many-publishers.mjs [--producers 7000] [--consumers 7] [--interval 1]
//        [--seconds 30] [--warmup 10] [--runs 1] [--broker container|shared] [--url AMQP] [--management URL]
//
// The shared service's broker has a 1024 file-descriptor limit (about 830 sockets), so the
// default is a private broker container (offline image, host network, fd limit 20000).
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { bundle, containerBroker, cpuSeconds, fmt, listenerPid, Management, median, rssBytes, run, table, vhostUrl } from './lib/common.mjs';

const { values: opt } = parseArgs({
  options: {
    producers: { type: 'string', default: '7000' },
    consumers: { type: 'string', default: '7' },
    interval: { type: 'string', default: '1' },
    seconds: { type: 'string', default: '30' },
    warmup: { type: 'string', default: '10' },
    runs: { type: 'string', default: '1' },
    broker: { type: 'string', default: 'container' },
    image: { type: 'string', default: 'rabbitmq-perf-gate/rabbitmq:3.10.8' },
    url: { type: 'string', default: 'amqp://guest:guest@127.0.0.1:5672' },
    management: { type: 'string', default: 'http://guest:guest@127.0.0.1:15672' },
  },
});
const X = Number(opt.producers);
const target = X / Number(opt.interval);
const flags = `-x ${X} -y ${opt.consumers} -P ${opt.interval} -c 1 -u seven_thousand_slow_one_queue -qa x-max-length=1000000 -ad false -f persistent`;

let container;
if (opt.broker === 'container') {
  container = await containerBroker(opt.image);
  opt.url = container.amqpUrl;
  opt.management = container.managementUrl;
  process.on('SIGINT', () => container.stop().finally(() => process.exit(130)));
}
const mgmt = new Management(opt.management);
const brokerPid = listenerPid(opt.url);
const nodes = await mgmt.request('GET', '/api/nodes');
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

const rows = [];
for (let i = 0; i < Number(opt.runs); i++) {
  const vhost = `perf-gate-bench-many-${process.pid}-${i}`;
  await mgmt.createVhost(vhost, 'guest');
  const t0 = performance.now();
  let start, end, result, pid, windowOpenedAt;
  try {
    const { child, done } = run(process.execPath, [childJs, '--url', vhostUrl(opt.url, vhost), '--warmup', opt.warmup, '--seconds', opt.seconds, '--id', 'many', '--', ...flags.split(' ')], {
      timeoutMs: (Number(opt.warmup) + Number(opt.seconds) + 600) * 1000,
      onLine: (line) => {
        if (!line.startsWith('{')) return;
        const e = JSON.parse(line);
        const snap = () => ({ t: performance.now(), cpu: cpuSeconds(pid), broker: brokerPid ? cpuSeconds(brokerPid) : NaN, rss: rssBytes(pid), hwm: hwm(pid) });
        if (e.event === 'window' && e.phase === 'start') { start = snap(); windowOpenedAt = (start.t - t0) / 1000; }
        else if (e.event === 'window' && e.phase === 'end') end = { ...snap(), elu: e.utilization };
        else if (e.event === 'result') result = e;
      },
      onErrLine: (l) => process.stderr.write(`  [gate] ${l}\n`),
    });
    pid = child.pid;
    await done;
  } finally {
    await mgmt.deleteVhost(vhost).catch(() => undefined);
  }
  if (!start || !end || !result) throw new Error('no complete measured window');
  const wall = (end.t - start.t) / 1000;
  const m = result.metrics;
  const r = {
    published: m.published_rate, consumed: m.consumed_rate, confirmed: m.confirmed_rate,
    ofTarget: m.published_rate / target, rssMB: end.rss / 2 ** 20, peakRssMB: end.hwm / 2 ** 20,
    loopDelayP99: result.generator.eventLoopDelayP99Ms, elu: end.elu, genCores: (end.cpu - start.cpu) / wall,
    brokerCores: (end.broker - start.broker) / wall, setupSeconds: windowOpenedAt - Number(opt.warmup),
    saturated: result.generator.saturated, valid: result.valid, invalidReason: result.invalidReason,
    latencyP50: m.latency_p50_ms, latencyP99: m.latency_p99_ms,
  };
  rows.push(r);
  console.log(`run ${i + 1}: published ${fmt(r.published, 1)} msg/s (${fmt(r.ofTarget * 100, 2)} % of ${target}), consumed ${fmt(r.consumed, 1)}, ` +
    `RSS ${fmt(r.rssMB)} MB (peak ${fmt(r.peakRssMB)}), loop delay p99 ${r.loopDelayP99} ms, loop utilisation ${fmt(r.elu * 100, 1)} %, generator ${fmt(r.genCores, 2)} cores, ` +
    `broker ${fmt(r.brokerCores, 2)} cores, connections opened in ${fmt(r.setupSeconds, 1)} s, latency p50/p99 ${r.latencyP50}/${r.latencyP99} ms, ` +
    `saturated ${r.saturated}, valid ${r.valid}${r.invalidReason ? ` (${r.invalidReason})` : ''}`);
}

const med = (k) => median(rows.map((r) => r[k]));
console.log('');
console.log(table(['', `median of ${rows.length} run(s)`], [
  ['published msg/s', fmt(med('published'), 1)],
  ['consumed msg/s', fmt(med('consumed'), 1)],
  ['share of target', `${fmt(med('ofTarget') * 100, 2)} %`],
  ['generator RSS at window end, MB', fmt(med('rssMB'))],
  ['generator peak RSS, MB', fmt(med('peakRssMB'))],
  ['event-loop delay p99, ms', fmt(med('loopDelayP99'), 1)],
  ['event-loop utilisation', `${fmt(med('elu') * 100, 1)} %`],
  ['generator CPU, cores', fmt(med('genCores'), 2)],
  ['broker CPU, cores', fmt(med('brokerCores'), 2)],
  ['connection set-up, s', fmt(med('setupSeconds'), 1)],
]));
await container?.stop();
