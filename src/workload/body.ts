// Message bodies with PerfTest's layout: a 4-byte sequence and an 8-byte send time at the start
// (hence the 12-byte minimum), the rest filler. The time is epoch milliseconds as a double with
// sub-microsecond resolution, comparable across worker threads of one machine.
import { performance } from 'node:perf_hooks';

export const HEADER_BYTES = 12;
/** amqplib copies a whole publish into one buffer below 2048 bytes, so one body can be reused. */
const REUSE_LIMIT = 1500;
const ORIGIN = performance.timeOrigin;

export function nowMs(): number {
  return ORIGIN + performance.now();
}

export type BodyFactory = (seq: number, sendTimeMs: number) => Buffer;

export function bodyFactory(size: number): BodyFactory {
  const template = Buffer.alloc(Math.max(size, HEADER_BYTES), 0x2e);
  if (template.length <= REUSE_LIMIT) {
    return (seq, t) => {
      template.writeUInt32BE(seq >>> 0, 0);
      template.writeDoubleBE(t, 4);
      return template;
    };
  }
  return (seq, t) => {
    const b = Buffer.allocUnsafe(template.length);
    template.copy(b, HEADER_BYTES, HEADER_BYTES);
    b.writeUInt32BE(seq >>> 0, 0);
    b.writeDoubleBE(t, 4);
    return b;
  };
}

/** Send time of a body we produced, or NaN for foreign/short bodies. */
export function sendTime(body: Buffer): number {
  return body.length >= HEADER_BYTES ? body.readDoubleBE(4) : NaN;
}

export function sequence(body: Buffer): number {
  return body.length >= HEADER_BYTES ? body.readUInt32BE(0) : -1;
}
