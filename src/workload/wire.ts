// The load generator's fast path around amqplib (profiling showed half the generator's CPU in
// one socket write() per publish and per ack, plus amqplib's per-publish encoding, stream and
// callback bookkeeping). The bytes on the wire are exactly amqplib's: each template below is
// captured from amqplib's own encoder once, on the channel it will be used on; per message only
// the body's sequence/timestamp (or the ack's delivery tag) is patched in. What changes is how
// they travel: many messages or acks leave in one socket write, and confirms are matched by
// delivery tag in a typed ring instead of amqplib's per-publish callback array.
//
// Receiving (FrameTap): amqplib decodes every frame into objects (frame, fields, all 14 message
// properties, BigInt delivery tag, two closures and a message per delivery); profiling showed
// that as nearly all the generator's allocations and much of its GC. The tap reads the frames the
// generator needs (basic.deliver + header + body on a consumer channel, basic.ack/nack on a
// confirm channel) in place, straight from the received bytes, and hands everything else —
// RPC replies, channel/connection close, cancels, returns, heartbeats — to amqplib unchanged.
//
// Safety: a batch is a whole number of complete frames written atomically to the connection's
// socket, so it cannot split another channel's frames; the generator owns its channels, and
// every RPC on them (open, confirm.select, qos, consume) completes before the fast path starts.
//
// Everything here leans on amqplib 2.x internals: wire-check.ts checks them once per process,
// before the first producer or consumer, and falls back to plain amqplib if any has changed.
import type { Channel } from 'amqplib';
import { STAMP_BYTES, sendTimeAt, stamp } from './stamp';

/** The parts of amqplib's internals the fast path touches (amqplib 2.x; see wire-check.ts). */
export interface AmqplibConnection {
  stream: NodeJS.WritableStream & { writableLength: number; read(): Buffer | null };
  channels: Array<{ buffer: { write(chunk: Buffer): boolean } } | null>;
  sentSinceLastCheck: boolean;
  recvSinceLastCheck: boolean;
  /** Unparsed received bytes. */
  rest: Buffer;
  /** Returns the next decoded frame, or false when more bytes are needed. */
  recvFrame(): unknown;
  /** Negotiated frame size. */
  frameMax: number;
}
interface AmqplibChannel {
  ch: number;
  connection: AmqplibConnection;
}

function internals(ch: Channel): AmqplibChannel {
  const c = ch as unknown as AmqplibChannel;
  if (typeof c.ch !== 'number' || !c.connection?.stream || !Array.isArray(c.connection.channels)) {
    throw new Error('amqplib internals changed: channel has no ch/connection.stream/connection.channels');
  }
  return c;
}

/** The amqplib connection under a channel (its socket is `.stream`). */
export function connectionOf(ch: Channel): AmqplibConnection {
  return internals(ch).connection;
}

/** Writes complete frames to a connection's socket; false when its buffer is above the mark. */
export function writeFrames(conn: AmqplibConnection, frames: Buffer): boolean {
  conn.sentSinceLastCheck = true;
  return conn.stream.write(frames);
}

// Small typed arrays (confirm rings of thousands of -c 1 producers) are carved from shared slabs:
// one ArrayBuffer per 64 Ki entries instead of one per producer.
const SLAB = 65536;
let f64Slab = new Float64Array(0);
let f64Used = 0;
let u8Slab = new Uint8Array(0);
let u8Used = 0;

export function float64s(n: number): Float64Array {
  if (n > SLAB / 8) return new Float64Array(n);
  if (f64Used + n > f64Slab.length) {
    f64Slab = new Float64Array(SLAB);
    f64Used = 0;
  }
  f64Used += n;
  return f64Slab.subarray(f64Used - n, f64Used);
}

export function uint8s(n: number): Uint8Array {
  if (n > SLAB / 8) return new Uint8Array(n);
  if (u8Used + n > u8Slab.length) {
    u8Slab = new Uint8Array(SLAB);
    u8Used = 0;
  }
  u8Used += n;
  return u8Slab.subarray(u8Used - n, u8Used);
}

/** What amqplib would have written for this channel while `fn` runs, without sending it. */
export function captureFrames(ch: Channel, fn: () => void): Buffer {
  const { ch: n, connection } = internals(ch);
  const slot = connection.channels[n];
  if (!slot) throw new Error(`channel ${n} is not open`);
  const chunks: Buffer[] = [];
  const write = slot.buffer.write;
  slot.buffer.write = (chunk: Buffer) => {
    chunks.push(Buffer.from(chunk));
    return true;
  };
  try {
    fn();
  } finally {
    slot.buffer.write = write;
  }
  return Buffer.concat(chunks);
}

