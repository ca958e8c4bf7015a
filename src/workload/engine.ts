// The workload driver for one trial: opens a connection per producer and per consumer (as
// PerfTest does), declares the topology, runs warm-up then the measured window, stops, and turns
// the recorder's counts into metrics. It knows AMQP and nothing about GitHub or baselines.
// It cannot stall: a watchdog ends a trial whose publishes, confirms and deliveries stop moving
// (named stop reason "stalled: …"; after a stall on the fast path the process switches to plain
// amqplib), and every clean-up step (consumer cancel, connection close) is bounded in time, after
// which the socket is destroyed.
import { STOP } from './stop-reasons';
import amqp, { type Channel, type ChannelModel } from 'amqplib';
import type { GeneratorLoad, ScenarioSpec } from '../schema/types';
import { TrialRecorder, SeriesSampler, type Counters } from '../metrics/recorder';
import { encode, percentileMetrics } from '../metrics/histogram';
import { SelfLoad, type SaturationThresholds } from '../metrics/selfload';
import { generatorLoad } from './pool';
import { nowMs } from './clock';
import { Consumer } from './consumer';
import { Producer } from './producer';
import { RateScheduler, scheduleSpread } from './scheduler';
import { decidedWirePath, demoteToPlain, wirePath } from './wire-check';
import { COMPACT_AFTER_CONNECTIONS, COMPACT_EVERY_CONNECTIONS, compactHeap } from './memory';
import { declareTopology, routingKeyFor } from './topology';
import { needsScenarioRunner, runScenario } from './scenario';
import type { TrialContext, WindowHooks, WorkloadResult } from './types';

export type { WorkloadResult };

const wirePathName = (): string => decidedWirePath()?.path ?? 'undecided';


/** How many connections are opened at once when a workload has thousands of clients. */
const OPEN_CONCURRENCY = 32;
/** Fixed-rate producers must reach this share of their target rate for a trial to count. */
const MIN_RATE_SHARE = 0.95;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * How long cancelling the consumers, then closing the connections, may take after the window.
 * Measured on a broker with 2 KB socket buffers: it reads a consumer's acks at a few kB/s while it
 * still delivers a backlog, so a cancel can wait behind a megabyte of acks in the kernel's send
 * buffer for minutes. The measurement is complete by then; the sockets are destroyed instead
 * (the trial vhost is deleted afterwards in any case).
 */
const CANCEL_MS = 2_000;
const CLOSE_MS = 3_000;
/** Seconds without any publish, confirm or delivery before a trial is ended as stalled. */
export const STALL_ENV = 'RABBITMQ_PERF_GATE_STALL_SECONDS';
export function stallSeconds(env: NodeJS.ProcessEnv = process.env): number {
  const v = Number(env[STALL_ENV]);
  return Number.isFinite(v) && v > 0 ? v : 10;
}

/** Resolves with `work`'s outcome, or after `ms` (then `onTimeout` runs); never rejects. */
async function within(work: Promise<unknown>, ms: number, onTimeout?: () => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((r) => { timer = setTimeout(() => r('late'), ms); });
  const r = await Promise.race([work.then(() => 'done', () => 'done'), late]);
  clearTimeout(timer);
  if (r === 'late') onTimeout?.();
}

/** Destroys the socket under an amqplib connection (when close got no answer). */
function destroySocket(c: ChannelModel): void {
  (c as unknown as { connection?: { stream?: { destroy?: () => void } } }).connection?.stream?.destroy?.();
}

/**
 * Watches a trial's counters: when publishes, confirms and deliveries all stand still for the
 * stall limit (while producers are due to publish), records "stalled: …" and aborts the trial.
 */
class Watchdog {
  readonly controller = new AbortController();
  private timer?: NodeJS.Timeout;
  private last = -1;
  private lastAt = 0;
  stalled?: string;

  constructor(private readonly rec: TrialRecorder, private readonly limitMs: number, private readonly waitingFor: () => string) {}

