// Every catalogue scenario at smoke scale on the real broker (0.3 s warm-up and a 1 s window;
// fixed-rate ones 0.5 + 2 s, since a second's stall on a busy machine would put them under the
// 95 % of their rate a trial must reach; client counts × 0.1): each must give a valid trial and
// pass a sanity check specific to it. Axis files run once per axis value (sizes and queue types
// paired diagonally), not over every combination.
import amqp from 'amqplib';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCatalogue } from '../../src/config/catalogue';
import { runWorkload, type WorkloadResult } from '../../src/workload/scenario';
import { queueNames } from '../../src/workload/topology';
import type { ScenarioSpec } from '../../src/schema/types';
import { freshVhost, MANAGEMENT_URL } from '../support/broker';
import { ofKind } from '../support/kinds';

const SMOKE = { warmupSeconds: 0.3, durationSeconds: 1 };
const SMOKE_FIXED_RATE = { warmupSeconds: 0.5, durationSeconds: 2 };
const fixedRateSpec = (s: ScenarioSpec) => Boolean(s.workload.rate || s.workload.publishingInterval);

/** One spec per axis value: the i-th combination pairs the i-th size with the i-th queue type. */
function smokeSelection(all: ScenarioSpec[]): ScenarioSpec[] {
  const byFile = new Map<string, ScenarioSpec[]>();
  for (const s of all) byFile.set(s.file, [...(byFile.get(s.file) ?? []), s]);
  return [...byFile.values()].flatMap((specs) => {
    if (specs.length === 1) return specs;
    const sizes = [...new Set(specs.map((s) => s.axes?.size))];
    const types = [...new Set(specs.map((s) => s.axes?.queue))];
    return Array.from({ length: Math.max(sizes.length, types.length) }, (_, i) => specs.find((s) => s.axes?.size === sizes[i % sizes.length] && s.axes?.queue === types[i % types.length])!);
  });
}

type Depth = (queue: string) => Promise<number>;
type Check = (r: WorkloadResult, s: ScenarioSpec, depth: Depth) => Promise<void> | void;

const m = (r: WorkloadResult, id: string) => r.metrics[id] ?? NaN;
const flows: Check = (r) => {
  expect(m(r, 'published_rate')).toBeGreaterThan(0);
  // Over a 1 s window a consumer may lag or catch up (streams read from a log): a sanity range.
  const ratio = m(r, 'consumed_rate') / m(r, 'published_rate');
  expect(ratio).toBeGreaterThan(0.3);
  expect(ratio).toBeLessThan(3);
};
const fixedRate: Check = (r, s) => {
  const w = s.workload;
  const target = w.producers * (w.publishingInterval ? 1 / w.publishingInterval : w.rate!);
  expect(m(r, 'published_rate')).toBeGreaterThan(target * 0.9);
  expect(m(r, 'consumed_rate')).toBeGreaterThan(target * 0.8);
  expect(m(r, 'latency_p99_ms')).toBeGreaterThan(0);
};
const publishOnly: Check = async (r, s, depth) => {
  expect(m(r, 'published_rate')).toBeGreaterThan(0);
  expect(r.metrics.consumed_rate).toBeUndefined();
  expect(await depth(s.workload.queue)).toBeGreaterThan(0);
};
const drained: Check = async (r, s, depth) => {
  expect(m(r, 'fill_rate')).toBeGreaterThan(0);
  expect(m(r, 'drain_rate')).toBeGreaterThan(0);
  expect(m(r, 'drain_rate')).toBeLessThan(1_000_000); // timed from first to last delivery, never ~0 s
  for (const q of queueNames(s.workload)) expect(await depth(q)).toBe(0);
};
const churn =
  (metric: string): Check =>
  (r) => {
    expect(m(r, metric)).toBeGreaterThan(1);
    expect(m(r, 'churn_op_latency_p50_ms')).toBeGreaterThan(0);
  };
const imported: Check = async (r, s) => {
  expect(m(r, 'import_seconds')).toBeGreaterThan(0);
  expect(m(r, 'reimport_seconds')).toBeGreaterThan(0);
  const imp = ofKind(s, 'import').import;
  if (imp.vhosts === 0) {
    const { mgmt, vhost } = current!;
    const queues = (await mgmt.queues(vhost)).filter((q) => q.name.startsWith('import-q-'));
    expect(queues.length).toBe(imp.queues);
  }
  // The many-vhosts variant removes what it made: nothing named after the trial is left.
  expect((await current!.mgmt.listVhosts()).filter((v) => v.startsWith(`${current!.vhost}-`))).toEqual([]);
};

