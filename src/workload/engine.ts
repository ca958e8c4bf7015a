// The workload driver for one trial: opens a connection per producer and per consumer (as
// PerfTest does, through pool.ts), declares the topology, runs warm-up then the measured window,
// stops, and turns the recorder's counts into metrics. It knows AMQP and nothing about GitHub or
// baselines.
// It cannot stall: a watchdog ends a trial whose publishes, confirms and deliveries stop moving
// (named stop reason "stalled: …"; after a stall on the fast path the process switches to plain
// amqplib), and every clean-up step (consumer cancel, connection close) is bounded in time, after
// which the socket is destroyed.
import { messagingStopReason } from './stop-reasons';
import type { GeneratorLoad, ScenarioSpec } from '../schema/types';
import { TrialRecorder, type SeriesSampler, type Counters, startTimeline, windowMetrics } from '../metrics/recorder';
import { SelfLoad, type SaturationThresholds } from '../metrics/selfload';
import { ClientPool, generatorLoad, openProducers, sleep, startConsumers, within } from './pool';
import { nowMs, sleepUntil } from './clock';
import type { Consumer } from './consumer';
import { publishIntervalMs, RateScheduler, startPublishing } from './scheduler';
import { decidedWirePath, demoteToPlain, wirePath } from './wire-check';
import { COMPACT_AFTER_CONNECTIONS, COMPACT_EVERY_CONNECTIONS, compactHeap } from './memory';
import { declareTopology } from './topology';
import { needsScenarioRunner, runScenario } from './scenario';
import { stallSeconds, Watchdog } from './watchdog';
import type { TrialContext, WindowHooks, WorkloadResult } from './types';

export type { WorkloadResult };

const wirePathName = (): string => decidedWirePath()?.path ?? 'undecided';

/**
 * How long cancelling the consumers, then closing the connections, may take after the window.
 * Measured on a broker with 2 KB socket buffers: it reads a consumer's acks at a few kB/s while it
 * still delivers a backlog, so a cancel can wait behind a megabyte of acks in the kernel's send
 * buffer for minutes. The measurement is complete by then; the sockets are destroyed instead
 * (the trial vhost is deleted afterwards in any case).
 */
const CANCEL_MS = 2_000;
const CLOSE_MS = 3_000;
/** One trial: phases, churn, import and setup/window checks go through src/workload/scenario.ts. */
export async function runWorkload(spec: ScenarioSpec, amqpUrl: string, signal?: AbortSignal, ctx?: TrialContext): Promise<WorkloadResult> {
  if (needsScenarioRunner(spec)) return runScenario(spec, amqpUrl, signal, ctx, runMessaging);
  return runMessaging(spec, amqpUrl, signal);
}

/** The steady PerfTest run: warm-up, then the measured window (with optional window hooks). */
export async function runMessaging(spec: ScenarioSpec, amqpUrl: string, signal?: AbortSignal, hooks?: WindowHooks, options: { saturation?: SaturationThresholds } = {}): Promise<WorkloadResult> {
  const w = spec.workload;
  const rec = new TrialRecorder();
  const pool = new ClientPool(amqpUrl, rec, { compactEvery: COMPACT_EVERY_CONNECTIONS });

  const scheduler = new RateScheduler();
  const consumers: Consumer[] = [];
  const selfLoad = new SelfLoad();
  let sampler: SeriesSampler | undefined;
  const intervalMs = publishIntervalMs(w);
  const watchdog = new Watchdog(rec, Math.max(stallSeconds() * 1000, 2 * intervalMs + 1000), () => {
    const c = rec.snapshot();
    const waiting = [
      w.producers > 0 && `publishes (${c.published} so far)`,
      w.producers > 0 && w.confirm && `confirms (${c.confirmed} of ${c.published})`,
      w.consumers > 0 && `deliveries (${c.consumed} so far)`,
    ]
      .filter(Boolean)
      .join(', ');
    return `waiting for ${waiting || 'the broker'} on the ${wirePathName()} client path`;
  });
  // The trial's own stop signal: the caller's (time limit, cancel) or the watchdog's.
  signal = signal ? AbortSignal.any([signal, watchdog.controller.signal]) : watchdog.controller.signal;
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

    const timeline = startTimeline(rec, spec.warmupSeconds, spec.durationSeconds, nowMs);
    const { start, windowStart, windowEnd } = timeline;
    sampler = timeline.sampler;

    // Producers are due to publish all the time, so no progress at all means a stall. (Without
    // producers a drained queue is legitimately quiet: no watchdog.)
    if (w.producers > 0) watchdog.start();
    startPublishing(scheduler, producers, intervalMs, start);
    const delayedConsumers = w.consumerStartDelay > 0 ? sleep(w.consumerStartDelay * 1000).then(consume) : Promise.resolve();

    await sleepUntil(windowStart, signal);
    const atStart: Counters = rec.snapshot();
    rec.measuring = true;
    selfLoad.start();
    hooks?.windowStart?.();
    await sleepUntil(windowEnd, signal);
    rec.measuring = false;
    const atEnd: Counters = rec.snapshot();
    const load = selfLoad.stop();
    const checks = await hooks?.windowEnd?.({
      published: atEnd.published - atStart.published,
      consumed: atEnd.consumed - atStart.consumed,
      seconds: spec.durationSeconds,
    });
    for (const p of producers) p.stop();
    scheduler.stop();
    sampler.stop();
    await delayedConsumers.catch((e: Error) => rec.error(`consumers failed to start: ${e.message}`));

    const seconds = spec.durationSeconds;
    const { metrics, histograms, messages } = windowMetrics(rec, atStart, atEnd, seconds, { producers: w.producers > 0, confirms: Boolean(w.confirm), consumers: w.consumers > 0 });
    Object.assign(metrics, checks?.metrics);
    const generator: GeneratorLoad = generatorLoad(load, seconds, messages, options.saturation);
    let invalidReason = messagingStopReason({
      stalled: watchdog.stalled,
      errors: rec.errors,
      aborted: signal.aborted,
      rate: intervalMs > 0 && w.producers > 0 ? { achieved: (atEnd.published - atStart.published) / seconds, target: (w.producers * 1000) / intervalMs } : undefined,
    });
    if (!invalidReason && checks?.invalidReason) invalidReason = checks.invalidReason;
    return { metrics, series: sampler.points, histograms, generator, valid: !invalidReason, invalidReason };
  } finally {
    pool.ending();
    watchdog.stop();
    scheduler.stop();
    sampler?.stop();
    selfLoad.stop();
    if (watchdog.stalled) demoteToPlain(watchdog.stalled);
    // A broker that never answers a cancel or a close must not hold the trial: each step is bounded.
    await Promise.all(consumers.map((c) => within(c.stop(), CANCEL_MS)));
    await pool.closeAllWithin(CLOSE_MS);
  }
}
