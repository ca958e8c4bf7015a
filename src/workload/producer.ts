// One PerfTest producer on its own channel: publishes as fast as the confirm window and the
// socket's back-pressure allow (unlimited mode), or the messages the rate scheduler says are due
// (fixed-rate mode). As in PerfTest, every body carries the time it was actually sent, and
// confirm latency runs from that same time.
//
// This file owns the producer's logic: the confirm window, matched by delivery tag (multiple or
// single, in or out of order) in a typed ring with no closure, promise or timer per message; the
// message limit; the unlimited pump and the fixed-rate catch-up. Moving the messages is the
// transport's (transport.ts): the fast path batches a pump round or a scheduler tick into one
// socket write and reads confirms in place; plain amqplib publishes each message with a confirm
// callback. Both report confirms to confirm() below and back-pressure through `blocked`.
import type { Channel, ConfirmChannel, Options } from 'amqplib';
import type { WorkloadParams } from '../schema/types';
import type { TrialRecorder } from '../metrics/recorder';
import { nowMs } from './clock';
import { stampedSize } from './stamp';
import { publishTransport, type ConfirmSink, type PublishSetup, type PublishTransport } from './transport';
import { float64s, uint8s } from './wire';

/** What a fixed-rate producer returns to after catching up: the scheduler's wheel
 *  (scheduler.ts' RateScheduler; declared here so that the scheduler imports the producer, not
 *  the other way round). */
export interface Wheel {
  file(p: Producer): void;
}

/** Most bytes one pump round encodes before writing and yielding to the event loop. */
const BATCH_BYTES = 64 * 1024;
/** Most messages per pump round (small bodies), so confirms and deliveries get their turn. */
const BATCH_MESSAGES = 256;

export class Producer implements ConfirmSink {
  private seq = 0;
  private outstanding = 0;
  private running = false;
  private scheduled = false;
  /** Waiting for a confirm or the transport's drain before the next pump round. */
  private waiting = false;
  private readonly window: number;
  private readonly limit: number;
  private readonly transport: PublishTransport;
  private readonly perBatch: number;
  /** Fixed-rate mode: ms between messages, and the wheel to return to after catching up. */
  private interval = 0;
  private wheel?: Wheel;
  // Confirm ring, indexed by delivery tag & mask: send time and whether the tag is settled.
  private readonly mask: number;
  private readonly times: Float64Array;
  private readonly settled: Uint8Array;
  private nextTag = 1;
  /** Lowest delivery tag not yet confirmed. */
  private lwm = 1;
  /** Fixed-rate state, driven by the scheduler: when the next message is due (epoch ms). */
  nextDue = 0;

  constructor(
    ch: Channel | ConfirmChannel,
    w: WorkloadParams,
    exchange: string,
    routingKey: string,
    private readonly rec: TrialRecorder,
    /** The client under this producer (tests pass a fake); by default the process's transport. */
    transport?: (setup: PublishSetup) => PublishTransport,
  ) {
    this.limit = w.producerMessageLimit > 0 ? w.producerMessageLimit : Infinity;
    this.window = w.confirm ?? 0;
    const setup: PublishSetup = {
      exchange,
      routingKey,
      body: Buffer.alloc(stampedSize(w.size), 0x2e),
      options: publishOptions(w),
      window: this.window,
      sink: this,
      onDrain: this.onDrain,
      onError: (e) => {
        // A closed channel throws (the close itself is already the trial's error, amqp091.ts): stop.
        this.running = false;
        if (!/closed/i.test(e.message)) this.rec.error(`publish failed: ${e.message}`);
      },
    };
    this.transport = transport ? transport(setup) : publishTransport(ch, setup);
    this.perBatch = Math.max(1, Math.min(BATCH_MESSAGES, Math.floor(BATCH_BYTES / this.transport.messageBytes)));
    this.transport.capacity = this.perBatch;
    // Ring big enough that out-of-order single confirms rarely hold the window back.
    const ring = this.window > 0 ? 2 ** Math.ceil(Math.log2(this.window * 4 + 16)) : 1;
    this.mask = ring - 1;
    this.times = float64s(ring);
    this.settled = uint8s(ring);
    if (w.mandatory)
      ch.on('return', () => {
        this.rec.returned++;
      });
  }

  /** Can a message go out now (running, confirm window, ring, socket and message limit allow)? */
  get ready(): boolean {
    return this.room() > 0;
  }

  get done(): boolean {
    return this.seq >= this.limit;
  }

  /** Unlimited mode: publish until stopped. */
  startUnlimited(): void {
    this.running = true;
    this.pump();
  }

