// The seam between the generator's logic and the AMQP client under it (as OpenMessaging
// Benchmark's driver API keeps the client apart from rates and statistics): producer.ts and
// consumer.ts keep the confirm ring, the window, the rates and the recording; a transport moves
// the messages. Two implementations, chosen once per process by wire-check.ts:
//   - fast: amqplib's own encoding from a captured template, stamped and batched into one socket
//     write; confirms and deliveries read in place by the frame tap; acks patched from a template
//     (wire.ts);
//   - plain: amqplib's public API — Channel#publish of a fresh body with the confirm callback,
//     consume, Channel#ack / #nack.
// The broker sees the same frames from both.
import type { Channel, ConfirmChannel, ConsumeMessage, Options } from 'amqplib';
import { AckWriter, connectionOf, FrameTap, PublishTemplate, writeFrames, type AmqplibConnection } from './wire';
import { wirePath } from './wire-check';
import { sendTimeOf, stamp } from './stamp';

/** Where a transport reports publisher confirms. */
export interface ConfirmSink {
  confirm(tag: number, multiple: boolean, nack: boolean): void;
}

export interface PublishTransport {
  /** Bytes one message takes on the wire (for batch sizing). */
  readonly messageBytes: number;
  /** The socket (or channel) is backed up: nothing more until `onDrain` is called. */
  readonly blocked: boolean;
  /** Size of the next batch buffer, in messages (a pump round, or what a tick usually sends). */
  capacity: number;
  /** Adds one message (sequence, send time in epoch ms, its publish tag); false: not sent (channel closed). */
  send(seq: number, sentAt: number, tag: number): boolean;
  /** Writes what is pending; false when that backed the socket up. */
  flush(): boolean;
}

export interface PublishSetup {
  exchange: string;
  routingKey: string;
  /** The body every message is stamped from (sequence at 0, send time at 4). */
  body: Buffer;
  options: Options.Publish;
  /** Confirm window (0: no confirms). */
  window: number;
  sink: ConfirmSink;
  /** Called when a backed-up transport can take messages again. */
  onDrain: () => void;
  /** Called when a publish fails (e.g. the channel closed). */
  onError: (e: Error) => void;
}

const EMPTY = Buffer.alloc(0);

class FastPublish implements PublishTransport {
  blocked = false;
  capacity = 1;
  private readonly template: PublishTemplate;
  private readonly conn: AmqplibConnection;
  private batch = EMPTY;
  private used = 0;

  constructor(
    ch: Channel,
    private readonly s: PublishSetup,
  ) {
    this.template = PublishTemplate.for(ch, s.exchange, s.routingKey, s.body, s.options);
    this.conn = connectionOf(ch);
    if (s.window > 0) {
      // Confirms are read in place by the frame tap, which takes every basic.ack/nack of this
      // channel: amqplib's per-publish callback array stays empty, its own listeners are dropped.
      FrameTap.register(ch, s.sink);
      ch.removeAllListeners('ack');
      ch.removeAllListeners('nack');
    }
  }

  get messageBytes(): number {
    return this.template.length;
  }

  send(seq: number, sentAt: number): boolean {
    const len = this.template.length;
    if (this.used + len > this.batch.length) {
      this.flush();
      this.batch = Buffer.allocUnsafe(this.capacity * len);
    }
    this.template.encode(this.batch, this.used, seq, sentAt);
    this.used += len;
    return true;
  }

  flush(): boolean {
    if (this.used === 0) return !this.blocked;
    // The socket keeps the buffer it is given until written: hand this one over.
    const full = this.used === this.batch.length ? this.batch : this.batch.subarray(0, this.used);
    this.batch = EMPTY;
    this.used = 0;
    if (!writeFrames(this.conn, full) && !this.blocked) {
      this.blocked = true;
      this.conn.stream.once('drain', this.drained);
    }
    return !this.blocked;
  }

  private readonly drained = (): void => {
    this.blocked = false;
    this.s.onDrain();
  };
}

class PlainPublish implements PublishTransport {
  blocked = false;
  capacity = 1;

  constructor(
    private readonly ch: Channel,
    private readonly s: PublishSetup,
  ) {}

  get messageBytes(): number {
    return this.s.body.length + 64;
  }

