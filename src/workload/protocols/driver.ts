// The driver interface between the messaging engine's client-library runner (runner.ts) and a client library, after
// OpenMessaging Benchmark's: a driver opens producers and consumers on one protocol and nothing
// else; the engine owns rates, the confirm window, the measured window and every metric. One file
// per protocol implements it (stream.ts, mqtt.ts, amqp10.ts). Bodies carry the same stamp as the
// AMQP 0-9-1 path (src/workload/stamp.ts), so end-to-end latency means the same on every protocol.
import { readFileSync } from 'node:fs';
import type { ProtocolScenario } from '../../schema/types';
import { packagePath } from '../../config/paths';
import { stampedBody } from '../stamp';

/** Where and as whom a driver connects: the trial's vhost on the target's listener for its protocol. */
export interface DriverTarget {
  host: string;
  port: number;
  user: string;
  pass: string;
  vhost: string;
  /** The trial vhost's AMQP 0-9-1 URL, for declaring queues and streams the PerfTest way. */
  amqpUrl: string;
}

export interface DriverProducer {
  /** Sends one message (or, for a stream with sub-entry batching, a batch as one sub-entry);
   *  resolves when the broker confirmed it, or once written where the protocol has no confirms. */
  send(bodies: Buffer[]): Promise<void>;
  close(): Promise<void>;
}

export interface DriverConsumer {
  close(): Promise<void>;
}

export interface ProtocolDriver {
  /** The client library and its version, recorded with the generator's load. */
  readonly client: string;
  /** Whether send() resolves on the broker's confirmation (true) or on the write (false). */
  readonly confirms: boolean;
  /** Messages per send() call (a stream's sub-entry size; 1 elsewhere). */
  readonly batch: number;
  /** Messages each consumer can replay from before the trial (a stream's backlog read from
   *  `first`); a consumer-only trial that reads all of them ran dry before its window ended. */
  readonly replayable?: number;
  /** Declares what the scenario publishes to and consumes from, and writes any backlog. */
  prepare(): Promise<void>;
  producer(index: number, onError: (message: string) => void): Promise<DriverProducer>;
  /** A consumer handing every body it receives to `onMessage`. */
  consumer(index: number, onMessage: (body: Buffer) => void, onError: (message: string) => void): Promise<DriverConsumer>;
  /** An idle connection (memory per connection); only where the protocol scenario measures it. */
  idle?(index: number): Promise<DriverConsumer>;
  /** Closes whatever prepare() opened. */
  close(): Promise<void>;
}

export type DriverFactory = (spec: ProtocolScenario, target: DriverTarget) => ProtocolDriver;

let pinned: Record<string, string> | undefined;

/** A client library with the exact version this package pins (package.json: what npm ci installs
 *  and the bundle carries), e.g. "mqtt 5.16.0". */
export function clientName(name: string): string {
  pinned ??= (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { dependencies?: Record<string, string> }).dependencies ?? {};
  return `${name} ${pinned[name] ?? '(version unknown)'}`;
}

/** Confirms outstanding while writing a backlog. */
const BACKLOG_WINDOW = 5_000;

/** Writes `count` messages (no send time: replayed messages have no meaningful latency) with at
 *  most BACKLOG_WINDOW unconfirmed, and waits for every confirm. */
export async function writeBacklog(pub: DriverProducer, count: number, size: number): Promise<void> {
  const inflight = new Set<Promise<void>>();
  for (let i = 0; i < count; i++) {
    const body = stampedBody(size, i, Number.NaN);
    const sent = pub.send([body]).finally(() => inflight.delete(sent));
    inflight.add(sent);
    if (inflight.size >= BACKLOG_WINDOW) await Promise.race(inflight);
  }
  await Promise.all(inflight);
  await pub.close();
}