/**
 * Channel#publish without ConfirmChannel's per-publish callback bookkeeping (the templates are
 * captured with it). On a confirm channel, the prototype owning waitForConfirms must sit above
 * one with publish; undefined if not.
 */
export function plainPublish(ch: Channel): ((this: Channel, e: string, r: string, b: Buffer, o: object) => boolean) | undefined {
  let p = Object.getPrototypeOf(ch);
  let sawConfirm = false;
  while (p && Object.hasOwn(p, 'waitForConfirms')) {
    sawConfirm = true;
    p = Object.getPrototypeOf(p);
  }
  if (typeof (ch as { waitForConfirms?: unknown }).waitForConfirms === 'function' && !sawConfirm) return undefined;
  return p && typeof p.publish === 'function' ? p.publish : undefined;
}

/** Offset of the first payload byte of the first frame of `type` (3 = body) in `frames`. */
export function payloadOffset(frames: Buffer, type: number): number {
  let o = 0;
  while (o + 7 < frames.length) {
    const size = frames.readUInt32BE(o + 3);
    if (frames[o] === type) return o + 7;
    o += 8 + size;
  }
  return -1;
}

/** The socket under a channel (acks are small: they are written without waiting for drains). */
export class ChannelSocket {
  private readonly conn: AmqplibConnection;

  constructor(ch: Channel) {
    this.conn = internals(ch).connection;
  }

  /** Writes complete frames; false when the socket's buffer is above its high-water mark. */
  write(frames: Buffer): boolean {
    return writeFrames(this.conn, frames);
  }
}

/**
 * basic.publish + content header + body frame(s), captured from amqplib for one exchange,
 * routing key, options and body size. `encode` copies it and stamps sequence and send time.
 */
export class PublishTemplate {
  readonly bytes: Buffer;
  /** Offset of the body's first byte in `bytes`. */
  private readonly bodyAt: number;
  /** Identical producers (thousands of them, same channel number) share one template. */
  private static readonly cache = new Map<string, PublishTemplate>();

  static for(ch: Channel, exchange: string, routingKey: string, body: Buffer, options: object): PublishTemplate {
    const { ch: n, connection } = internals(ch);
    const key = JSON.stringify([n, connection.frameMax, exchange, routingKey, body.length, body[body.length - 1], options]);
    let t = PublishTemplate.cache.get(key);
    if (!t) {
      t = new PublishTemplate(ch, exchange, routingKey, body, options);
      if (PublishTemplate.cache.size > 1000) PublishTemplate.cache.clear();
      PublishTemplate.cache.set(key, t);
    }
    return t;
  }

  private constructor(ch: Channel, exchange: string, routingKey: string, body: Buffer, options: object) {
    const publish = plainPublish(ch);
    if (!publish) throw new Error('amqplib internals changed: no plain Channel#publish');
    this.bytes = captureFrames(ch, () => publish.call(ch, exchange, routingKey, body, options));
    this.bodyAt = body.length > 0 ? payloadOffset(this.bytes, 3) : -1;
    if (body.length >= STAMP_BYTES && this.bodyAt < 0) throw new Error('publish template has no body frame');
  }

  get length(): number {
    return this.bytes.length;
  }

  /** Writes one message at `offset` of `into`, stamped with `seq` and `sendTimeMs`. */
  encode(into: Buffer, offset: number, seq: number, sendTimeMs: number): void {
    this.bytes.copy(into, offset);
    if (this.bodyAt >= 0) stamp(into, offset + this.bodyAt, seq, sendTimeMs);
  }
}

/** Most ack frames per socket write. */
const ACK_BATCH = 1024;

/** basic.ack / basic.nack frames with a patched delivery tag, many per socket write. */
export class AckWriter {
  private readonly template: Buffer;
  private readonly tagAt: number;
  /** Scratch for pending frames: starts small (thousands of consumers), grows to ACK_BATCH. */
  private buf: Buffer;
  private used = 0;
  private scheduled = false;