  start(): void {
    this.lastAt = nowMs();
    this.timer = setInterval(this.check, Math.min(1000, this.limitMs / 4));
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private readonly check = (): void => {
    const r = this.rec;
    const progress = r.published + r.confirmed + r.consumed + r.nacked + r.returned;
    const now = nowMs();
    if (progress !== this.last) {
      this.last = progress;
      this.lastAt = now;
      return;
    }
    if (now - this.lastAt < this.limitMs || this.stalled) return;
    this.stalled = `stalled: no progress for ${Math.round(this.limitMs / 1000)} s (${this.waitingFor()})`;
    r.error(this.stalled);
    this.stop();
    this.controller.abort(new Error(this.stalled));
  };
}

function connectUrl(amqpUrl: string): string {
  const u = new URL(amqpUrl);
  if (!u.searchParams.has('frameMax')) u.searchParams.set('frameMax', '131072');
  if (!u.searchParams.has('heartbeat')) u.searchParams.set('heartbeat', '30');
  return u.toString();
}

async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  });
  await Promise.all(workers);
  return out;
}

/** One trial: phases, churn, import and setup/window checks go through src/workload/scenario.ts. */
export async function runWorkload(spec: ScenarioSpec, amqpUrl: string, signal?: AbortSignal, ctx?: TrialContext): Promise<WorkloadResult> {
  if (needsScenarioRunner(spec)) return runScenario(spec, amqpUrl, signal, ctx, runMessaging);
  return runMessaging(spec, amqpUrl, signal);
}

