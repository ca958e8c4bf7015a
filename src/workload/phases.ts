// Phased scenarios: a fill then a drain on one topology inside one trial, the way rabbitmq/testing
// runs two_publishers_no_consumers and then one_consumer_no_publishers on the same queue. The fill
// publishes (no consumers) until every producer's -C is confirmed or warm-up + window end; the
// drain consumes until the queues are empty, optionally while the fill's producers keep going
// (consumers join late). Reports fill_rate, drain_rate, the fill's confirm latency and, with a
// dead-letter queue, dead_lettered_rate. A drain that does not finish makes the trial invalid.
import { belowTargetRate, STOP } from './stop-reasons';
import type { Channel } from 'amqplib';
import type { PhaseSpec, PhasesScenario, WorkloadParams } from '../schema/types';
import { round2 as round, SeriesSampler, TrialRecorder } from '../metrics/recorder';
import { encode, percentileMetrics } from '../metrics/histogram';
import { SelfLoad } from '../metrics/selfload';
import { nowMs } from './clock';
import type { Consumer } from './consumer';
import type { Producer } from './producer';
import { publishIntervalMs, RateScheduler, startPublishing } from './scheduler';
import { declareTopology } from './topology';
import { ClientPool, generatorLoad, openProducers, readyDepth, sleep, startConsumers } from './pool';
import type { WorkloadResult } from './types';

/** A drain still running after this long makes the trial invalid (it stays inside the trial's time limit). */
export const DRAIN_LIMIT_SECONDS = 60;

interface Ctx {
  spec: PhasesScenario;
  rec: TrialRecorder;
  pool: ClientPool;
  mon: Channel;
  queues: string[];
  scheduler: RateScheduler;
  producers: Producer[];
  consumers: Consumer[];
  metrics: Record<string, number>;
  signal?: AbortSignal;
}

export async function runPhases(spec: PhasesScenario, amqpUrl: string, signal?: AbortSignal): Promise<WorkloadResult> {
  const rec = new TrialRecorder();
  const pool = new ClientPool(amqpUrl, rec);
  const selfLoad = new SelfLoad();
  const phases = spec.phases;
  let sampler: SeriesSampler | undefined;
  const ctx = { spec, rec, pool, scheduler: new RateScheduler(), producers: [], consumers: [], metrics: {}, signal } as unknown as Ctx;
  let invalid: string | undefined;
  try {
    ctx.mon = await pool.channel(await pool.open());
    ctx.queues = await declareTopology(ctx.mon, phases[0].workload);
    const t0 = nowMs();
    sampler = new SeriesSampler(rec, t0 + spec.warmupSeconds * 1000, nowMs);
    sampler.start();
    selfLoad.start();
    for (const [i, phase] of phases.entries()) {
      if (signal?.aborted || invalid) break;
      const keepGoing = phases[i + 1]?.keepPublishing ?? false;
      invalid = phase.role === 'fill' ? await fill(ctx, phase.workload, keepGoing) : await drain(ctx, phase);
    }
    const load = selfLoad.stop();
    const seconds = (nowMs() - t0) / 1000;
    invalid ??= rec.errors.length ? rec.errors.join('; ') : signal?.aborted ? STOP.cancelled : undefined;
    Object.assign(ctx.metrics, percentileMetrics('confirm_latency', rec.confirmLatency));
    const histograms: Record<string, string> = {};
    if (rec.confirmLatency.totalCount > 0) histograms.confirm_latency = encode(rec.confirmLatency);
    return {
      metrics: ctx.metrics,
      series: sampler.points,
      histograms,
      valid: !invalid,
      invalidReason: invalid,
      generator: generatorLoad(load, seconds, rec.published + rec.consumed),
    };
  } finally {
    ctx.scheduler.stop();
    sampler?.stop();
    selfLoad.stop();
    for (const p of ctx.producers) p.stop();
    await Promise.all(ctx.consumers.map((c) => c.stop()));
    await pool.closeAll();
  }
}

