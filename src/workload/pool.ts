// Client plumbing for every runner (the steady engine, phases, churn, window checks): a connection
// pool that reports broker-side errors to the trial, bounded-concurrency opening (with heap
// compaction for thousands of connections), producers and consumers made on their own
// connections and channels (PerfTest's one connection per client), bounded clean-up, queue depth
// via passive declares, and the generator-load record. The hot path itself is producer.ts and
// consumer.ts; when fixed-rate producers start is scheduler.ts' business.
import { setTimeout as sleep } from 'node:timers/promises';
import amqp, { type Channel, type ChannelModel } from 'amqplib';
import type { GeneratorLoad, WorkloadParams } from '../schema/types';
import { round2 as round, type TrialRecorder } from '../metrics/recorder';
import { isSaturated, type SaturationThresholds, type SelfLoadSample } from '../metrics/selfload';
import { Consumer } from './consumer';
import { compactHeap } from './memory';
import { Producer } from './producer';
import { routingKeyFor } from './topology';
import { decidedWirePath } from './wire-check';

export const OPEN_CONCURRENCY = 32;
/** Waits `ms`: Node's promise timer, the one sleep every runner uses. */
export { sleep };

export function connectUrl(amqpUrl: string): string {
  const u = new URL(amqpUrl);
  if (!u.searchParams.has('frameMax')) u.searchParams.set('frameMax', '131072');
  if (!u.searchParams.has('heartbeat')) u.searchParams.set('heartbeat', '30');
  return u.toString();
}

export async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}

/** Resolves with `work`'s outcome, or after `ms` (then `onTimeout` runs); never rejects. */
export async function within(work: Promise<unknown>, ms: number, onTimeout?: () => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((r) => {
    timer = setTimeout(() => r('late'), ms);
  });
  const r = await Promise.race([
    work.then(
      () => 'done',
      () => 'done',
    ),
    late,
  ]);
  clearTimeout(timer);
  if (r === 'late') onTimeout?.();
}

/** Destroys the socket under an amqplib connection (when close got no answer). */
function destroySocket(c: ChannelModel): void {
  (c as unknown as { connection?: { stream?: { destroy?: () => void } } }).connection?.stream?.destroy?.();
}

export interface ErrorSink {
  error(message: string): void;
}

export interface PoolOptions {
  /** One compacting collection per this many connections opened (memory.ts); absent = none. */
  compactEvery?: number;
}

/** Connections of one trial; anything the broker closes unexpectedly becomes a trial error. */
export class ClientPool {
  readonly conns: ChannelModel[] = [];
  private closing = false;
  readonly url: string;

  constructor(
    amqpUrl: string,
    private readonly sink: ErrorSink,
    private readonly options: PoolOptions = {},
  ) {
    this.url = connectUrl(amqpUrl);
  }

  async open(): Promise<ChannelModel> {
    const c = await amqp.connect(this.url, { noDelay: true, timeout: 15_000 });
    this.conns.push(c);
    const every = this.options.compactEvery;
    if (every && this.conns.length % every === 0) compactHeap(); // keeps the set-up peak down (memory.ts)
    c.on('error', (e: Error) => this.sink.error(`connection error: ${e.message}`));
    c.on('close', (e?: Error) => {
      if (!this.closing) this.sink.error(`connection closed by the broker${e ? `: ${e.message}` : ''}`);
    });
    c.on('blocked', (reason: string) => this.sink.error(`connection blocked by the broker (${reason})`));
    return c;
  }

  openMany(n: number): Promise<ChannelModel[]> {
    return mapLimit(Array.from({ length: n }), OPEN_CONCURRENCY, () => this.open());
  }

  async channel(c: ChannelModel, confirm = false): Promise<Channel> {
    const ch = confirm ? await c.createConfirmChannel() : await c.createChannel();
    ch.on('error', (e: Error) => this.sink.error(`channel error: ${e.message}`));
    return ch;
  }

  /** The trial is ending: from now on a connection that closes is expected, not an error. */
  ending(): void {
    this.closing = true;
  }

  async closeAll(): Promise<void> {
    this.closing = true;
    await Promise.all(this.conns.map((c) => Promise.race([c.close().catch(() => undefined), sleep(5000)])));
  }

  /** Closes every connection, each within `ms`; one whose close gets no answer has its socket
   *  destroyed (the steady engine: a broker busy reading a backlog of acks must not hold it). */
  async closeAllWithin(ms: number): Promise<void> {
    this.closing = true;
    await Promise.all(this.conns.map((c) => within(c.close(), ms, () => destroySocket(c))));
  }
}

/**
 * One producer per connection, each on a channel of its own (a confirm channel with -c), bound
 * to the queues round robin (connection i to queue i mod n). They are listed in the order their
 * channels opened, which is the order fixed-rate producers take their start offsets in.
 */
export async function openProducers(pool: ClientPool, conns: ChannelModel[], w: WorkloadParams, queues: string[], rec: TrialRecorder): Promise<Producer[]> {
  const producers: Producer[] = [];
  await mapLimit(conns, OPEN_CONCURRENCY, async (c, i) => {
    const ch = await pool.channel(c, Boolean(w.confirm));
    producers.push(new Producer(ch, w, w.exchange, routingKeyFor(w, queues[i % queues.length]), rec));
  });
  return producers;
}

/**
 * One consumer per connection, each on a channel of its own, on the queues round robin, started
 * with `args`. Each is added to `into` before it starts, so that the caller stops every consumer
 * made even when another fails to start; returns their channels.
 */
export async function startConsumers(
  pool: ClientPool,
  conns: ChannelModel[],
  w: WorkloadParams,
  queues: string[],
  rec: TrialRecorder,
  into: Consumer[],
  args?: Record<string, unknown>,
): Promise<Channel[]> {
  const channels: Channel[] = [];
  await mapLimit(conns, OPEN_CONCURRENCY, async (c, i) => {
    const ch = await pool.channel(c);
    channels.push(ch);
    const consumer = new Consumer(ch, w, queues[i % queues.length], rec);
    into.push(consumer);
    await consumer.start(args);
  });
  return channels;
}

/** Ready messages summed over `queues` (passive declares on one channel). */
export async function readyDepth(ch: Channel, queues: string[]): Promise<number> {
  const oks = await Promise.all(queues.map((q) => ch.checkQueue(q)));
  return oks.reduce((s, ok) => s + ok.messageCount, 0);
}

/**
 * The generator's own load over `seconds`, per operation (message, declare, import), and the
 * client path its producers and consumers ran on (once one has started in this process); for a
 * protocol scenario, `client` names its library instead (its load is not the AMQP 0-9-1 path's).
 */
export function generatorLoad(s: SelfLoadSample, seconds: number, operations: number, thresholds?: SaturationThresholds, client?: string): GeneratorLoad {
  const amqpPath = client ? undefined : decidedWirePath()?.path;
  return {
    cpuMicrosPerMessage: round(s.cpuMicros / Math.max(operations, 1)),
    cpuCores: round(s.cpuMicros / (Math.max(seconds, 0.001) * 1e6)),
    eventLoopDelayP99Ms: s.eventLoopDelayP99Ms,
    saturated: isSaturated(s, thresholds),
    ...(amqpPath ? { amqpPath } : {}),
    ...(client ? { client } : {}),
  };
}
