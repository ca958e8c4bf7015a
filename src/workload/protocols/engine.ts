// The protocol engine: runs a `kind: protocol` scenario (streams, MQTT, AMQP 1.0) through its
// driver (driver.ts) with the same trial shape and metrics as the AMQP 0-9-1 engine — warm-up,
// measured window, published/confirmed/consumed rates, end-to-end and confirm latency histograms,
// the per-second series, the generator's own load, the stall watchdog — so compare and report
// treat every protocol alike. MQTT scenarios with idle connections measure the broker's memory
// per connection instead (idle.ts).
import { messagingStopReason } from '../stop-reasons';
import type { ProtocolName, ProtocolScenario } from '../../schema/types';
import { type SeriesSampler, TrialRecorder, type Counters, startTimeline, windowMetrics } from '../../metrics/recorder';
import { SelfLoad } from '../../metrics/selfload';
import { credentials } from '../../broker/urls';
import { nowMs, sleepUntil } from '../clock';
import { generatorLoad, sleep, within } from '../pool';
import type { TrialContext, WorkloadResult } from '../types';
import { stallSeconds, Watchdog } from '../watchdog';
import { type DriverConsumer, type DriverFactory, type DriverProducer, type DriverTarget, type ProtocolDriver, sendTimeOf, stampedBody } from './driver';
import { amqp10Driver } from './amqp10';
import { mqttDriver } from './mqtt';
import { streamDriver } from './stream';
import { runIdle } from './idle';

/** One driver per protocol: a new protocol is a new row and a new file. */
const DRIVERS: Record<ProtocolName, DriverFactory> = { stream: streamDriver, mqtt: mqttDriver, 'amqp-1.0': amqp10Driver };

/** Sends a producer may have outstanding where the scenario sets no confirm window (-c): the
 *  driver's write callbacks still pace it, so a fast producer cannot queue without bound. */
const UNCONFIRMED_WINDOW = 1000;
/** Bounds on closing clients after the window (a broker that never answers must not hold the trial). */
const CLOSE_MS = 3_000;

/** The driver's connection target: the trial vhost on the target's listener for the protocol. */
export function driverTarget(spec: ProtocolScenario, amqpUrl: string, ctx: TrialContext): DriverTarget {
  const endpoint = ctx.endpoints?.[spec.protocol.name];
  if (!endpoint) throw new Error(`scenario ${spec.id} speaks ${spec.protocol.name}, but the target has no listener for it`);
  const at = endpoint.lastIndexOf(':');
  const { user, pass } = credentials(amqpUrl);
  return { host: endpoint.slice(0, at).replace(/^\[|\]$/g, ''), port: Number(endpoint.slice(at + 1)), user, pass, vhost: ctx.vhost, amqpUrl };
}

export async function runProtocol(spec: ProtocolScenario, amqpUrl: string, ctx: TrialContext, signal?: AbortSignal): Promise<WorkloadResult> {
  const driver = DRIVERS[spec.protocol.name](spec, driverTarget(spec, amqpUrl, ctx));
  try {
    await driver.prepare();
    if (spec.protocol.name === 'mqtt' && spec.protocol.idleConnections > 0) return await runIdle(spec, driver, ctx, signal);
    return await runMessages(spec, driver, signal);
  } finally {
    await within(driver.close(), CLOSE_MS);
  }
}

