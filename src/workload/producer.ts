// One PerfTest producer on its own channel: publishes as fast as the confirm window and the
// socket's back-pressure allow (unlimited mode), or the messages the rate scheduler says are due
// (fixed-rate mode). As in PerfTest, every body carries the time it was actually sent, and
// confirm latency runs from that same time.
//
// Hot path (see wire.ts): each message is amqplib's own publish encoding, copied from a template
// captured once and stamped with sequence and send time; a pump round or a scheduler tick leaves
// in one socket write. Confirms are matched by delivery tag (multiple or single, in or out of
// order) in a typed ring: no closure, promise, callback array or timer per message.
//
// Plain path (wire-check.ts: amqplib internals changed, or RABBITMQ_PERF_GATE_PLAIN_AMQP=1): each
// message is a fresh body through Channel#publish, its confirm comes through ConfirmChannel's
// per-publish callback, and back-pressure is the channel's 'drain'; the same ring keeps the window.
import type { Channel, ConfirmChannel, Options } from 'amqplib';
import type { WorkloadParams } from '../schema/types';
import type { TrialRecorder } from '../metrics/recorder';
import { nowMs } from './body';
import type { RateScheduler } from './scheduler';
import { connectionOf, FrameTap, float64s, PublishTemplate, uint8s, writeFrames, type AmqplibConnection, type TapHandler } from './wire';
import { wirePath } from './wire-check';

/** Most bytes one pump round encodes before writing and yielding to the event loop. */
const BATCH_BYTES = 64 * 1024;
/** Most messages per pump round (small bodies), so confirms and deliveries get their turn. */
const BATCH_MESSAGES = 256;
const EMPTY = Buffer.alloc(0);

