// The messaging engine: one trial's measured window, whatever the protocol. A driver opens its
// clients and hands over its producers as a MessagingLoad — the AMQP 0-9-1 driver (amqp091.ts:
// PerfTest's connections, the rate scheduler, the fast wire path) and the client-library drivers
// of streams, MQTT and AMQP 1.0 (protocols/runner.ts) alike; this module owns everything from
// there on: the stall watchdog and the trial's stop signal, warm-up, the window's edges (counters
// snapshotted, the generator's own CPU measured, the window hooks called), stopping the
// producers, the metrics from the counters, the generator's load, the named stop reason — and the
// bound every close after the window keeps (CLOSE_MS).
import type { ScenarioSpec } from '../schema/types';
import { type Counters, type SeriesSampler, startTimeline, type TrialRecorder, windowMetrics } from '../metrics/recorder';
import { type SaturationThresholds, SelfLoad } from '../metrics/selfload';
import { nowMs, sleepUntil } from './clock';
import { generatorLoad } from './pool';
import { messagingStopReason } from './stop-reasons';
import type { WindowHooks, WorkloadResult } from './types';
import { stallSeconds, Watchdog } from './watchdog';

/** Bound on each close step after the window (producers' loops, clients, connections): a broker
 *  that never answers must not hold the trial. */
export const CLOSE_MS = 3_000;

/** What a driver has opened for one trial: its producers, started and stopped by the window. */
export interface MessagingLoad {
  /** Producers start sending; `startMs` is the timeline's start (a fixed rate counts from it). */
  start(startMs: number): void;
  /** The window has closed (and its hooks ran): producers stop sending. */
  stop(): void;
  /** After stop(), before the metrics: what must still settle (consumers that start late). */
  settled?(): Promise<void>;
}

export interface WindowOptions {
  /** ms between a producer's sends at a fixed rate; 0 = as fast as the confirm window allows. */
  intervalMs: number;
  /** Messages per send (a stream's sub-entry batch; 1 elsewhere). */
  batch: number;
  /** Whether publishes are confirmed (the confirmed rate and the confirm latency). */
  confirms: boolean;
  /** What the trial waits for, in the watchdog's stop reason ("publishes (12 so far) on …"). */
  waiting: () => string;
  /** The client library, recorded with the generator's load (client-library drivers). */
  client?: string;
  saturation?: SaturationThresholds;
  hooks?: WindowHooks;
  /** A reason the trial does not count, after the common ones (the driver's own checks). */
  check?: (atStart: Counters, atEnd: Counters) => string | undefined;
}

/** The trial's result, and the watchdog's stop reason when it ended the trial. */
export type WindowResult = WorkloadResult & { stalled?: string };

/** Runs warm-up and the measured window on what the driver opened, and turns the counts into the
 *  trial's result. The driver closes its clients afterwards (each step within CLOSE_MS). */
export async function measureWindow(spec: ScenarioSpec, rec: TrialRecorder, load: MessagingLoad, o: WindowOptions, outer?: AbortSignal): Promise<WindowResult> {
  const w = spec.workload;
  const producing = w.producers > 0;
  const selfLoad = new SelfLoad();
  const watchdog = new Watchdog(rec, Math.max(stallSeconds() * 1000, 2 * o.intervalMs + 1000), o.waiting);
  // The trial's own stop signal: the caller's (time limit, cancel) or the watchdog's.
  const signal = outer ? AbortSignal.any([outer, watchdog.controller.signal]) : watchdog.controller.signal;
  let sampler: SeriesSampler | undefined;
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    load.stop();
  };
  try {
    const timeline = startTimeline(rec, spec.warmupSeconds, spec.durationSeconds, nowMs);
    sampler = timeline.sampler;
    // Producers are due to publish all the time, so no progress at all means a stall. (Without
    // producers a drained queue is legitimately quiet: no watchdog.)
    if (producing) watchdog.start();
    load.start(timeline.start);
    await sleepUntil(timeline.windowStart, signal);
    const atStart: Counters = rec.snapshot();
    rec.measuring = true;
    selfLoad.start();
    o.hooks?.windowStart?.();
    await sleepUntil(timeline.windowEnd, signal);
    rec.measuring = false;
    const atEnd: Counters = rec.snapshot();
    const cpu = selfLoad.stop();
    const seconds = spec.durationSeconds;
    const checks = await o.hooks?.windowEnd?.({ published: atEnd.published - atStart.published, consumed: atEnd.consumed - atStart.consumed, seconds });
    stop();
    sampler.stop();
    await load.settled?.();

    const { metrics, histograms, messages } = windowMetrics(rec, atStart, atEnd, seconds, { producers: producing, confirms: o.confirms, consumers: w.consumers > 0 });
    Object.assign(metrics, checks?.metrics);
    const generator = generatorLoad(cpu, seconds, messages, o.saturation, o.client);
    const invalidReason =
      messagingStopReason({
        stalled: watchdog.stalled,
        errors: rec.errors,
        aborted: signal.aborted,
        rate: o.intervalMs > 0 && producing ? { achieved: (atEnd.published - atStart.published) / seconds, target: (w.producers * o.batch * 1000) / o.intervalMs } : undefined,
      }) ??
      checks?.invalidReason ??
      o.check?.(atStart, atEnd);
    return { metrics, series: sampler.points, histograms, generator, valid: !invalidReason, invalidReason, ...(watchdog.stalled ? { stalled: watchdog.stalled } : {}) };
  } finally {
    stop();
    watchdog.stop();
    sampler?.stop();
    selfLoad.stop();
  }
}
