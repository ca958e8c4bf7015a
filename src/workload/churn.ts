// Metadata churn, as lavinmqperf's queue-churn, bind-churn, connection-churn and channel-churn
// modes: `concurrency` loops each repeat one operation back to back for warm-up + window; the
// operations completed inside the window give <object>_churn_ops (ops/s) and their latency
// histogram churn_op_latency_*. Everything is created in the trial's vhost and dies with it.
import { STOP } from './stop-reasons';
import { randomBytes } from 'node:crypto';
import amqp, { type Channel, type ChannelModel } from 'amqplib';
import type { ChurnScenario, ChurnSpec } from '../schema/types';
import { CHURN_METRIC } from '../metrics/definitions';
import { newHistogram, encode, percentileMetrics } from '../metrics/histogram';
import { round2 } from '../metrics/recorder';
import { SelfLoad } from '../metrics/selfload';
import { nowMs } from './clock';
import { ClientPool, generatorLoad, sleep } from './pool';
import type { WorkloadResult } from './types';

type Op = () => Promise<void>;

/** One loop's operation, with whatever it needs set up first (a connection, a queue to bind). */
async function makeOp(c: ChurnSpec, pool: ClientPool, loop: number): Promise<Op> {
  const hex = () => randomBytes(8).toString('hex');
  if (c.object === 'connection') {
    return async () => {
      const conn = await amqp.connect(pool.url, { noDelay: true, timeout: 15_000 });
      conn.on('error', () => undefined);
      await conn.createChannel();
      await conn.close();
    };
  }
  const conn: ChannelModel = await pool.open();
  if (c.object === 'channel') {
    return async () => {
      const ch = await conn.createChannel();
      await ch.close();
    };
  }
  const ch: Channel = await pool.channel(conn);
  if (c.object === 'queue') {
    return c.durable
      ? async () => {
          const q = `queue-churn-durable-${loop}-${hex()}`;
          await ch.assertQueue(q, { durable: true, autoDelete: false });
          await ch.deleteQueue(q);
        }
      : async () => {
          const ok = await ch.assertQueue('', { durable: false, exclusive: true, autoDelete: true });
          await ch.deleteQueue(ok.queue);
        };
  }
  const ok = c.durable
    ? await ch.assertQueue(`bind-churn-durable-${loop}-${hex()}`, { durable: true, autoDelete: false })
    : await ch.assertQueue('', { durable: false, exclusive: true, autoDelete: true });
  return async () => {
    await ch.bindQueue(ok.queue, 'amq.direct', hex());
  };
}

export async function runChurn(spec: ChurnScenario, amqpUrl: string, signal?: AbortSignal): Promise<WorkloadResult> {
  const c = spec.churn;
  const errors: string[] = [];
  const pool = new ClientPool(amqpUrl, {
    error: (m) => {
      if (!errors.includes(m)) errors.push(m);
    },
  });
  const latency = newHistogram();
  const selfLoad = new SelfLoad();
  let inWindow = 0;
  let measuring = false;
  try {
    const ops = await Promise.all(Array.from({ length: c.concurrency }, (_, i) => makeOp(c, pool, i)));
    const start = nowMs();
    const windowStart = start + spec.warmupSeconds * 1000;
    const windowEnd = windowStart + spec.durationSeconds * 1000;
    const loops = ops.map(async (op) => {
      while (!signal?.aborted && nowMs() < windowEnd && !errors.length) {
        const t = nowMs();
        try {
          await op();
        } catch (e) {
          errors.push(`${c.object} churn failed: ${(e as Error).message}`);
          return;
        }
        if (measuring && nowMs() <= windowEnd) {
          inWindow++;
          latency.recordValue(Math.max(1, Math.round((nowMs() - t) * 1000)));
        }
      }
    });
    await sleep(Math.max(0, windowStart - nowMs()));
    measuring = true;
    selfLoad.start();
    await Promise.all(loops);
    measuring = false;
    const load = selfLoad.stop();
    const metrics: Record<string, number> = {
      [CHURN_METRIC[c.object]]: round2(inWindow / spec.durationSeconds),
      ...percentileMetrics('churn_op_latency', latency),
    };
    const invalid = errors.length ? errors.join('; ') : signal?.aborted ? STOP.cancelled : undefined;
    return {
      metrics,
      series: [],
      histograms: latency.totalCount ? { churn_op_latency: encode(latency) } : {},
      generator: generatorLoad(load, spec.durationSeconds, inWindow),
      valid: !invalid,
      invalidReason: invalid,
    };
  } finally {
    selfLoad.stop();
    await pool.closeAll();
  }
}
