#!/usr/bin/env node
// Our load generator against PerfTest on the same broker, same workload flags, interleaved.
//
//   node_modules/.bin/node bench/perftest-vs-gate.mjs [--pairs 5] [--seconds 10] [--warmup 5]
//        [--workload one_fast-100|one_fast-5k|fanout10|fivers] [--bare] [--plain] [--broker shared|container]
//        [--url AMQP] [--management URL] [--perftest PATH (default ../shared/peers/perf-test/perf-test beside the repository)] [--json FILE] [--only gate,perftest,bare,plain]
//
//   --bare       also runs a bare amqplib loop (bench/lib/bare-amqplib.mjs; one_fast only) in each pair
//   --plain      also runs our generator on its plain amqplib path (RABBITMQ_PERF_GATE_PLAIN_AMQP=1,
//                src/workload/wire-check.ts) in each pair, and prints plain / fast ratios;
//                `--only gate,plain` compares the two paths without PerfTest
//   --broker     'shared' (default): the broker at --url; 'container': a private one from the
//                offline image (host network, its own ports), removed at the end
//
// Each pair runs the generators once each, rotating which goes first. Every run gets a
// fresh vhost, deleted afterwards. For both, the measured window starts after `--warmup` seconds
// of traffic and lasts `--seconds`:
// fresh vhost, deleted afterwards. For both, the measured window starts after `--warmup` seconds
// of traffic and lasts `--seconds`:
//   - PerfTest: its per-second lines (`time T s, sent: N msg/s, … received: N msg/s`); the line at
//     T ≈ warmup opens the window, the one at T ≈ warmup + seconds closes it; counts are the
//     per-line rates × the line intervals.
//   - ours: a child process runs src/workload/scenario.ts runWorkload (bundled from source); the
//     engine announces its window edges on a diagnostics channel, and its rates are over exactly
//     that window.
// At both edges this script reads /proc/<pid>/stat (utime + stime) of the generator process
// (the JVM for PerfTest, so its start-up and JIT warm-up are excluded) and of the broker's
// beam.smp, so CPU per message covers the same window as the rates; and /proc/stat, so that
// 'other cores' (machine busy − generator − broker) shows how noisy each run was.
// Results and method: docs/performance.md.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchArgs, brokerOptions, list, optional } from './lib/args.mjs';
import { ROOT, WORKLOADS, bundle, containerBroker, cpuSeconds, fmt, machineBusySeconds, listenerPid, Management, median, rssBytes, run, sleep, table, vhostUrl } from './lib/common.mjs';

const { values: opt } = benchArgs({
  pairs: 5,
  seconds: 10,
  warmup: 5,
  workload: 'one_fast-100',
  perftest: join(ROOT, '../shared/peers/perf-test/perf-test'),
  only: list([]),
  bare: false,
  plain: false,
  json: optional(),
  // 'shared' = the broker at --url; 'container' = a private one from the offline image.
  ...brokerOptions('shared'),
});
const flags = WORKLOADS[opt.workload];
if (!flags) throw new Error(`unknown --workload ${opt.workload}; one of ${Object.keys(WORKLOADS).join(', ')}`);
const PAIRS = opt.pairs;
const SECONDS = opt.seconds;
const WARMUP = opt.warmup;
let container;
if (opt.broker === 'container') {
  container = await containerBroker(opt.image);
  opt.url = container.amqpUrl;
  opt.management = container.managementUrl;
  process.on('SIGINT', () => container.stop().finally(() => process.exit(130)));
}
const mgmt = new Management(opt.management);
const user = decodeURIComponent(new URL(opt.url).username || 'guest');
const brokerPid = listenerPid(opt.url);
const childJs = await bundle('bench/lib/gate-child.ts');

function snapshot(pid) {
  return { t: performance.now(), gen: cpuSeconds(pid), broker: brokerPid ? cpuSeconds(brokerPid) : NaN, machine: machineBusySeconds() };
}