  /** A fresh body (amqplib may hold it until written), its confirm through ConfirmChannel's callback. */
  send(seq: number, sentAt: number, tag: number): boolean {
    const s = this.s;
    const body = Buffer.allocUnsafe(s.body.length);
    s.body.copy(body);
    stamp(body, 0, seq, sentAt);
    let ok: boolean;
    try {
      ok =
        s.window > 0
          ? (this.ch as ConfirmChannel).publish(s.exchange, s.routingKey, body, s.options, (err) => s.sink.confirm(tag, false, err != null))
          : this.ch.publish(s.exchange, s.routingKey, body, s.options);
    } catch (e) {
      s.onError(e as Error);
      return false;
    }
    if (!ok && !this.blocked) {
      this.blocked = true;
      this.ch.once('drain', this.drained);
    }
    return true;
  }

  flush(): boolean {
    return !this.blocked;
  }

  private readonly drained = (): void => {
    this.blocked = false;
    this.s.onDrain();
  };
}

/** The publish transport for `ch`, on the path this process runs (wire-check.ts). */
export function publishTransport(ch: Channel, s: PublishSetup): PublishTransport {
  return wirePath(ch) === 'plain' ? new PlainPublish(ch, s) : new FastPublish(ch, s);
}

export interface ConsumeSetup {
  queue: string;
  noAck: boolean;
  /** Ack with multiple=true (PerfTest's -A N); nack instead of ack, with requeue. */
  multiple: boolean;
  nack: boolean;
  requeue: boolean;
  /** Every delivery: its tag and the body's send time (NaN when the body is under 12 bytes). */
  onDelivery: (deliveryTag: number, sentAt: number) => void;
  /** The broker cancelled the consumer. */
  onCancel: () => void;
}

export interface ConsumeTransport {
  /** Starts consuming (with these consumer arguments); resolves with the consumer tag. */
  start(args: Record<string, unknown>): Promise<string>;
  /** Acks (or nacks) up to / exactly `deliveryTag`, as the setup says. */
  ack(deliveryTag: number): void;
  /** Sends what is pending. */
  flush(): void;
}

class FastConsume implements ConsumeTransport {
  private readonly acks?: AckWriter;

  constructor(
    private readonly ch: Channel,
    private readonly s: ConsumeSetup,
  ) {
    if (!s.noAck) {
      this.acks = new AckWriter(ch, s.nack ? (c, m) => c.nack(m as ConsumeMessage, false, s.requeue) : (c, m) => c.ack(m as ConsumeMessage, s.multiple));
    }
  }

  async start(args: Record<string, unknown>): Promise<string> {
    const s = this.s;
    // Deliveries that arrive before the tap takes over go through amqplib's callback.
    const ok = await this.ch.consume(s.queue, (m) => (m ? s.onDelivery(m.fields.deliveryTag, sendTimeOf(m.content)) : s.onCancel()), { noAck: s.noAck, arguments: args });
    FrameTap.register(this.ch, { delivery: s.onDelivery });
    return ok.consumerTag;
  }

  ack(deliveryTag: number): void {
    this.acks?.add(deliveryTag);
  }

  flush(): void {
    this.acks?.flush();
  }
}

class PlainConsume implements ConsumeTransport {
  constructor(
    private readonly ch: Channel,
    private readonly s: ConsumeSetup,
  ) {}

  async start(args: Record<string, unknown>): Promise<string> {
    const s = this.s;
    const ok = await this.ch.consume(s.queue, (m) => (m ? s.onDelivery(m.fields.deliveryTag, sendTimeOf(m.content)) : s.onCancel()), { noAck: s.noAck, arguments: args });
    return ok.consumerTag;
  }

  /** Channel#ack / #nack use only the message's delivery tag. */
  ack(deliveryTag: number): void {
    const m = { fields: { deliveryTag } } as ConsumeMessage;
    if (this.s.nack) this.ch.nack(m, false, this.s.requeue);
    else this.ch.ack(m, this.s.multiple);
  }

  flush(): void {}
}

/** The consume transport for `ch`, on the path this process runs (wire-check.ts). */
export function consumeTransport(ch: Channel, s: ConsumeSetup): ConsumeTransport {
  return wirePath(ch) === 'plain' ? new PlainConsume(ch, s) : new FastConsume(ch, s);
}