  /**
   * Fixed-rate mode: one message every `intervalMs`, the first at `firstDue`; the scheduler calls
   * publishDue when one is due. The batch buffer is sized for what one 10 ms tick usually sends,
   * so thousands of slow producers hold a few hundred bytes each.
   */
  startScheduled(firstDue: number, intervalMs: number, wheel?: Wheel): void {
    this.running = true;
    this.scheduled = true;
    this.nextDue = firstDue;
    this.interval = intervalMs;
    this.wheel = wheel;
    this.transport.capacity = Math.max(1, Math.min(this.perBatch, Math.ceil(20 / intervalMs)));
  }

  /**
   * Fixed-rate mode: sends every message due by `now` that the window and socket allow, in one
   * write. Returns false when one was due but had to wait: the producer is then out of the
   * scheduler's wheel until the confirm or drain that frees it, when it catches up and files
   * itself again (PerfTest's producer thread likewise publishes as soon as its confirm semaphore
   * has a permit).
   */
  publishDue(now: number): boolean {
    while (this.nextDue <= now && this.ready) {
      this.publishOne();
      this.nextDue += this.interval;
    }
    this.flush();
    if (this.nextDue <= now && this.running && !this.done) {
      this.waiting = true;
      return false;
    }
    return true;
  }

  stop(): void {
    this.running = false;
    this.flush();
  }

  /** Hands one message stamped with the current time to the transport. */
  publishOne(): void {
    const t = nowMs();
    const tag = this.nextTag++;
    if (!this.transport.send(this.seq, t, tag)) {
      this.nextTag--;
      return;
    }
    this.seq++;
    if (this.window > 0) {
      const i = tag & this.mask;
      this.times[i] = t;
      this.settled[i] = 0;
      this.outstanding++;
    }
    this.rec.published++;
  }

  /** Writes what is pending; false when the transport is backed up (it calls onDrain later). */
  flush(): boolean {
    return this.transport.flush();
  }

  private readonly onDrain = (): void => {
    if (this.waiting && this.running) this.resume();
  };

  /** A basic.ack / basic.nack from the broker (called by the transport). */
  confirm(tag: number, multiple: boolean, nack: boolean): void {
    const now = nowMs();
    if (multiple) {
      const top = Math.min(tag, this.nextTag - 1);
      for (let t = this.lwm; t <= top; t++) this.settle(t, now, nack);
      if (top >= this.lwm) this.lwm = top + 1;
    } else {
      this.settle(tag, now, nack);
      while (this.lwm < this.nextTag && this.settled[this.lwm & this.mask] === 1) this.lwm++;
    }
    if (this.waiting && this.running) this.resume();
  }

  private settle(tag: number, now: number, nack: boolean): void {
    const i = tag & this.mask;
    if (tag < this.lwm || tag >= this.nextTag || this.settled[i] === 1) return;
    this.settled[i] = 1;
    this.outstanding--;
    if (nack) this.rec.nacked++;
    else {
      this.rec.confirmed++;
      this.rec.recordConfirmLatency((now - this.times[i]) * 1000);
    }
  }

  private resume(): void {
    this.waiting = false;
    setImmediate(this.scheduled ? this.catchUp : this.pump);
  }

  private readonly catchUp = (): void => {
    if (this.running && this.publishDue(nowMs()) && !this.done) this.wheel?.file(this);
  };

  /** How many messages may go out right now (confirm window, tag ring, message limit). */
  private room(): number {
    if (!this.running || this.transport.blocked) return 0;
    let n = this.limit - this.seq;
    if (this.window > 0) n = Math.min(n, this.window - this.outstanding, this.mask + 1 - (this.nextTag - this.lwm));
    return n;
  }

  private readonly pump = (): void => {
    const n = Math.min(this.perBatch, this.room());
    if (n > 0) {
      // One buffer of exactly the messages this round sends.
      this.transport.capacity = n;
      for (let i = 0; i < n; i++) this.publishOne();
    }
    const ok = this.flush();
    if (!this.running || this.done) return;
    if (n === this.perBatch && ok) setImmediate(this.pump);
    else this.waiting = true;
  };
}

export function publishOptions(w: WorkloadParams): Options.Publish {
  const o: Options.Publish = { persistent: w.persistent, mandatory: w.mandatory };
  const headers: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(w.messageProperties)) {
    if (k === 'expiration') o.expiration = String(v);
    else if (k === 'priority') o.priority = Number(v);
    else if (k === 'contentType' || k === 'content_type') o.contentType = String(v);
    else if (k === 'type') o.type = String(v);
    else headers[k] = v;
  }
  if (Object.keys(headers).length) o.headers = headers;
  return o;
}