function summarise(name, a, b, published, consumed, extra = {}) {
  const wall = (b.t - a.t) / 1000;
  const genCpu = b.gen - a.gen;
  const brokerCpu = b.broker - a.broker;
  const messages = Math.max(published, consumed, 1);
  return {
    generator: name,
    wallSeconds: wall,
    published: published / wall,
    consumed: consumed / wall,
    genCpuUsPerMsg: (genCpu * 1e6) / messages,
    genCores: genCpu / wall,
    brokerCpuUsPerMsg: (brokerCpu * 1e6) / messages,
    brokerCores: brokerCpu / wall,
    // Everything else on the machine (other people's tests, containers): the noise indicator.
    otherCores: (b.machine - a.machine - genCpu - brokerCpu) / wall,
    ...extra,
  };
}

async function runPerfTest(url) {
  const tol = 0.3;
  let start,
    end,
    pid,
    last,
    published = 0,
    consumed = 0,
    rss = NaN;
  const { child, done } = run(opt.perftest, ['-h', url, ...flags.split(' '), '-z', String(WARMUP + SECONDS + 3)], {
    timeoutMs: (WARMUP + SECONDS + 120) * 1000,
    onLine: (line, c) => {
      const m = /time:? ([\d.]+) ?s, sent: (\d+) msg\/s.*received: (\d+) msg\/s/.exec(line);
      if (!m) return;
      const t = Number(m[1]);
      if (!start && t >= WARMUP - tol) {
        start = snapshot(pid);
        last = t;
        return;
      }
      if (start && !end) {
        const dt = t - last;
        last = t;
        published += Number(m[2]) * dt;
        consumed += Number(m[3]) * dt;
        if (t >= WARMUP + SECONDS - tol) {
          end = snapshot(pid);
          rss = rssBytes(pid);
          c.kill('SIGTERM');
        }
      }
    },
  });
  pid = child.pid;
  await done;
  if (!start || !end) throw new Error('PerfTest produced no complete measured window');
  return summarise('perftest', start, end, published, consumed, { rssMB: rss / 2 ** 20 });
}

async function runGate(url, kind = 'gate') {
  let start, end, result, pid;
  const args =
    kind === 'bare'
      ? [new URL('./lib/bare-amqplib.mjs', import.meta.url).pathname, url, String(WARMUP), String(SECONDS), /-s (\d+)/.exec(flags)[1], /-c (\d+)/.exec(flags)[1]]
      : [childJs, '--url', url, '--warmup', String(WARMUP), '--seconds', String(SECONDS), '--id', opt.workload, '--', ...flags.split(' ')];
  // 'gate' = the fast path, 'plain' = the same generator forced onto plain amqplib APIs.
  const env = { ...process.env };
  delete env.RABBITMQ_PERF_GATE_PLAIN_AMQP;
  if (kind === 'plain') env.RABBITMQ_PERF_GATE_PLAIN_AMQP = '1';
  const { child, done } = run(process.execPath, args, {
    env,
    timeoutMs: (WARMUP + SECONDS + 180) * 1000,
    onLine: (line) => {
      if (!line.startsWith('{')) return;
      const e = JSON.parse(line);
      if (e.event === 'window' && e.phase === 'start') start = snapshot(pid);
      else if (e.event === 'window' && e.phase === 'end') {
        end = snapshot(pid);
        end.elu = e.utilization;
      } else if (e.event === 'result') result = e;
    },
    onErrLine: (l) => process.stderr.write(`  [gate] ${l}\n`),
  });
  pid = child.pid;
  await done;
  if (!start || !end || !result) throw new Error('our generator produced no complete measured window');
  if (!result.valid) process.stderr.write(`  [gate] trial invalid: ${result.invalidReason}\n`);
  const path = result.generator?.amqpPath;
  if (kind !== 'bare' && path !== (kind === 'plain' ? 'plain' : 'fast')) throw new Error(`${kind} run took the ${path} path`);
  const m = result.metrics;
  const wall = (end.t - start.t) / 1000;
  // The engine's rates are over its own window (= the markers' window to within a millisecond).
  return summarise(kind, start, end, (m.published_rate ?? 0) * wall, (m.consumed_rate ?? 0) * wall, {
    rssMB: result.rssBytes / 2 ** 20,
    engineCpuUsPerMsg: result.generator.cpuMicrosPerMessage,
    elDelayP99: result.generator.eventLoopDelayP99Ms,
    elu: end.elu,
    saturated: result.generator.saturated,
    valid: result.valid,
    latencyP50: m.latency_p50_ms,
    latencyP99: m.latency_p99_ms,
    path,
  });
}

