// Which path the load generator's clients take, decided once per process: the fast path
// (wire.ts, which leans on amqplib internals) or plain amqplib (its public API only: publish with
// a confirm callback, consume + ack/nack; producer.ts and consumer.ts hold both).
//
// Before the first producer or consumer starts, checkFastPath() looks at the first channel the
// generator gets: every internal wire.ts touches must be there with the expected shape, and must
// behave as wire.ts assumes. The behaviour is probed on a sandbox — an object with the channel's
// own prototype on a stand-in connection with the real connection's prototype and a fake socket —
// so a probe that goes wrong cannot put a byte on the broker's wire: a publish and an ack are
// captured and parsed back frame by frame, and a delivery, a confirm and a heartbeat are fed
// through the frame tap to amqplib's own decoder. If anything is off (a new amqplib), or
// RABBITMQ_PERF_GATE_PLAIN_AMQP=1, the generator runs plain and one stderr line says why; each
// trial's GeneratorLoad records the path that ran (pool.ts).
import type { Channel } from 'amqplib';
// The version of the amqplib that is loaded (and bundled into dist/): the package's `exports` hide
// its package.json from `amqplib/package.json`, so it is read by path (a build-time import).
import amqplibPackage from '../../node_modules/amqplib/package.json' with { type: 'json' };
import { captureFrames, FrameTap, plainPublish, type AmqplibConnection } from './wire';
import { stamp } from './stamp';

/**
 * The amqplib release wire.ts was verified against (its internals, by the probe below and by
 * test/integration/generator-wire.test.ts). package.json pins exactly this version;
 * test/unit/amqplib-pin.test.ts fails when the pin, the installed package or this constant
 * disagree, so an upgrade is a deliberate change that re-runs the wire tests.
 */
export const VERIFIED_AMQPLIB = '2.3.1';

export type WirePath = 'fast' | 'plain';
export interface WirePathDecision {
  path: WirePath;
  /** Why the fast path is off (absent when it is on). */
  reason?: string;
  amqplibVersion: string;
}

/** Set to 1 (or true/yes/on) to run the generator on plain amqplib: for measurements and tests. */
export const PLAIN_AMQP_ENV = 'RABBITMQ_PERF_GATE_PLAIN_AMQP';

let decision: WirePathDecision | undefined;

/** The generator's path for this process, decided (and explained, if plain) on the first call. */
export function wirePath(ch: Channel): WirePath {
  if (!decision) {
    const amqplibVersion = String(amqplibPackage.version);
    const switchValue = process.env[PLAIN_AMQP_ENV];
    const forced = switchValue !== undefined && /^(1|true|yes|on)$/i.test(switchValue.trim());
    const problem = forced ? `${PLAIN_AMQP_ENV}=${switchValue} is set` : checkFastPath(ch);
    decision = problem ? { path: 'plain', reason: problem, amqplibVersion } : { path: 'fast', amqplibVersion };
    if (problem) {
      process.stderr.write(
        `rabbitmq-perf-gate: ${forced ? '' : 'warning: '}load generator fast path off, running on plain amqplib ` +
          `APIs (amqplib ${amqplibVersion}): ${problem}${forced ? '' : ' — expect more generator CPU per message'}\n`,
      );
    }
  }
  return decision.path;
}

/**
 * Switches the rest of the process to plain amqplib after the fast path stalled a trial (the
 * engine's watchdog); one stderr line says so. Later trials record 'plain' as their path.
 */
export function demoteToPlain(why: string): void {
  if (decision?.path !== 'fast') return;
  decision = { path: 'plain', reason: `the fast path stalled a trial (${why}); the rest of the run uses plain amqplib`, amqplibVersion: decision.amqplibVersion };
  process.stderr.write(`rabbitmq-perf-gate: warning: ${decision.reason}\n`);
}

/** The decision, once made (undefined before the first producer or consumer of the process). */
export function decidedWirePath(): WirePathDecision | undefined {
  return decision;
}

/** Forgets the decision, so the next wirePath() checks again (tests only). */
export function resetWirePath(): void {
  decision = undefined;
}