async function runMessages(spec: ProtocolScenario, driver: ProtocolDriver, signal?: AbortSignal): Promise<WorkloadResult> {
  const w = spec.workload;
  const rec = new TrialRecorder();
  const selfLoad = new SelfLoad();
  const onError = (m: string) => rec.error(m);
  const producers: DriverProducer[] = [];
  const consumers: DriverConsumer[] = [];
  const sendIntervalMs = w.rate ? (driver.batch * 1000) / w.rate : w.publishingInterval ? w.publishingInterval * 1000 : 0;
  const watchdog = new Watchdog(
    rec,
    Math.max(stallSeconds() * 1000, 2 * sendIntervalMs + 1000),
    () =>
      `waiting for ${w.producers > 0 ? `publishes (${rec.published} so far)` : ''}${w.producers > 0 && w.consumers > 0 ? ', ' : ''}${w.consumers > 0 ? `deliveries (${rec.consumed} so far)` : ''} on ${driver.client}`,
  );
  signal = signal ? AbortSignal.any([signal, watchdog.controller.signal]) : watchdog.controller.signal;
  let sampler: SeriesSampler | undefined;
  let stopping = false;
  const loops: Promise<void>[] = [];
  try {
    const onMessage = (body: Buffer) => {
      rec.consumed++;
      const sent = sendTimeOf(body);
      if (rec.measuring && !Number.isNaN(sent)) rec.recordLatency((nowMs() - sent) * 1000);
    };
    for (let i = 0; i < w.consumers; i++) consumers.push(await driver.consumer(i, onMessage, onError));
    for (let i = 0; i < w.producers; i++) producers.push(await driver.producer(i, onError));

    const timeline = startTimeline(rec, spec.warmupSeconds, spec.durationSeconds, nowMs);
    const { windowStart, windowEnd } = timeline;
    sampler = timeline.sampler;
    if (w.producers > 0) watchdog.start();
    const window = Math.max(1, Math.ceil((w.confirm ?? UNCONFIRMED_WINDOW) / driver.batch));
    for (const [i, p] of producers.entries()) {
      loops.push(produce(p, driver, rec, { window, intervalMs: sendIntervalMs, size: w.size, limit: w.producerMessageLimit, seed: i << 24 }, () => stopping || signal!.aborted));
    }
    await sleepUntil(windowStart, signal);
    const atStart: Counters = rec.snapshot();
    rec.measuring = true;
    selfLoad.start();
    await sleepUntil(windowEnd, signal);
    rec.measuring = false;
    const atEnd: Counters = rec.snapshot();
    const load = selfLoad.stop();
    stopping = true;
    sampler.stop();

    const seconds = spec.durationSeconds;
    const { metrics, histograms, messages } = windowMetrics(rec, atStart, atEnd, seconds, { producers: w.producers > 0, confirms: driver.confirms, consumers: w.consumers > 0 });
    const generator = generatorLoad(load, seconds, messages, undefined, driver.client);
    let invalidReason = messagingStopReason({
      stalled: watchdog.stalled,
      errors: rec.errors,
      aborted: signal.aborted,
      rate: sendIntervalMs > 0 && w.producers > 0 ? { achieved: (atEnd.published - atStart.published) / seconds, target: (w.producers * driver.batch * 1000) / sendIntervalMs } : undefined,
    });
    if (!invalidReason && w.producers === 0 && w.consumers > 0 && atEnd.consumed === atStart.consumed) {
      invalidReason = 'the consumers received nothing in the window (an empty stream or queue)';
    } else if (!invalidReason && w.producers === 0 && driver.replayable && atEnd.consumed >= w.consumers * driver.replayable) {
      invalidReason = `the consumers read all ${driver.replayable} messages of the backlog before the window ended, so the rate is cut short: raise protocol.backlog`;
    }
    return { metrics, series: sampler.points, histograms, generator, valid: !invalidReason, invalidReason };
  } finally {
    stopping = true;
    watchdog.stop();
    sampler?.stop();
    selfLoad.stop();
    await within(Promise.all(loops), CLOSE_MS);
    await within(Promise.all([...producers, ...consumers].map((c) => c.close().catch(() => undefined))), CLOSE_MS);
  }
}

interface ProduceOptions {
  /** Sends (not messages) outstanding at most. */
  window: number;
  /** ms between sends; 0 = as fast as the window allows. */
  intervalMs: number;
  size: number;
  /** Messages after which the producer stops (-C); 0 = unlimited. */
  limit: number;
  /** Sequence numbers of producer i start at i << 24 (told apart in a captured body). */
  seed: number;
}

/** One producer's loop: stamped bodies, at most `window` sends in flight, at a fixed interval or
 *  as fast as confirms (or writes) come back. */
async function produce(p: DriverProducer, d: ProtocolDriver, rec: TrialRecorder, o: ProduceOptions, stop: () => boolean): Promise<void> {
  let inflight = 0;
  let wake: (() => void) | undefined;
  let seq = o.seed;
  let sent = 0;
  let next = nowMs();
  const settle = () => {
    inflight--;
    const w = wake;
    wake = undefined;
    w?.();
  };
  while (!stop() && (o.limit === 0 || sent < o.limit)) {
    if (inflight >= o.window) {
      await new Promise<void>((r) => {
        const timer = setTimeout(r, 250); // re-check stop() even when nothing settles
        wake = () => {
          clearTimeout(timer);
          r();
        };
      });
      continue;
    }
    // At a fixed rate a body carries its intended send time, as PerfTest's do: a publish held up
    // by the broker counts the wait in its latency (no coordinated omission).
    let t = nowMs();
    if (o.intervalMs > 0) {
      if (next > t) await sleep(next - t);
      t = next;
      next += o.intervalMs;
      if (stop()) break;
    }
    const bodies = Array.from({ length: d.batch }, () => stampedBody(o.size, seq++, t));
    inflight++;
    sent += bodies.length;
    rec.published += bodies.length;
    p.send(bodies).then(
      () => {
        if (d.confirms) {
          rec.confirmed += bodies.length;
          rec.recordConfirmLatency((nowMs() - t) * 1000);
        }
        settle();
      },
      (e: Error) => {
        rec.error(`publish failed: ${e.message}`);
        settle();
      },
    );
    // Let I/O in between sends that resolve synchronously.
    if ((sent & 255) < d.batch) await new Promise<void>((r) => setImmediate(r));
  }
}