async function once(kind, pair) {
  const vhost = `perf-gate-bench-${kind}-${process.pid}-${pair}`;
  await mgmt.createVhost(vhost, user);
  try {
    return await (kind === 'perftest' ? runPerfTest(vhostUrl(opt.url, vhost)) : runGate(vhostUrl(opt.url, vhost), kind));
  } finally {
    await mgmt.deleteVhost(vhost).catch((e) => process.stderr.write(`  could not delete vhost ${vhost}: ${e.message}\n`));
  }
}

console.log(`workload ${opt.workload}: ${flags}`);
console.log(
  `${PAIRS} pairs, warm-up ${WARMUP} s, window ${SECONDS} s, broker ${container ? `container ${container.container} (RabbitMQ ${container.version})` : 'shared'} ${new URL(opt.url).host}, beam pid ${brokerPid ?? 'not visible'}\n`,
);
const pairs = [];
for (let i = 0; i < PAIRS; i++) {
  const kinds = opt.only.length ? opt.only : ['gate', 'perftest', ...(opt.bare ? ['bare'] : []), ...(opt.plain ? ['plain'] : [])];
  const order = kinds.map((_, j) => kinds[(i + j) % kinds.length]);
  const r = {};
  for (const kind of order) {
    r[kind] = await once(kind, i);
    await sleep(2000);
  }
  pairs.push(r);
  const rows = order.map((k) => {
    const x = r[k];
    return [k, fmt(x.published), fmt(x.consumed), fmt(x.genCpuUsPerMsg, 1), fmt(x.genCores, 2), fmt(x.brokerCpuUsPerMsg, 1), fmt(x.brokerCores, 2), fmt(x.otherCores, 2), fmt(x.rssMB)];
  });
  console.log(`pair ${i + 1} (order: ${order.join(' → ')})`);
  console.log(table(['generator', 'pub msg/s', 'cons msg/s', 'gen µs/msg', 'gen cores', 'broker µs/msg', 'broker cores', 'other cores', 'RSS MB'], rows));
  if (r.gate && r.perftest) {
    console.log(`  ratio ours/PerfTest: consumed ${fmt(r.gate.consumed / r.perftest.consumed, 2)}×, CPU/msg ${fmt(r.gate.genCpuUsPerMsg / r.perftest.genCpuUsPerMsg, 2)}×`);
  }
  if (r.bare && r.perftest)
    console.log(`  ratio bare amqplib/PerfTest: consumed ${fmt(r.bare.consumed / r.perftest.consumed, 2)}×, CPU/msg ${fmt(r.bare.genCpuUsPerMsg / r.perftest.genCpuUsPerMsg, 2)}×`);
  if (r.plain && r.gate) console.log(`  ratio plain/fast path: consumed ${fmt(r.plain.consumed / r.gate.consumed, 2)}×, CPU/msg ${fmt(r.plain.genCpuUsPerMsg / r.gate.genCpuUsPerMsg, 2)}×`);
  if (r.gate)
    console.log(
      `  ours: engine CPU ${fmt(r.gate.engineCpuUsPerMsg, 1)} µs/msg, loop delay p99 ${r.gate.elDelayP99} ms, loop utilisation ${fmt((r.gate.elu ?? NaN) * 100, 1)} %, saturated ${r.gate.saturated}, latency p50/p99 ${r.gate.latencyP50}/${r.gate.latencyP99} ms`,
    );
  console.log('');
}