type Loose = Record<string, unknown> | undefined;
const isFn = (x: unknown): boolean => typeof x === 'function';
const isObj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null;

/** What is missing or misbehaving for the fast path on `ch`'s amqplib, or undefined if nothing. */
export function checkFastPath(ch: Channel): string | undefined {
  const c = ch as unknown as Record<string, unknown>;
  const conn = (isObj(c.connection) ? c.connection : undefined) as Loose;
  const proto = conn ? (Object.getPrototypeOf(conn) as Loose) : undefined;
  const stream = (isObj(conn?.stream) ? conn.stream : undefined) as Loose;
  const n = c.ch as number;
  const slot = Array.isArray(conn?.channels) ? (conn.channels as unknown[])[n] : undefined;
  const shapes: Array<[string, boolean]> = [
    ['Channel#ch (channel number)', Number.isInteger(n) && n > 0],
    ['Channel#connection (amqplib Connection)', conn !== undefined],
    ['Connection#stream (socket: write, read, once, writableLength)', isFn(stream?.write) && isFn(stream?.read) && isFn(stream?.once) && typeof stream?.writableLength === 'number'],
    ['Connection#channels[n].buffer.write (per-channel write buffer)', isObj(slot) && isObj(slot.buffer) && isFn(slot.buffer.write)],
    ['Connection#rest (Buffer of unparsed bytes)', Buffer.isBuffer(conn?.rest)],
    ['Connection#frameMax (negotiated frame size)', typeof conn?.frameMax === 'number' && (conn.frameMax as number) >= 4096],
    ['Connection#sentSinceLastCheck / recvSinceLastCheck', typeof conn?.sentSinceLastCheck === 'boolean' && typeof conn?.recvSinceLastCheck === 'boolean'],
    ['Connection.prototype.recvFrame', isFn(proto?.recvFrame)],
    ['Channel#publish (plain, under ConfirmChannel#publish)', plainPublish(ch) !== undefined],
    ['Channel#ack / Channel#nack', isFn(c.ack) && isFn(c.nack)],
  ];
  const missing = shapes.find(([, ok]) => !ok);
  if (missing) return `amqplib internal ${missing[0]} is missing or has changed shape`;
  return probe(ch, conn as unknown as AmqplibConnection);
}

interface Frame {
  type: number;
  channel: number;
  payload: Buffer;
}

/** Complete frames in `buf`, or a description of what is wrong with them. */
function parseFrames(buf: Buffer): Frame[] | string {
  const out: Frame[] = [];
  for (let o = 0; o < buf.length; ) {
    if (o + 8 > buf.length) return 'a truncated frame';
    const end = o + 8 + buf.readUInt32BE(o + 3);
    if (end > buf.length || buf[end - 1] !== 0xce) return 'a frame with a bad size or end byte';
    out.push({ type: buf[o], channel: buf.readUInt16BE(o + 1), payload: buf.subarray(o + 7, end - 1) });
    o = end;
  }
  return out;
}

const method = (f: Frame | undefined) => (f && f.type === 1 && f.payload.length >= 4 ? `${f.payload.readUInt16BE(0)}.${f.payload.readUInt16BE(2)}` : '');
const u64 = (b: Buffer, o: number) => b.readUInt32BE(o) * 0x1_0000_0000 + b.readUInt32BE(o + 4);
const frame = (type: number, channel: number, payload: Buffer) => {
  const b = Buffer.alloc(payload.length + 8);
  b[0] = type;
  b.writeUInt16BE(channel, 1);
  b.writeUInt32BE(payload.length, 3);
  payload.copy(b, 7);
  b[b.length - 1] = 0xce;
  return b;
};

