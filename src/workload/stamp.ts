// The time stamp every generated body carries, on every protocol and client path (amqplib, the
// fast AMQP 0-9-1 wire, streams, MQTT, AMQP 1.0): a 4-byte big-endian sequence number at offset 0
// and the send time in ms as a big-endian double at offset 4, so a body is at least 12 bytes and
// end-to-end latency means the same everywhere. The one owner of that layout.

/** Where the sequence number and the send time sit in a body, and the smallest stamped body. */
export const SEQ_OFFSET = 0;
export const TIME_OFFSET = 4;
export const STAMP_BYTES = 12;

/** The size of a body of `size` requested bytes: at least STAMP_BYTES. */
export const stampedSize = (size: number): number => Math.max(size, STAMP_BYTES);

/** Writes `seq` and `sentAtMs` into `buf` at the body that starts at `at`. */
export function stamp(buf: Buffer, at: number, seq: number, sentAtMs: number): void {
  buf.writeUInt32BE(seq >>> 0, at + SEQ_OFFSET);
  buf.writeDoubleBE(sentAtMs, at + TIME_OFFSET);
}

/** A new body of `size` bytes (at least STAMP_BYTES) stamped with its sequence number and send time. */
export function stampedBody(size: number, seq: number, sentAtMs: number): Buffer {
  const body = Buffer.alloc(stampedSize(size));
  stamp(body, 0, seq, sentAtMs);
  return body;
}

/** The send time of the body that starts at `at` in `buf` and is `length` bytes long; NaN when it
 *  is too short to carry one. */
export function sendTimeAt(buf: Buffer, at: number, length: number): number {
  return length >= STAMP_BYTES ? buf.readDoubleBE(at + TIME_OFFSET) : NaN;
}

/** The send time a body carries, NaN when it is too short to carry one. */
export const sendTimeOf = (body: Buffer): number => sendTimeAt(body, 0, body.length);