if (pairs[0].gate && pairs[0].perftest) {
  const ratio = (f) => median(pairs.map((p) => f(p.gate) / f(p.perftest)));
  const med = (k, f) => median(pairs.map((p) => f(p[k])));
  console.log(`medians over ${PAIRS} interleaved pairs (${opt.workload})`);
  console.log(
    table(
      ['', 'gate', 'perftest', 'median of per-pair ratios'],
      [
        [
          'consumed msg/s',
          fmt(med('gate', (x) => x.consumed)),
          fmt(med('perftest', (x) => x.consumed)),
          fmt(
            ratio((x) => x.consumed),
            2,
          ),
        ],
        [
          'published msg/s',
          fmt(med('gate', (x) => x.published)),
          fmt(med('perftest', (x) => x.published)),
          fmt(
            ratio((x) => x.published),
            2,
          ),
        ],
        [
          'generator CPU µs/msg',
          fmt(
            med('gate', (x) => x.genCpuUsPerMsg),
            1,
          ),
          fmt(
            med('perftest', (x) => x.genCpuUsPerMsg),
            1,
          ),
          fmt(
            ratio((x) => x.genCpuUsPerMsg),
            2,
          ),
        ],
        [
          'generator cores',
          fmt(
            med('gate', (x) => x.genCores),
            2,
          ),
          fmt(
            med('perftest', (x) => x.genCores),
            2,
          ),
          fmt(
            ratio((x) => x.genCores),
            2,
          ),
        ],
        [
          'broker CPU µs/msg',
          fmt(
            med('gate', (x) => x.brokerCpuUsPerMsg),
            1,
          ),
          fmt(
            med('perftest', (x) => x.brokerCpuUsPerMsg),
            1,
          ),
          fmt(
            ratio((x) => x.brokerCpuUsPerMsg),
            2,
          ),
        ],
        [
          'broker cores',
          fmt(
            med('gate', (x) => x.brokerCores),
            2,
          ),
          fmt(
            med('perftest', (x) => x.brokerCores),
            2,
          ),
          fmt(
            ratio((x) => x.brokerCores),
            2,
          ),
        ],
        [
          'generator RSS MB',
          fmt(med('gate', (x) => x.rssMB)),
          fmt(med('perftest', (x) => x.rssMB)),
          fmt(
            ratio((x) => x.rssMB),
            2,
          ),
        ],
      ],
    ),
  );
  if (pairs[0].bare) {
    const bare = (f) => median(pairs.map((p) => f(p.bare) / f(p.perftest)));
    console.log(
      `bare amqplib loop / PerfTest: consumed ${fmt(
        bare((x) => x.consumed),
        2,
      )}×, CPU/msg ${fmt(
        bare((x) => x.genCpuUsPerMsg),
        2,
      )}× (median of per-run ratios)`,
    );
  }
}
if (pairs[0].gate && pairs[0].plain) {
  const ratio = (f) => median(pairs.map((p) => f(p.plain) / f(p.gate)));
  const med = (k, f) => median(pairs.map((p) => f(p[k])));
  console.log(`\nplain amqplib path vs fast path, medians over ${PAIRS} interleaved pairs (${opt.workload})`);
  console.log(
    table(
      ['', 'fast (gate)', 'plain', 'median of per-pair ratios plain/fast'],
      [
        [
          'consumed msg/s',
          fmt(med('gate', (x) => x.consumed)),
          fmt(med('plain', (x) => x.consumed)),
          fmt(
            ratio((x) => x.consumed),
            2,
          ),
        ],
        [
          'published msg/s',
          fmt(med('gate', (x) => x.published)),
          fmt(med('plain', (x) => x.published)),
          fmt(
            ratio((x) => x.published),
            2,
          ),
        ],
        [
          'generator CPU µs/msg',
          fmt(
            med('gate', (x) => x.genCpuUsPerMsg),
            1,
          ),
          fmt(
            med('plain', (x) => x.genCpuUsPerMsg),
            1,
          ),
          fmt(
            ratio((x) => x.genCpuUsPerMsg),
            2,
          ),
        ],
        [
          'generator cores',
          fmt(
            med('gate', (x) => x.genCores),
            2,
          ),
          fmt(
            med('plain', (x) => x.genCores),
            2,
          ),
          fmt(
            ratio((x) => x.genCores),
            2,
          ),
        ],
        [
          'other cores',
          fmt(
            med('gate', (x) => x.otherCores),
            2,
          ),
          fmt(
            med('plain', (x) => x.otherCores),
            2,
          ),
          '',
        ],
      ],
    ),
  );
}
await container?.stop();
if (opt.json) writeFileSync(opt.json, JSON.stringify({ workload: opt.workload, flags, seconds: SECONDS, warmup: WARMUP, pairs }, null, 2));
