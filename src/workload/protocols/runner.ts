// The client-library drivers of the messaging engine: a `kind: protocol` scenario (streams, MQTT,
// AMQP 1.0) opens its consumers and producers through its protocol's driver (driver.ts), and one
// send loop here paces them (a fixed rate or the confirm window, each body stamped); the window
// engine (../engine.ts) runs warm-up, the measured window, the watchdog and the metrics exactly as
// for AMQP 0-9-1, so compare and report treat every protocol alike. MQTT scenarios with idle
// connections measure the broker's memory per connection instead (idle.ts).
import type { ProtocolName, ProtocolScenario } from '../../schema/types';
import { TrialRecorder } from '../../metrics/recorder';
import { credentials } from '../../broker/urls';
import { nowMs } from '../clock';
import { sleep, within } from '../pool';
import type { TrialContext, WorkloadResult } from '../types';
import { CLOSE_MS, type MessagingLoad, measureWindow } from '../engine';
import type { DriverConsumer, DriverFactory, DriverProducer, DriverTarget, ProtocolDriver } from './driver';
import { sendTimeOf, stampedBody } from '../stamp';
import { amqp10Driver } from './amqp10';
import { mqttDriver } from './mqtt';
import { streamDriver } from './stream';
import { runIdle } from './idle';

/** One driver per protocol: a new protocol is a new row and a new file. */
const DRIVERS: Record<ProtocolName, DriverFactory> = { stream: streamDriver, mqtt: mqttDriver, 'amqp-1.0': amqp10Driver };

/** Sends a producer may have outstanding where the scenario sets no confirm window (-c): the
 *  driver's write callbacks still pace it, so a fast producer cannot queue without bound. */
const UNCONFIRMED_WINDOW = 1000;

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
  const onError = (m: string) => rec.error(m);
  const producers: DriverProducer[] = [];
  const consumers: DriverConsumer[] = [];
  const intervalMs = w.rate ? (driver.batch * 1000) / w.rate : w.publishingInterval ? w.publishingInterval * 1000 : 0;
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
    const window = Math.max(1, Math.ceil((w.confirm ?? UNCONFIRMED_WINDOW) / driver.batch));
    const load: MessagingLoad = {
      start: () => {
        for (const [i, p] of producers.entries()) {
          loops.push(produce(p, driver, rec, { window, intervalMs, size: w.size, limit: w.producerMessageLimit, seed: i << 24 }, () => stopping));
        }
      },
      stop: () => {
        stopping = true;
      },
    };
    return await measureWindow(
      spec,
      rec,
      load,
      {
        intervalMs,
        batch: driver.batch,
        confirms: driver.confirms,
        client: driver.client,
        waiting: () =>
          `waiting for ${w.producers > 0 ? `publishes (${rec.published} so far)` : ''}${w.producers > 0 && w.consumers > 0 ? ', ' : ''}${w.consumers > 0 ? `deliveries (${rec.consumed} so far)` : ''} on ${driver.client}`,
        check: (atStart, atEnd) => {
          if (w.producers === 0 && w.consumers > 0 && atEnd.consumed === atStart.consumed) return 'the consumers received nothing in the window (an empty stream or queue)';
          if (w.producers === 0 && driver.replayable && atEnd.consumed >= w.consumers * driver.replayable) {
            return `the consumers read all ${driver.replayable} messages of the backlog before the window ended, so the rate is cut short: raise protocol.backlog`;
          }
          return undefined;
        },
      },
      signal,
    );
  } finally {
    stopping = true;
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