/** The steady PerfTest run: warm-up, then the measured window (with optional window hooks). */
export async function runMessaging(spec: ScenarioSpec, amqpUrl: string, signal?: AbortSignal, hooks?: WindowHooks,
  options: { saturation?: SaturationThresholds } = {}): Promise<WorkloadResult> {
  const w = spec.workload;
  const rec = new TrialRecorder();
  const conns: ChannelModel[] = [];
  const url = connectUrl(amqpUrl);
  let closing = false;
  const open = async (): Promise<ChannelModel> => {
    const c = await amqp.connect(url, { noDelay: true, timeout: 15_000 });
    conns.push(c);
    if (conns.length % COMPACT_EVERY_CONNECTIONS === 0) compactHeap(); // keeps the set-up peak down (memory.ts)
    c.on('error', (e: Error) => rec.error(`connection error: ${e.message}`));
    c.on('close', (e?: Error) => { if (!closing) rec.error(`connection closed by the broker${e ? `: ${e.message}` : ''}`); });
    c.on('blocked', (reason: string) => rec.error(`connection blocked by the broker (${reason})`));
    return c;
  };
  const channelErrors = (ch: Channel) => ch.on('error', (e: Error) => rec.error(`channel error: ${e.message}`));

  const scheduler = new RateScheduler();
  const producers: Producer[] = [];
  const consumers: Consumer[] = [];
  const selfLoad = new SelfLoad();
  let sampler: SeriesSampler | undefined;
  const intervalMs = w.publishingInterval ? w.publishingInterval * 1000 : w.rate ? 1000 / w.rate : 0;
  const watchdog = new Watchdog(rec, Math.max(stallSeconds() * 1000, 2 * intervalMs + 1000), () => {
    const c = rec.snapshot();
    const waiting = [
      w.producers > 0 && `publishes (${c.published} so far)`,
      w.producers > 0 && w.confirm && `confirms (${c.confirmed} of ${c.published})`,
      w.consumers > 0 && `deliveries (${c.consumed} so far)`,
    ].filter(Boolean).join(', ');
    return `waiting for ${waiting || 'the broker'} on the ${wirePathName()} client path`;
  });
  // The trial's own stop signal: the caller's (time limit, cancel) or the watchdog's.
  signal = signal ? AbortSignal.any([signal, watchdog.controller.signal]) : watchdog.controller.signal;
  try {
    const setup = await open();
    // A confirm channel (a Channel too): the fast-path check sees both kinds' prototypes.
    const setupCh = await setup.createConfirmChannel();
    wirePath(setupCh); // once per process: fast path, or plain amqplib and why (wire-check.ts)
    const queues = await declareTopology(setupCh, w);
    await setupCh.close();

    const consumerConns = await mapLimit(Array.from({ length: w.consumers }), OPEN_CONCURRENCY, () => open());
    const startConsumers = async () => {
      await mapLimit(consumerConns, OPEN_CONCURRENCY, async (c, i) => {
        const ch = await c.createChannel();
        channelErrors(ch);
        const q = queues[i % queues.length];
        const args = w.queueArgs['x-queue-type'] === 'stream' ? { 'x-stream-offset': 'next' } : {};
        const consumer = new Consumer(ch, w, q, rec);
        consumers.push(consumer);
        await consumer.start(args);
      });
    };
    if (w.consumerStartDelay <= 0) await startConsumers();

    const producerConns = await mapLimit(Array.from({ length: w.producers }), OPEN_CONCURRENCY, () => open());
    await mapLimit(producerConns, OPEN_CONCURRENCY, async (c, i) => {
      const ch = w.confirm ? await c.createConfirmChannel() : await c.createChannel();
      channelErrors(ch);
      const q = queues[i % queues.length];
      producers.push(new Producer(ch, w, w.exchange, routingKeyFor(w, q), rec));
    });
    // Thousands of connections: drop the set-up garbage and young-generation growth (memory.ts).
    if (conns.length >= COMPACT_AFTER_CONNECTIONS) compactHeap();

    const start = nowMs();
    const windowStart = start + spec.warmupSeconds * 1000;
    const windowEnd = windowStart + spec.durationSeconds * 1000;
    sampler = new SeriesSampler(rec, windowStart, nowMs);
    sampler.start();

    // Producers are due to publish all the time, so no progress at all means a stall. (Without
    // producers a drained queue is legitimately quiet: no watchdog.)
    if (w.producers > 0) watchdog.start();
    if (intervalMs > 0) {
      scheduleSpread(scheduler, producers, intervalMs, start);
      scheduler.start();
    } else {
      for (const p of producers) p.startUnlimited();
    }
    const delayedConsumers = w.consumerStartDelay > 0
      ? sleep(w.consumerStartDelay * 1000).then(startConsumers) : Promise.resolve();

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
      published: atEnd.published - atStart.published, consumed: atEnd.consumed - atStart.consumed, seconds: spec.durationSeconds,
    });
    for (const p of producers) p.stop();
    scheduler.stop();
    sampler.stop();
    await delayedConsumers.catch((e: Error) => rec.error(`consumers failed to start: ${e.message}`));

    const seconds = spec.durationSeconds;
    const delta = (k: keyof Counters) => (atEnd[k] - atStart[k]) / seconds;
    const metrics: Record<string, number> = {};
    if (w.producers > 0) metrics.published_rate = round(delta('published'));
    if (w.producers > 0 && w.confirm) metrics.confirmed_rate = round(delta('confirmed'));
    if (w.consumers > 0) metrics.consumed_rate = round(delta('consumed'));
    Object.assign(metrics, percentileMetrics('latency', rec.latency), percentileMetrics('confirm_latency', rec.confirmLatency), checks?.metrics);

    const messages = Math.max(atEnd.consumed - atStart.consumed, atEnd.published - atStart.published, 1);
    const generator: GeneratorLoad = generatorLoad(load, seconds, messages, options.saturation);
    const histograms: Record<string, string> = {};
    if (rec.latency.totalCount > 0) histograms.latency = encode(rec.latency);
    if (rec.confirmLatency.totalCount > 0) histograms.confirm_latency = encode(rec.confirmLatency);

    let invalidReason: string | undefined;
    if (watchdog.stalled) invalidReason = watchdog.stalled;
    else if (rec.errors.length) invalidReason = rec.errors.join('; ');
    else if (signal?.aborted) invalidReason = STOP.cancelled;
    else if (intervalMs > 0 && w.producers > 0) {
      const target = (w.producers * 1000) / intervalMs;
      const achieved = delta('published');
      if (achieved < MIN_RATE_SHARE * target) {
        invalidReason = `generator reached ${round(achieved)} of its target ${round(target)} msg/s (below ${MIN_RATE_SHARE * 100} %)`;
      }
    }
    if (!invalidReason && checks?.invalidReason) invalidReason = checks.invalidReason;
    return { metrics, series: sampler.points, histograms, generator, valid: !invalidReason, invalidReason };
  } finally {
    closing = true;
    watchdog.stop();
    scheduler.stop();
    sampler?.stop();
    selfLoad.stop();
    if (watchdog.stalled) demoteToPlain(watchdog.stalled);
    // A broker that never answers a cancel or a close must not hold the trial: each step is bounded.
    await Promise.all(consumers.map((c) => within(c.stop(), CANCEL_MS)));
    await Promise.all(conns.map((c) => within(c.close(), CLOSE_MS, () => destroySocket(c))));
  }
}

async function sleepUntil(t: number, signal?: AbortSignal): Promise<void> {
  while (!signal?.aborted) {
    const left = t - nowMs();
    if (left <= 0) return;
    await sleep(Math.min(left, 250));
  }
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}
