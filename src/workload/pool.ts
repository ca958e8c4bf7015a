// Client plumbing for the non-steady runners (phases, churn, window checks): a connection pool
// that reports broker-side errors to the trial, bounded-concurrency opening, queue depth via
// passive declares, and the generator-load record. The steady hot path lives in engine.ts.
import amqp, { type Channel, type ChannelModel } from 'amqplib';
import type { GeneratorLoad } from '../schema/types';
import { isSaturated, type SaturationThresholds, type SelfLoadSample } from '../metrics/selfload';
import { decidedWirePath } from './wire-check';

export const OPEN_CONCURRENCY = 32;
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function connectUrl(amqpUrl: string): string {
  const u = new URL(amqpUrl);
  if (!u.searchParams.has('frameMax')) u.searchParams.set('frameMax', '131072');
  if (!u.searchParams.has('heartbeat')) u.searchParams.set('heartbeat', '30');
  return u.toString();
}

export async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  }));
  return out;
}

export interface ErrorSink { error(message: string): void }

/** Connections of one trial; anything the broker closes unexpectedly becomes a trial error. */
export class ClientPool {
  readonly conns: ChannelModel[] = [];
  private closing = false;
  readonly url: string;

  constructor(amqpUrl: string, private readonly sink: ErrorSink) {
    this.url = connectUrl(amqpUrl);
  }

  async open(): Promise<ChannelModel> {
    const c = await amqp.connect(this.url, { noDelay: true, timeout: 15_000 });
    this.conns.push(c);
    c.on('error', (e: Error) => this.sink.error(`connection error: ${e.message}`));
    c.on('close', (e?: Error) => { if (!this.closing) this.sink.error(`connection closed by the broker${e ? `: ${e.message}` : ''}`); });
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

  async closeAll(): Promise<void> {
    this.closing = true;
    await Promise.all(this.conns.map((c) => Promise.race([c.close().catch(() => undefined), sleep(5000)])));
  }
}

/** Ready messages summed over `queues` (passive declares on one channel). */
export async function readyDepth(ch: Channel, queues: string[]): Promise<number> {
  const oks = await Promise.all(queues.map((q) => ch.checkQueue(q)));
  return oks.reduce((s, ok) => s + ok.messageCount, 0);
}

/**
 * The generator's own load over `seconds`, per operation (message, declare, import), and the
 * client path its producers and consumers ran on (once one has started in this process).
 */
export function generatorLoad(s: SelfLoadSample, seconds: number, operations: number, thresholds?: SaturationThresholds): GeneratorLoad {
  const round = (x: number) => Math.round(x * 100) / 100;
  const amqpPath = decidedWirePath()?.path;
  return {
    cpuMicrosPerMessage: round(s.cpuMicros / Math.max(operations, 1)),
    cpuCores: round(s.cpuMicros / (Math.max(seconds, 0.001) * 1e6)),
    eventLoopDelayP99Ms: s.eventLoopDelayP99Ms,
    saturated: isSaturated(s, thresholds),
    ...(amqpPath ? { amqpPath } : {}),
  };
}