  /** `send(ch, tag)` performs the amqplib call whose frame is the template (e.g. ch.ack). */
  constructor(
    ch: Channel,
    send: (ch: Channel, fakeMessage: { fields: { deliveryTag: number } }) => void,
    private readonly socket = new ChannelSocket(ch),
  ) {
    this.template = captureFrames(ch, () => send(ch, { fields: { deliveryTag: 1 } }));
    // Method frame payload: class id (2), method id (2), then the 64-bit delivery tag.
    this.tagAt = payloadOffset(this.template, 1) + 4;
    if (this.template.length === 0 || this.tagAt < 4) throw new Error('ack template has no method frame');
    this.buf = Buffer.allocUnsafe(this.template.length * 16);
  }

  /**
   * Queues the frame for `deliveryTag`. Everything queued until the loop's check phase leaves in
   * one write: all the socket reads libuv handed over in one poll phase share it.
   */
  add(deliveryTag: number): void {
    const len = this.template.length;
    if (this.used + len > this.buf.length) {
      if (this.buf.length < len * ACK_BATCH) {
        const bigger = Buffer.allocUnsafe(this.buf.length * 4);
        this.buf.copy(bigger, 0, 0, this.used);
        this.buf = bigger;
      } else {
        this.flush();
      }
    }
    this.template.copy(this.buf, this.used);
    // Delivery tags are < 2^53; write them as two 32-bit halves (no BigInt).
    this.buf.writeUInt32BE(Math.floor(deliveryTag / 0x1_0000_0000), this.used + this.tagAt);
    this.buf.writeUInt32BE(deliveryTag >>> 0, this.used + this.tagAt + 4);
    this.used += len;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  readonly flush = (): void => {
    this.scheduled = false;
    if (this.used === 0) return;
    // The socket keeps what it is given until written: hand it an exact copy (small ones come
    // from Node's buffer pool) and keep reusing the scratch buffer.
    const out = Buffer.allocUnsafe(this.used);
    this.buf.copy(out, 0, 0, this.used);
    this.used = 0;
    this.socket.write(out);
  };
}

const FRAME_METHOD = 1;
const FRAME_HEADER = 2;
const FRAME_BODY = 3;
const FRAME_END = 0xce;
const BASIC = 60;
const BASIC_DELIVER = 60;
const BASIC_ACK = 80;
const BASIC_NACK = 120;
const TWO_32 = 0x1_0000_0000;
/** Larger frames go to amqplib, which enforces its own limit. */
const MAX_FRAME = 64 * 1024 * 1024;

/** Length of the frame starting at `pos` of `buf` and continuing into `next`; -1 if unknown or too big. */
function straddlingLength(buf: Buffer, pos: number, next: Buffer): number {
  const tail = buf.length - pos;
  let size: number;
  if (tail >= 7) size = buf.readUInt32BE(pos + 3);
  else if (tail + next.length >= 7) size = Buffer.concat([buf.subarray(pos), next.subarray(0, 7 - tail)], 7).readUInt32BE(3);
  else return -1;
  return size > MAX_FRAME ? -1 : size + 8;
}

/** What a channel wants from the tap. */
export interface TapHandler {
  /** A whole delivery: its tag and the body's send time (NaN for bodies under 12 bytes). */
  delivery?(deliveryTag: number, sendTimeMs: number): void;
  /** A publisher confirm (basic.ack / basic.nack from the broker). */
  confirm?(deliveryTag: number, multiple: boolean, nack: boolean): void;
}

const IDLE = 0;
const HEADER = 1;
const BODY_FIRST = 2;
const BODY_REST = 3;

interface TapChannel {
  h: TapHandler;
  state: number;
  tag: number;
  remaining: number;
  time: number;
}

const taps = new WeakMap<object, FrameTap>();
const NOTHING = Buffer.alloc(0);

/** Reads the generator's hot frames in place on one connection; see the header comment. */
export class FrameTap {
  private readonly channels: Array<TapChannel | undefined> = [];

  /** The connection's tap, installed on first use. */
  static of(ch: Channel): FrameTap {
    const { connection } = internals(ch);
    let tap = taps.get(connection);
    if (!tap) {
      tap = new FrameTap(connection);
      taps.set(connection, tap);
    }
    return tap;
  }

  /** Routes `ch`'s hot frames to `h` from now on (frames already half-received stay with amqplib). */
  static register(ch: Channel, h: TapHandler): void {
    const tap = FrameTap.of(ch);
    const n = internals(ch).ch;
    const entry: TapChannel = { h, state: IDLE, tag: 0, remaining: 0, time: NaN };
    tap.channels[n] = entry;
    // A later channel may get the same number on this connection: it must not inherit `h`.
    ch.once('close', () => {
      if (tap.channels[n] === entry) tap.channels[n] = undefined;
    });
  }