/** Publishes until every producer reached -C (and was confirmed) or warm-up + window end. */
async function fill(ctx: Ctx, w: WorkloadParams, keepPublishing: boolean): Promise<string | undefined> {
  const { spec, rec, pool, queues } = ctx;
  ctx.producers = await openProducers(pool, await pool.openMany(w.producers), w, queues, rec);
  const intervalMs = publishIntervalMs(w);
  const counted = w.producerMessageLimit > 0;
  const count = () => (w.confirm ? rec.confirmed : rec.published);
  const settled = () => ctx.producers.every((p) => p.done) && (!w.confirm || rec.confirmed + rec.nacked >= rec.published);
  const start = nowMs();
  const windowStart = start + ctx.spec.warmupSeconds * 1000;
  const end = windowStart + spec.durationSeconds * 1000;
  rec.measuring = true;
  startPublishing(ctx.scheduler, ctx.producers, intervalMs, start);
  let atWindow: { n: number; published: number } | undefined;
  while (!ctx.signal?.aborted && nowMs() < end && !(counted && settled()) && !rec.errors.length) {
    if (!atWindow && nowMs() >= windowStart) atWindow = { n: count(), published: rec.published };
    await sleep(5);
  }
  const stop = nowMs();
  rec.measuring = false;
  // A counted fill is measured whole; a timed one over its window, like a steady run.
  const from = counted || !atWindow ? { t: start, n: 0, published: 0 } : { t: windowStart, ...atWindow };
  const seconds = Math.max(stop - from.t, 1) / 1000;
  ctx.metrics.fill_rate = round((count() - from.n) / seconds);
  if (!keepPublishing) {
    for (const p of ctx.producers) p.stop();
    ctx.scheduler.stop();
    const deadline = nowMs() + 5000;
    while (w.confirm && rec.confirmed + rec.nacked < rec.published && nowMs() < deadline) await sleep(10);
  }
  if (intervalMs > 0) {
    const target = (w.producers * 1000) / intervalMs;
    const achieved = (rec.published - from.published) / seconds;
    const short = belowTargetRate(achieved, target);
    if (short) return short;
  }
  return undefined;
}

/** Consumes until the backlog is gone (or, with producers still running, caught up with them). */
async function drain(ctx: Ctx, phase: PhaseSpec): Promise<string | undefined> {
  const { spec, rec, pool, mon, queues } = ctx;
  const w = phase.workload;
  const dlq = spec.setup?.deadLetterQueue;
  const backlog = phase.keepPublishing ? rec.published - rec.consumed : await readyDepth(mon, queues);
  const dlqBefore = dlq ? await readyDepth(mon, [dlq]) : 0;
  const slack = phase.keepPublishing ? Math.max(100, Math.round(backlog * 0.01)) : 0;
  const conns = await pool.openMany(w.consumers);
  let channels: Channel[] = [];
  const consumed0 = rec.consumed;
  const done = () => (phase.keepPublishing ? rec.published - rec.consumed <= slack : rec.consumed - consumed0 >= backlog);
  // The drain is timed from its first delivery to the delivery that completes it, both stamped
  // as they are counted (consumers may drain much of it while others are still starting).
  let first = 0;
  let end = 0;
  let drained = 0;
  let count = consumed0;
  Object.defineProperty(rec, 'consumed', {
    configurable: true,
    enumerable: true,
    get: () => count,
    set: (v: number) => {
      count = v;
      if (!first) first = nowMs();
      if (!end && done()) {
        end = nowMs();
        drained = count - consumed0;
      }
    },
  });
  const start = nowMs();
  try {
    channels = await startConsumers(pool, conns, w, queues, rec, ctx.consumers);
    const limit = start + DRAIN_LIMIT_SECONDS * 1000;
    if (!end && done()) {
      end = nowMs();
      drained = count - consumed0;
    }
    while (!end && !ctx.signal?.aborted && nowMs() < limit && !rec.errors.length) await sleep(5);
  } finally {
    Object.defineProperty(rec, 'consumed', { configurable: true, enumerable: true, writable: true, value: count });
  }
  if (!end) drained = rec.consumed - consumed0;
  const seconds = Math.max((end || nowMs()) - (first || start), 1) / 1000;
  ctx.metrics.drain_rate = round(drained / seconds);
  for (const p of ctx.producers) p.stop();
  ctx.scheduler.stop();
  // Cancel first (every delivery before cancel-ok has then been handled), then ack the
  // remainder a multi-ack consumer still holds, so nothing is requeued.
  await Promise.all(ctx.consumers.map((c) => c.stop()));
  if (w.multiAckEvery > 1 && !w.autoAck && !w.nack) for (const ch of channels) ch.ackAll();
  if (dlq) {
    await sleep(200);
    ctx.metrics.dead_lettered_rate = round(((await readyDepth(mon, [dlq])) - dlqBefore) / seconds);
  }
  if (rec.errors.length) return rec.errors.join('; ');
  if (!end && !ctx.signal?.aborted) {
    return `the backlog did not drain within ${DRAIN_LIMIT_SECONDS} s (${drained} of ${phase.keepPublishing ? 'the growing' : backlog} messages consumed)`;
  }
  if (!phase.keepPublishing) {
    const left = await readyDepth(mon, queues);
    if (left > 0) return `${left} messages were left in the queues after the drain`;
  }
  return undefined;
}