const CHECKS: Record<string, Check> = {
  one_fast: flows,
  one_fast_multiack: flows,
  one_one_one: flows,
  throughput_by_size: flows,
  confirm_latency: flows,
  // Its AMQP 0-9-1 variant; the other protocols run on containers in protocols.test.ts.
  protocols_one_fast: flows,
  fanout10: (r) => {
    const ratio = m(r, 'consumed_rate') / m(r, 'published_rate');
    expect(ratio).toBeGreaterThan(8);
    expect(ratio).toBeLessThan(12);
  },
  fivers: fixedRate,
  latency_fixed_rate: fixedRate,
  five_hundred_queues: fixedRate,
  seven_thousand_slow_one_queue: fixedRate,
  thousand_slow_thousand_queues: fixedRate,
  two_publishers_no_consumers: publishOnly,
  publish_to_nack: async (r, s, depth) => {
    await publishOnly(r, s, depth);
    expect(await depth('nack_dlq')).toBe(0);
  },
  publish_only_ttl: async (r, s, depth) => {
    await publishOnly(r, s, depth);
    expect(m(r, 'dead_lettered_rate')).toBeGreaterThan(0);
    expect(await depth('ttl_dlq')).toBeGreaterThan(0);
  },
  one_consumer_no_publishers: drained,
  cq_backlog: drained,
  long_quorum_queue: drained,
  nack_published: async (r, s, depth) => {
    await drained(r, s, depth);
    expect(await depth('nack_dlq')).toBeGreaterThan(0);
    expect(m(r, 'dead_lettered_rate') / m(r, 'drain_rate')).toBeGreaterThan(0.8);
  },
  consumers_join_late: (r) => {
    expect(m(r, 'drain_rate')).toBeGreaterThan(m(r, 'fill_rate'));
    expect(m(r, 'drain_rate')).toBeLessThan(1_000_000);
  },
  consumers_join_late_sac: (r) => {
    expect(m(r, 'drain_rate')).toBeGreaterThan(m(r, 'fill_rate'));
    expect(m(r, 'drain_rate')).toBeLessThan(1_000_000);
  },
  queue_churn_transient: churn('queue_churn_ops'),
  queue_churn_durable: churn('queue_churn_ops'),
  bind_churn_nondurable: churn('bind_churn_ops'),
  bind_churn_durable: churn('bind_churn_ops'),
  connection_churn: churn('connection_churn_ops'),
  channel_churn: churn('channel_churn_ops'),
  import_queues_bindings: imported,
  import_classic_queues: imported,
  import_quorum_queues: imported,
  import_vhosts: imported,
};

let current: Awaited<ReturnType<typeof freshVhost>> | undefined;
const drops: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const d of drops) await d().catch(() => undefined);
});

describe('every catalogue scenario at smoke scale on the real broker', () => {
  // Restart scenarios restart the node, which this URL broker must never be: node-start.test.ts.
  // Streams, MQTT and AMQP 1.0 need listeners (and a 4.x broker) this service does not have:
  // protocols.test.ts runs them on 3.10.8 and 4.0.5 containers.
  const all = loadCatalogue({ scale: 0.1 }).filter((s) => s.kind !== 'restart' && s.kind !== 'protocol');
  it('has a sanity check for every scenario file', () => {
    expect([...new Set(all.map((s) => s.id.replace(/\[.*$/, '')))].filter((id) => !CHECKS[id])).toEqual([]);
  });
  for (const spec of smokeSelection(all)) {
    it(spec.id, async () => {
      current = await freshVhost(spec.id.replace(/[^a-z0-9]+/g, '-').slice(0, 40));
      drops.push(current.drop);
      const s = { ...spec, ...(fixedRateSpec(spec) ? SMOKE_FIXED_RATE : SMOKE) };
      const t0 = Date.now();
      const r = await runWorkload(s, current.url, undefined, { managementUrl: MANAGEMENT_URL, vhost: current.vhost });
      console.log(`${spec.id} ${((Date.now() - t0) / 1000).toFixed(1)} s ${JSON.stringify(r.metrics)}`);
      expect(r.valid, r.invalidReason).toBe(true);
      const conn = await amqp.connect(current.url);
      try {
        const ch = await conn.createChannel();
        const depth: Depth = async (q) => (await ch.checkQueue(q)).messageCount;
        await CHECKS[spec.id.replace(/\[.*$/, '')](r, s, depth);
      } finally {
        await conn.close();
        await current.drop();
      }
    });
  }
});