export class Producer implements TapHandler {
  private seq = 0;
  private outstanding = 0;
  private running = false;
  private scheduled = false;
  /** Waiting for a confirm or the socket's drain before the next pump round. */
  private waiting = false;
  private blocked = false;
  private readonly window: number;
  private readonly limit: number;
  /** Fast path: the encoded message and the socket it goes to (plain path: undefined). */
  private readonly template?: PublishTemplate;
  private readonly conn?: AmqplibConnection;
  /** Plain path: what every fresh body is copied from, and Channel#publish's arguments. */
  private readonly plain?: { ch: Channel; body: Buffer; options: Options.Publish; exchange: string; routingKey: string };
  /** Pending messages, allocated when the first one is encoded and handed to the socket whole. */
  private batch = EMPTY;
  private used = 0;
  private readonly perBatch: number;
  /** Messages a batch buffer holds: a pump round, or what one scheduler tick usually needs. */
  private capacity: number;
  /** Fixed-rate mode: ms between messages, and the wheel to return to after catching up. */
  private interval = 0;
  private wheel?: RateScheduler;
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
  ) {
    this.limit = w.producerMessageLimit > 0 ? w.producerMessageLimit : Infinity;
    this.window = w.confirm ?? 0;
    const body = Buffer.alloc(Math.max(w.size, 12), 0x2e);
    if (wirePath(ch) === 'plain') {
      this.plain = { ch, body, options: publishOptions(w), exchange, routingKey };
    } else {
      this.template = PublishTemplate.for(ch, exchange, routingKey, body, publishOptions(w));
      this.conn = connectionOf(ch);
    }
    this.perBatch = Math.max(1, Math.min(BATCH_MESSAGES, Math.floor(BATCH_BYTES / (this.template?.length ?? body.length + 64))));
    this.capacity = this.perBatch;
    // Ring big enough that out-of-order single confirms rarely hold the window back.
    const ring = this.window > 0 ? 2 ** Math.ceil(Math.log2(this.window * 4 + 16)) : 1;
    this.mask = ring - 1;
    this.times = float64s(ring);
    this.settled = uint8s(ring);
    if (this.window > 0 && !this.plain) {
      // Confirms are matched here (confirm()), by tag, read in place by the frame tap, which
      // takes every basic.ack/nack of this channel: amqplib's per-publish callback array stays
      // empty, and its own confirm listeners are dropped.
      FrameTap.register(ch, this);
      ch.removeAllListeners('ack');
      ch.removeAllListeners('nack');
    }
    if (w.mandatory) ch.on('return', () => { this.rec.returned++; });
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
  startScheduled(firstDue: number, intervalMs: number, wheel?: RateScheduler): void {
    this.running = true;
    this.scheduled = true;
    this.nextDue = firstDue;
    this.interval = intervalMs;
    this.wheel = wheel;
    this.capacity = Math.max(1, Math.min(this.perBatch, Math.ceil(20 / intervalMs)));
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

  /** Encodes one message stamped with the current time into the pending batch (plain: publishes it). */
  publishOne(): void {
    const t = nowMs();
    const tag = this.nextTag++;
    if (this.plain) {
      if (!this.publishPlain(this.plain, tag, this.seq, t)) {
        this.nextTag--;
        return;
      }
      this.seq++;
    } else {
      const template = this.template!;
      if (this.used + template.length > this.batch.length) {
        this.flush();
        this.batch = Buffer.allocUnsafe(this.capacity * template.length);
      }
      template.encode(this.batch, this.used, this.seq++, t);
      this.used += template.length;
    }
    if (this.window > 0) {
      const i = tag & this.mask;
      this.times[i] = t;
      this.settled[i] = 0;
      this.outstanding++;
    }
    this.rec.published++;
  }

  /** Writes the pending batch; returns false (and waits for drain) when the socket is full. */
  flush(): boolean {
    if (this.used === 0) return !this.blocked;
    // The socket keeps the buffer it is given until written: hand this one over.
    const full = this.used === this.batch.length ? this.batch : this.batch.subarray(0, this.used);
    this.batch = EMPTY;
    this.used = 0;
    if (!writeFrames(this.conn!, full) && !this.blocked) {
      this.blocked = true;
      this.conn!.stream.once('drain', this.onDrain);
    }
    return !this.blocked;
  }

  /**
   * The plain path's publish: a fresh body (amqplib may hold it until written), the confirm
   * through ConfirmChannel's callback into the same ring as the fast path's tap.
   */
  private publishPlain(p: NonNullable<Producer['plain']>, tag: number, seq: number, t: number): boolean {
    const body = Buffer.allocUnsafe(p.body.length);
    p.body.copy(body);
    body.writeUInt32BE(seq >>> 0, 0);
    body.writeDoubleBE(t, 4);
    let ok: boolean;
    try {
      ok = this.window > 0
        ? (p.ch as ConfirmChannel).publish(p.exchange, p.routingKey, body, p.options, (err) => this.confirm(tag, false, err != null))
        : p.ch.publish(p.exchange, p.routingKey, body, p.options);
    } catch (e) {
      // A closed channel throws here (the fast path's write would vanish); the close itself is
      // already the trial's error (engine.ts). Stop publishing.
      this.running = false;
      if (!/closed/i.test((e as Error).message)) this.rec.error(`publish failed: ${(e as Error).message}`);
      return false;
    }
    if (!ok && !this.blocked) {
      this.blocked = true;
      p.ch.once('drain', this.onDrain);
    }
    return true;
  }

  private readonly onDrain = (): void => {
    this.blocked = false;
    if (this.waiting && this.running) this.resume();
  };

  /** A basic.ack / basic.nack from the broker (called by the frame tap). */
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
    if (!this.running || this.blocked) return 0;
    let n = this.limit - this.seq;
    if (this.window > 0) n = Math.min(n, this.window - this.outstanding, this.mask + 1 - (this.nextTag - this.lwm));
    return n;
  }

  private readonly pump = (): void => {
    const n = Math.min(this.perBatch, this.room());
    if (n > 0) {
      // One buffer of exactly the messages this round sends.
      this.capacity = n;
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
