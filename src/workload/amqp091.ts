// The AMQP 0-9-1 driver of the messaging engine (engine.ts): opens a connection per producer and
// per consumer (as PerfTest does, through pool.ts), declares the topology, starts the consumers and
// hands its producers (the rate scheduler over the fast wire path or plain amqplib, transport.ts)
// to the window, then closes everything within bounds. It knows AMQP and nothing about GitHub or
// baselines. Its producers bring their own send loop rather than the client-library drivers'
// promise per send (protocols/runner.ts): that keeps the generator under a third of PerfTest's CPU
// per message (bench/perftest-vs-gate.mjs).
// It cannot stall: the window's watchdog ends a trial whose publishes, confirms and deliveries stop
// moving (named stop reason "stalled: …"; after a stall on the fast path the process switches to
// plain amqplib), and every clean-up step (consumer cancel, connection close) is bounded in time,
// after which the socket is destroyed.
import type { ScenarioSpec } from '../schema/types';
import { TrialRecorder } from '../metrics/recorder';
import type { SaturationThresholds } from '../metrics/selfload';
import { ClientPool, openProducers, sleep, startConsumers, within } from './pool';
import type { Consumer } from './consumer';
import { publishIntervalMs, RateScheduler, startPublishing } from './scheduler';
import { decidedWirePath, demoteToPlain, wirePath } from './wire-check';
import { COMPACT_AFTER_CONNECTIONS, COMPACT_EVERY_CONNECTIONS, compactHeap } from './memory';
import { declareTopology } from './topology';
import { CLOSE_MS, measureWindow } from './engine';
import type { WindowHooks, WorkloadResult } from './types';

const wirePathName = (): string => decidedWirePath()?.path ?? 'undecided';

/**
 * How long cancelling the consumers may take after the window (then connections close within
 * CLOSE_MS). Measured on a broker with 2 KB socket buffers: it reads a consumer's acks at a few
 * kB/s while it still delivers a backlog, so a cancel can wait behind a megabyte of acks in the
 * kernel's send buffer for minutes. The measurement is complete by then; the sockets are destroyed
 * instead (the trial vhost is deleted afterwards in any case).
 */
const CANCEL_MS = 2_000;

/** The steady PerfTest run: warm-up, then the measured window (with optional window hooks). */
export async function runMessaging(spec: ScenarioSpec, amqpUrl: string, signal?: AbortSignal, hooks?: WindowHooks, options: { saturation?: SaturationThresholds } = {}): Promise<WorkloadResult> {
  const w = spec.workload;
  const rec = new TrialRecorder();
  const pool = new ClientPool(amqpUrl, rec, { compactEvery: COMPACT_EVERY_CONNECTIONS });
  const scheduler = new RateScheduler();
  const consumers: Consumer[] = [];
  const intervalMs = publishIntervalMs(w);
  let stalled: string | undefined;
  try {
    const setup = await pool.open();
    // A confirm channel (a Channel too): the fast-path check sees both kinds' prototypes.
    const setupCh = await setup.createConfirmChannel();
    wirePath(setupCh); // once per process: fast path, or plain amqplib and why (wire-check.ts)
    const queues = await declareTopology(setupCh, w);
    await setupCh.close();

    const consumerConns = await pool.openMany(w.consumers);
    const consumerArgs = w.queueArgs['x-queue-type'] === 'stream' ? { 'x-stream-offset': 'next' } : {};
    const consume = async () => {
      await startConsumers(pool, consumerConns, w, queues, rec, consumers, consumerArgs);
    };
    if (w.consumerStartDelay <= 0) await consume();

    const producers = await openProducers(pool, await pool.openMany(w.producers), w, queues, rec);
    // Thousands of connections: drop the set-up garbage and young-generation growth (memory.ts).
    if (pool.conns.length >= COMPACT_AFTER_CONNECTIONS) compactHeap();

    let delayedConsumers: Promise<void> = Promise.resolve();
    const result = await measureWindow(
      spec,
      rec,
      {
        start: (startMs) => {
          startPublishing(scheduler, producers, intervalMs, startMs);
          if (w.consumerStartDelay > 0) delayedConsumers = sleep(w.consumerStartDelay * 1000).then(consume);
        },
        stop: () => {
          for (const p of producers) p.stop();
          scheduler.stop();
        },
        settled: () => delayedConsumers.catch((e: Error) => rec.error(`consumers failed to start: ${e.message}`)),
      },
      {
        intervalMs,
        batch: 1,
        confirms: Boolean(w.confirm),
        saturation: options.saturation,
        hooks,
        waiting: () => {
          const c = rec.snapshot();
          const waiting = [
            w.producers > 0 && `publishes (${c.published} so far)`,
            w.producers > 0 && w.confirm && `confirms (${c.confirmed} of ${c.published})`,
            w.consumers > 0 && `deliveries (${c.consumed} so far)`,
          ]
            .filter(Boolean)
            .join(', ');
          return `waiting for ${waiting || 'the broker'} on the ${wirePathName()} client path`;
        },
      },
      signal,
    );
    ({ stalled } = result);
    delete result.stalled;
    return result;
  } finally {
    pool.ending();
    scheduler.stop();
    if (stalled) demoteToPlain(stalled);
    // A broker that never answers a cancel or a close must not hold the trial: each step is bounded.
    await Promise.all(consumers.map((c) => within(c.stop(), CANCEL_MS)));
    await pool.closeAllWithin(CLOSE_MS);
  }
}