  private constructor(conn: AmqplibConnection) {
    const original = Object.getPrototypeOf(conn).recvFrame as (this: AmqplibConnection) => unknown;
    if (typeof original !== 'function' || !Buffer.isBuffer(conn.rest)) throw new Error('amqplib internals changed: no Connection#recvFrame/rest');
    // amqplib's accept loop calls recvFrame() until it returns false; this version first consumes
    // every complete frame the tap handles, and lets the original decode the first one it does not.
    const tap = this;
    conn.recvFrame = function (this: AmqplibConnection): unknown {
      let buf = this.rest;
      let pos = 0;
      for (;;) {
        if (buf.length - pos >= 8) {
          const size = buf.readUInt32BE(pos + 3);
          const end = pos + 8 + size;
          if (size > MAX_FRAME) {
            // Let amqplib reject it with its own error.
            this.rest = pos === 0 ? buf : buf.subarray(pos);
            return original.call(this);
          }
          if (end <= buf.length) {
            if (buf[end - 1] === FRAME_END && tap.handle(buf, pos + 7, buf[pos], buf.readUInt16BE(pos + 1), size)) {
              pos = end;
              continue;
            }
            this.rest = pos === 0 ? buf : buf.subarray(pos);
            return original.call(this);
          }
        }
        const incoming = this.stream.read();
        if (incoming === null) {
          this.rest = pos === 0 ? buf : pos === buf.length ? NOTHING : buf.subarray(pos);
          return false;
        }
        this.recvSinceLastCheck = true;
        if (pos >= buf.length) {
          buf = incoming;
          pos = 0;
          continue;
        }
        // A frame straddles the two chunks. When the new chunk completes it and the tap takes
        // it, copy just that frame rather than joining the chunks (large bodies: one copy of a
        // frame instead of one of every 64 kB read).
        const tail = buf.length - pos;
        const length = straddlingLength(buf, pos, incoming);
        if (length > 0 && length - tail <= incoming.length) {
          const need = length - tail;
          const frame = Buffer.concat([buf.subarray(pos), incoming.subarray(0, need)], length);
          if (frame[length - 1] === FRAME_END && tap.handle(frame, 7, frame[0], frame.readUInt16BE(1), length - 8)) {
            buf = incoming;
            pos = need;
            continue;
          }
        }
        buf = Buffer.concat([buf.subarray(pos), incoming]);
        pos = 0;
      }
    };
  }

  /** Handles one complete frame whose payload starts at `p`; false = amqplib's. */
  private handle(buf: Buffer, p: number, type: number, channel: number, size: number): boolean {
    const c = this.channels[channel];
    if (c === undefined) return false;
    if (type === FRAME_BODY) {
      if (c.state === BODY_FIRST) c.time = sendTimeAt(buf, p, size);
      else if (c.state !== BODY_REST) return false;
      c.remaining -= size;
      if (c.remaining > 0) {
        c.state = BODY_REST;
      } else {
        c.state = IDLE;
        c.h.delivery!(c.tag, c.time);
      }
      return true;
    }
    if (type === FRAME_HEADER) {
      if (c.state !== HEADER) return false;
      c.remaining = buf.readUInt32BE(p + 4) * TWO_32 + buf.readUInt32BE(p + 8);
      if (c.remaining === 0) {
        c.state = IDLE;
        c.h.delivery!(c.tag, NaN);
      } else {
        c.state = BODY_FIRST;
      }
      return true;
    }
    if (type !== FRAME_METHOD || c.state !== IDLE || size < 4 || buf.readUInt16BE(p) !== BASIC) return false;
    const method = buf.readUInt16BE(p + 2);
    if (method === BASIC_DELIVER && c.h.delivery) {
      // consumer-tag (shortstr), then the 64-bit delivery tag.
      const o = p + 5 + buf[p + 4];
      c.tag = buf.readUInt32BE(o) * TWO_32 + buf.readUInt32BE(o + 4);
      c.state = HEADER;
      return true;
    }
    if ((method === BASIC_ACK || method === BASIC_NACK) && c.h.confirm) {
      const tag = buf.readUInt32BE(p + 4) * TWO_32 + buf.readUInt32BE(p + 8);
      c.h.confirm(tag, (buf[p + 12] & 1) === 1, method === BASIC_NACK);
      return true;
    }
    return false;
  }
}