/** The behaviour checks, on a sandbox copy of `ch` (see the header); a description if one fails. */
function probe(ch: Channel, real: AmqplibConnection): string | undefined {
  const n = (ch as unknown as { ch: number }).ch;
  const chunks: Buffer[] = [];
  let leaked = 0;
  const trap = () => {
    leaked++;
    return true;
  };
  const conn = Object.create(Object.getPrototypeOf(real)) as Record<string, unknown>;
  // Only the real connection's primitive fields (sizes, flags): nothing that leads to its socket.
  for (const [k, v] of Object.entries(real)) if (v === null || (typeof v !== 'object' && typeof v !== 'function')) conn[k] = v;
  const channels: unknown[] = [];
  channels[n] = { buffer: { write: trap } };
  Object.assign(conn, {
    rest: Buffer.alloc(0),
    channels,
    sentSinceLastCheck: false,
    recvSinceLastCheck: false,
    stream: { write: trap, read: () => chunks.shift() ?? null, once: () => undefined, on: () => undefined, writableLength: 0 },
  });
  const sandbox = Object.assign(Object.create(Object.getPrototypeOf(ch)), { ch: n, connection: conn }) as Channel;
  const step = { now: 'publish capture' };
  let problem: string | undefined;
  try {
    problem = probeSandbox(sandbox, n, conn, chunks, step);
  } catch (e) {
    problem = `fast-path probe: ${step.now} failed (${(e as Error).message})`;
  }
  return leaked ? `fast-path probe: ${step.now} wrote around Connection#channels[n].buffer` : problem;
}

function probeSandbox(sandbox: Channel, n: number, conn: Record<string, unknown>, chunks: Buffer[], step: { now: string }): string | undefined {
  const body = Buffer.alloc(100, 0x2e);
  stamp(body, 0, 0, 1.7e12 + 0.5);
  const pub = parseFrames(captureFrames(sandbox, () => plainPublish(sandbox)!.call(sandbox, 'x', 'k', body, { persistent: true })));
  if (typeof pub === 'string') return `fast-path probe: a captured publish has ${pub}`;
  const bodies = pub.slice(2);
  if (
    method(pub[0]) !== '60.40' ||
    pub[1]?.type !== 2 ||
    pub[1].payload.length < 12 ||
    u64(pub[1].payload, 4) !== body.length ||
    bodies.length === 0 ||
    bodies.some((f) => f.type !== 3) ||
    pub.some((f) => f.channel !== n) ||
    !Buffer.concat(bodies.map((f) => f.payload)).equals(body)
  ) {
    return 'fast-path probe: a captured publish is not basic.publish + content header + the body';
  }
  step.now = 'ack capture';
  const ack = parseFrames(captureFrames(sandbox, () => sandbox.ack({ fields: { deliveryTag: 5 } } as never, false)));
  if (typeof ack === 'string' || ack.length !== 1 || method(ack[0]) !== '60.80' || u64(ack[0].payload, 4) !== 5) {
    return 'fast-path probe: a captured ack is not one basic.ack frame with the delivery tag';
  }
  step.now = 'frame tap';
  const got: unknown[] = [];
  FrameTap.register(sandbox, { delivery: (tag, t) => got.push(['delivery', tag, t]), confirm: (tag, m, x) => got.push(['confirm', tag, m, x]) });
  const header = Buffer.alloc(14);
  header.writeUInt16BE(60, 0);
  header.writeUInt32BE(body.length, 8);
  const ctag = Buffer.from('probe');
  const bytes = Buffer.concat([
    frame(1, n, Buffer.concat([Buffer.from([0, 60, 0, 60, ctag.length]), ctag, Buffer.from([0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0])])),
    frame(2, n, header),
    frame(3, n, body),
    frame(1, n, Buffer.from([0, 60, 0, 80, 0, 0, 0, 0, 0, 0, 0, 3, 1])),
    frame(8, 0, Buffer.alloc(0)),
  ]);
  chunks.push(bytes.subarray(0, 100), bytes.subarray(100)); // the body frame straddles two reads
  const recv = (conn as unknown as { recvFrame(): unknown }).recvFrame;
  const heartbeat = recv.call(conn);
  const after = recv.call(conn);
  if (
    JSON.stringify(got) !==
      JSON.stringify([
        ['delivery', 9, 1.7e12 + 0.5],
        ['confirm', 3, true, false],
      ]) ||
    !heartbeat ||
    after !== false ||
    (conn.rest as Buffer).length !== 0
  ) {
    return 'fast-path probe: Connection#recvFrame does not read Connection#rest and Connection#stream as the frame tap expects';
  }
  return undefined;
}
