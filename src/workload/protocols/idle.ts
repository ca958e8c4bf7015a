// Memory per connection, the 3.12 native-MQTT post's headline: the broker's memory is read three
// times (median) before and after this trial opens N idle MQTT connections in its vhost, and the
// growth over N is reported two ways:
// - memory_per_connection_kib (gating): the Erlang VM's own accounting without binaries — the
//   connections' processes, ETS tables and system memory, exact and repeatable. Binaries are left
//   out because idle connections hold none but each socket's user-space buffer, which Erlang sizes
//   from the kernel's socket buffer defaults (3.8 MiB per connection on this runner, on 3.10.8 and
//   4.0.5 alike) though almost none of it is ever touched; the post set those buffers to 1 KiB.
// - resident_per_connection_kib (reported): the growth of the broker process's RSS, what the host
//   pays, noisier (allocators keep and return memory in carriers).
// The connections are counted back from the broker (GET /api/connections) before either figure is
// trusted. Before the first read the broker's memory is let settle (a previous trial's vhost is
// still being given back); warm-up lets it settle after they open; the window holds them idle while read.
import { STOP } from '../stop-reasons';
import type { ProtocolScenario } from '../../schema/types';
import { ManagementClient } from '../../broker/management';
import { round2 } from '../../metrics/recorder';
import { SelfLoad } from '../../metrics/selfload';
import { generatorLoad, sleep } from '../pool';
import type { TrialContext, WorkloadResult } from '../types';
import type { DriverConsumer, ProtocolDriver } from './driver';

/** Connections opened at once. */
const OPEN_BATCH = 25;
/** How long the broker's connection list may take to show them all (its stats are emitted every 5 s). */
const COUNT_WAIT_MS = 20_000;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Median of three reads: Erlang memory without binaries, and resident memory. */
async function memory(mgmt: ManagementClient, node: string, spacingMs: number): Promise<{ own: number; rss: number }> {
  const reads: Array<{ erlang: number; binary: number; rss: number }> = [];
  for (let i = 0; i < 3; i++) {
    if (i) await sleep(spacingMs);
    reads.push(await mgmt.nodeMemory(node));
  }
  return { own: median(reads.map((r) => r.erlang - r.binary)), rss: median(reads.map((r) => r.rss)) };
}

/** How long the broker's memory may take to settle before the first read, and what counts as settled. */
const SETTLE_MS = 20_000;
const SETTLED_BYTES = 2 * 1024 * 1024;

/**
 * Waits until the broker's memory (without binaries) moves by less than SETTLED_BYTES in a second,
 * at most SETTLE_MS: a previous trial's vhost is deleted asynchronously, and its queue processes
 * and tables giving back hundreds of megabytes during this trial's reads would hide the growth.
 */
async function settle(mgmt: ManagementClient, node: string): Promise<void> {
  const own = async () => {
    const r = await mgmt.nodeMemory(node);
    return r.erlang - r.binary;
  };
  const deadline = Date.now() + SETTLE_MS;
  let last = await own();
  while (Date.now() < deadline) {
    await sleep(1000);
    const now = await own();
    if (Math.abs(now - last) < SETTLED_BYTES) return;
    last = now;
  }
}

/** Connections the broker lists in the vhost. */
async function countedByBroker(mgmt: ManagementClient, vhost: string): Promise<number> {
  const conns = await mgmt.request<Array<{ vhost?: string }>>('GET', '/api/connections?columns=vhost');
  return conns.filter((c) => c.vhost === vhost).length;
}

export async function runIdle(spec: ProtocolScenario, driver: ProtocolDriver, ctx: TrialContext, signal?: AbortSignal): Promise<WorkloadResult> {
  if (spec.protocol.name !== 'mqtt' || !driver.idle) throw new Error(`scenario ${spec.id}: idle connections are an MQTT measurement`);
  const n = spec.protocol.idleConnections;
  const mgmt = new ManagementClient(ctx.managementUrl);
  const selfLoad = new SelfLoad();
  const open: DriverConsumer[] = [];
  try {
    const node = await mgmt.localNode();
    await settle(mgmt, node);
    const before = await memory(mgmt, node, 250);
    for (let i = 0; i < n && !signal?.aborted; i += OPEN_BATCH) {
      const batch = await Promise.all(Array.from({ length: Math.min(OPEN_BATCH, n - i) }, (_, k) => driver.idle!(i + k)));
      open.push(...batch);
    }
    if (signal?.aborted) return { metrics: {}, series: [], histograms: {}, generator: generatorLoad(selfLoad.stop(), 1, 1), valid: false, invalidReason: STOP.cancelled };
    const deadline = Date.now() + COUNT_WAIT_MS;
    let counted = await countedByBroker(mgmt, ctx.vhost);
    while (counted < n && Date.now() < deadline) {
      await sleep(1000);
      counted = await countedByBroker(mgmt, ctx.vhost);
    }
    await sleep(spec.warmupSeconds * 1000);
    selfLoad.start();
    const after = await memory(mgmt, node, Math.max(250, (spec.durationSeconds * 1000) / 3));
    const load = selfLoad.stop();
    const perKib = (bytes: number) => round2(bytes / n / 1024);
    const own = perKib(after.own - before.own);
    const invalidReason =
      counted !== n
        ? `the broker lists ${counted} connections in the trial's vhost, not the ${n} this trial opened: the memory per connection would be wrong`
        : own <= 0
          ? `the broker's memory did not grow with ${n} connections (${before.own} → ${after.own} bytes): too few connections to measure against its noise`
          : undefined;
    const generator = generatorLoad(load, spec.durationSeconds, n, undefined, driver.client);
    return {
      metrics: { memory_per_connection_kib: own, resident_per_connection_kib: perKib(after.rss - before.rss), idle_connections: counted },
      series: [],
      histograms: {},
      generator,
      valid: !invalidReason,
      invalidReason,
    };
  } finally {
    selfLoad.stop();
    await Promise.all(open.map((c) => c.close().catch(() => undefined)));
  }
}
