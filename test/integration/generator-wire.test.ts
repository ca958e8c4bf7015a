// The generator's fast path (src/workload/wire.ts) against the real broker: what goes on the wire
// is exactly what amqplib would send (properties, bodies, acks, nacks), confirms are matched by
// tag in every order, and deliveries split over several body frames are read whole. And its
// fallback (src/workload/wire-check.ts): this amqplib passes the start-up check; with
// RABBITMQ_PERF_GATE_PLAIN_AMQP=1, or an amqplib internal removed or changed before the check,
// the generator runs on plain amqplib APIs with the same counts, and says why once.
import amqp, { type Channel, type ChannelModel } from 'amqplib';
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { TrialRecorder } from '../../src/metrics/recorder';
import { Consumer } from '../../src/workload/consumer';
import { runWorkload } from '../../src/workload/scenario';
import { Producer } from '../../src/workload/producer';
import { checkFastPath, decidedWirePath, PLAIN_AMQP_ENV, resetWirePath, wirePath } from '../../src/workload/wire-check';
import { freshVhost, spec } from '../support/broker';
import { runCounted, until } from '../support/counted-run';

const cleanup: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const f of cleanup.reverse()) await f().catch(() => undefined);
});

async function connect(name: string): Promise<{ url: string; conn: () => Promise<ChannelModel> }> {
  const v = await freshVhost(`wire-${name}`);
  cleanup.push(v.drop);
  return {
    url: v.url,
    conn: async () => {
      const c = await amqp.connect(`${v.url}?frameMax=131072`);
      cleanup.push(() => c.close());
      return c;
    },
  };
}

const tick = () => new Promise<void>((r) => setImmediate(r));

describe('generator wire fast path', () => {
  it('publishes amqplib-identical messages: properties, headers, sequence and send time', async () => {
    const { conn } = await connect('publish');
    const c = await conn();
    const setup = await c.createChannel();
    await setup.assertQueue('q', { durable: true });
    const w = spec('q', {
      confirm: 7,
      producerMessageLimit: 50,
      size: 100,
      persistent: true,
      messageProperties: { expiration: '60000', priority: 3, 'x-trace': 'abc' },
    }).workload;
    const rec = new TrialRecorder();
    const before = performance.timeOrigin + performance.now();
    const p = new Producer(await c.createConfirmChannel(), w, '', 'q', rec);
    p.startUnlimited();
    await until(() => rec.confirmed === 50);
    expect(rec.published).toBe(50);
    expect(rec.nacked).toBe(0);

    const got: amqp.ConsumeMessage[] = [];
    await setup.consume(
      'q',
      (m) => {
        if (m) got.push(m);
      },
      { noAck: true },
    );
    await until(() => got.length === 50);
    got.forEach((m, i) => {
      expect(m.content.length).toBe(100);
      expect(m.content.readUInt32BE(0)).toBe(i);
      const t = m.content.readDoubleBE(4);
      expect(t).toBeGreaterThanOrEqual(before);
      expect(t).toBeLessThanOrEqual(performance.timeOrigin + performance.now());
      expect(m.content.subarray(12).every((b) => b === 0x2e)).toBe(true);
      expect(m.properties.deliveryMode).toBe(2);
      expect(m.properties.expiration).toBe('60000');
      expect(m.properties.priority).toBe(3);
      expect(m.properties.headers).toEqual({ 'x-trace': 'abc' });
      expect(m.fields.routingKey).toBe('q');
    });
  });

  it('matches confirms by tag: out of order, multiple, nack, duplicates; the window reopens', async () => {
    const { conn } = await connect('confirms');
    const c = await conn();
    const setup = await c.createChannel();
    await setup.assertQueue('q');
    // A plain channel (no confirm.select): the broker sends no confirms, the test does.
    const w = spec('q', { confirm: 4, producerMessageLimit: 10 }).workload;
    const rec = new TrialRecorder();
    const p = new Producer(await c.createChannel(), w, '', 'q', rec);
    p.startUnlimited();
    await tick();
    expect(rec.published).toBe(4);
    p.confirm(2, false, false); // out of order
    await tick();
    expect([rec.confirmed, rec.published]).toEqual([1, 5]);
    p.confirm(1, false, false); // the low-water mark moves past 2
    await tick();
    expect([rec.confirmed, rec.published]).toEqual([2, 6]);
    p.confirm(4, true, false); // settles 3 and 4 only (2 was settled)
    await tick();
    expect([rec.confirmed, rec.published]).toEqual([4, 8]);
    p.confirm(5, false, true); // a nack frees its slot too
    await tick();
    expect([rec.confirmed, rec.nacked, rec.published]).toEqual([4, 1, 9]);
    p.confirm(9, true, false);
    p.confirm(9, true, false); // duplicate: no effect
    p.confirm(3, false, false); // already settled: no effect
    await tick();
    expect([rec.confirmed, rec.nacked, rec.published]).toEqual([8, 1, 10]);
    p.confirm(10, false, false);
    p.confirm(11, false, false); // never published: ignored
    expect([rec.confirmed, rec.nacked, rec.published]).toEqual([9, 1, 10]);
    expect(p.done).toBe(true);
  });

  it('acks each message (prefetch would stall otherwise), multi-acks every N, nacks without requeue', async () => {
    const { conn } = await connect('acks');
    const pubConn = await conn();
    const pub = await pubConn.createConfirmChannel();
    const fill = async (q: string, n: number) => {
      await pub.assertQueue(q);
      for (let i = 0; i < n; i++) pub.sendToQueue(q, Buffer.alloc(16));
      await pub.waitForConfirms();
    };
    const run = async (q: string, n: number, w: Parameters<typeof spec>[1]) => {
      await fill(q, n);
      const c = await conn();
      const rec = new TrialRecorder();
      const consumer = new Consumer(await c.createChannel(), spec(q, w).workload, q, rec);
      await consumer.start();
      await until(() => rec.consumed === n);
      await consumer.stop();
      await c.close();
      return rec;
    };
    // Closing the channel requeues whatever was left unacked (asynchronously on the broker).
    const ready = async (q: string, expected: number) => {
      const end = Date.now() + 5000;
      let n = -1;
      while (Date.now() < end && (n = (await pub.checkQueue(q)).messageCount) !== expected) await new Promise((r) => setTimeout(r, 50));
      return n;
    };
    await run('each', 500, { qos: 10 });
    expect(await ready('each', 0)).toBe(0);
    // -A 7 over 100 messages acks up to 98 with multiple=true; PerfTest leaves the last 2 unacked.
    await run('multi', 100, { qos: 20, multiAckEvery: 7 });
    expect(await ready('multi', 2)).toBe(2);
    await run('nack', 200, { qos: 10, nack: true, requeue: false });
    expect(await ready('nack', 0)).toBe(0);
  });

  it('reads deliveries whose body spans several frames, and bodies under 12 bytes', async () => {
    const { conn } = await connect('frames');
    const c = await conn();
    const pub = await c.createConfirmChannel();
    await pub.assertQueue('big');
    const big = Buffer.alloc(300_000, 1);
    big.writeUInt32BE(0, 0);
    big.writeDoubleBE(performance.timeOrigin + performance.now(), 4);
    pub.sendToQueue('big', big);
    pub.sendToQueue('big', Buffer.alloc(3));
    pub.sendToQueue('big', Buffer.alloc(0));
    await pub.waitForConfirms();
    const cc = await conn();
    const rec = new TrialRecorder();
    rec.measuring = true;
    const consumer = new Consumer(await cc.createChannel(), spec('big', { qos: 1 }).workload, 'big', rec);
    await consumer.start();
    await until(() => rec.consumed === 3);
    await consumer.stop();
    // One latency: the big body's; the short ones carry no send time.
    expect(rec.latency.totalCount).toBe(1);
    expect(rec.latency.maxValue).toBeLessThan(60_000_000);
    expect((await pub.checkQueue('big')).messageCount).toBe(0);
  });
});

describe('frame tap parser (synthetic byte streams cut at random places)', () => {
  // A stand-in for amqplib's Connection: the original recvFrame parses one frame from `rest`
  // (reading more from the stream when needed) and returns it; the tap must take exactly its own
  // frames and hand every other one, intact and in order, to this original.
  class FakeConnection {
    rest = Buffer.alloc(0);
    channels = [null, { buffer: { write: () => true } }, { buffer: { write: () => true } }];
    sentSinceLastCheck = false;
    recvSinceLastCheck = false;
    frameMax = 131072;
    readonly chunks: Buffer[] = [];
    stream = { read: () => this.chunks.shift() ?? null, write: () => true, writableLength: 0 };
    recvFrame(): { type: number; channel: number; payload: Buffer } | false {
      for (;;) {
        if (this.rest.length >= 8) {
          const size = this.rest.readUInt32BE(3);
          if (this.rest.length >= size + 8) {
            const f = { type: this.rest[0], channel: this.rest.readUInt16BE(1), payload: Buffer.from(this.rest.subarray(7, 7 + size)) };
            this.rest = this.rest.subarray(size + 8);
            return f;
          }
        }
        const more = this.stream.read();
        if (more === null) return false;
        this.rest = Buffer.concat([this.rest, more]);
      }
    }
  }
  const frame = (type: number, channel: number, payload: Buffer) => {
    const b = Buffer.alloc(payload.length + 8);
    b[0] = type;
    b.writeUInt16BE(channel, 1);
    b.writeUInt32BE(payload.length, 3);
    payload.copy(b, 7);
    b[b.length - 1] = 0xce;
    return b;
  };
  const method = (cls: number, id: number, args: Buffer) => Buffer.concat([Buffer.from([cls >> 8, cls & 255, id >> 8, id & 255]), args]);
  const u64 = (n: number) => {
    const b = Buffer.alloc(8);
    b.writeUInt32BE(Math.floor(n / 2 ** 32));
    b.writeUInt32BE(n >>> 0, 4);
    return b;
  };

  it('takes deliveries and confirms whole, in order, however the bytes are cut; passes the rest on', async () => {
    const { FrameTap } = await import('../../src/workload/wire');
    let seed = 42;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 200; round++) {
      const conn = new FakeConnection();
      const fakeChannel = (n: number) => Object.assign(Object.create({ once: () => undefined }), { ch: n, connection: conn });
      const deliveries: Array<[number, number]> = [];
      const confirms: Array<[number, boolean, boolean]> = [];
      FrameTap.register(fakeChannel(1) as never, { delivery: (tag, t) => deliveries.push([tag, t]) });
      FrameTap.register(fakeChannel(2) as never, { confirm: (tag, m, n) => confirms.push([tag, m, n]) });
      const parts: Buffer[] = [];
      const expectD: Array<[number, number]> = [];
      const expectC: Array<[number, boolean, boolean]> = [];
      const expectOther: string[] = [];
      for (let i = 1; i <= 40; i++) {
        const r = rnd();
        if (r < 0.5) {
          // basic.deliver (consumer tag, tag, redelivered, exchange, routing key), header, body frames
          const size = [0, 3, 12, 100, 5000, 300_000][Math.floor(rnd() * 6)];
          const tag = i * 1000 + 2 ** 33;
          const ctag = Buffer.from('amq.ctag-xyz');
          parts.push(frame(1, 1, method(60, 60, Buffer.concat([Buffer.from([ctag.length]), ctag, u64(tag), Buffer.from([0, 1, 0x61, 1, 0x71])]))));
          const header = Buffer.alloc(14);
          header.writeUInt16BE(60, 0);
          header.writeUInt32BE(Math.floor(size / 2 ** 32), 4);
          header.writeUInt32BE(size >>> 0, 8);
          parts.push(frame(2, 1, header));
          const body = Buffer.alloc(size, 7);
          const t = 1.7e12 + i + 0.25;
          if (size >= 12) body.writeDoubleBE(t, 4);
          for (let o = 0; o < size; o += conn.frameMax - 8) parts.push(frame(3, 1, body.subarray(o, o + conn.frameMax - 8)));
          expectD.push([tag, size >= 12 ? t : NaN]);
        } else if (r < 0.8) {
          const nack = rnd() < 0.2;
          const multiple = rnd() < 0.5;
          parts.push(frame(1, 2, method(60, nack ? 120 : 80, Buffer.concat([u64(i), Buffer.from([multiple ? 1 : 0])]))));
          expectC.push([i, multiple, nack]);
        } else {
          // Not the tap's: a heartbeat, a channel.close on a tapped channel, a frame on an untapped one.
          const kind = Math.floor(rnd() * 3);
          parts.push(kind === 0 ? frame(8, 0, Buffer.alloc(0)) : kind === 1 ? frame(1, 1, method(20, 40, Buffer.from([0, 200, 0]))) : frame(1, 5, method(60, 80, u64(i))));
          expectOther.push(`${[8, 1, 1][kind]}:${[0, 1, 5][kind]}`);
        }
      }
      const all = Buffer.concat(parts);
      for (let o = 0; o < all.length; ) {
        const n = 1 + Math.floor(rnd() ** 3 * 70_000);
        conn.chunks.push(all.subarray(o, o + n));
        o += n;
      }
      const others: string[] = [];
      let f: { type: number; channel: number } | false;
      while ((f = (conn as unknown as { recvFrame(): { type: number; channel: number } | false }).recvFrame()) !== false) others.push(`${f.type}:${f.channel}`);
      expect(deliveries).toEqual(expectD);
      expect(confirms).toEqual(expectC);
      expect(others).toEqual(expectOther);
      expect(conn.rest.length).toBe(0);
    }
  });
});

describe('plain amqplib fallback (wire-check.ts)', () => {
  const AMQPLIB = JSON.parse(readFileSync('node_modules/amqplib/package.json', 'utf8')).version as string;
  let saved: string | undefined;
  let stderr: MockInstance;
  const warnings = () => stderr.mock.calls.map((c) => String(c[0])).filter((l) => l.startsWith('rabbitmq-perf-gate:'));
  beforeEach(() => {
    saved = process.env[PLAIN_AMQP_ENV];
    delete process.env[PLAIN_AMQP_ENV];
    resetWirePath();
    stderr = vi.spyOn(process.stderr, 'write');
  });
  afterEach(() => {
    stderr.mockRestore();
    if (saved === undefined) delete process.env[PLAIN_AMQP_ENV];
    else process.env[PLAIN_AMQP_ENV] = saved;
    resetWirePath();
  });

  it('this amqplib passes the check: the fast path runs, silently, unless the switch says otherwise', async () => {
    const { url, conn } = await connect('check');
    const c = await conn();
    expect(checkFastPath(await c.createConfirmChannel())).toBeUndefined();
    expect(checkFastPath(await c.createChannel())).toBeUndefined();
    process.env[PLAIN_AMQP_ENV] = '0';
    const r = await runCounted(conn, { messages: 500 });
    expect(decidedWirePath()).toEqual({ path: 'fast', amqplibVersion: AMQPLIB });
    // The fast path publishes without Channel#publish, and calls Channel#ack once (to capture the
    // ack template) but sends its frames itself; deliveries come through the tap.
    expect([r.rec.published, r.rec.confirmed, r.rec.consumed, r.calls, r.acks.length, r.left, r.tapped]).toEqual([500, 500, 500, 0, 1, 0, true]);
    const e = await runWorkload(spec('one_fast', { producers: 1, consumers: 1, confirm: 500, size: 100 }, { warmup: 1, duration: 1 }), url);
    expect(e.valid, e.invalidReason).toBe(true);
    expect(e.generator.amqpPath).toBe('fast');
    expect(warnings()).toEqual([]);
  });

  it(`${PLAIN_AMQP_ENV}=1: one_fast- and fanout-like workloads run on plain amqplib with exact counts`, async () => {
    process.env[PLAIN_AMQP_ENV] = '1';
    const { url, conn } = await connect('plain');
    const one = await runCounted(conn, { messages: 3000 });
    expect(decidedWirePath()).toEqual({ path: 'plain', reason: `${PLAIN_AMQP_ENV}=1 is set`, amqplibVersion: AMQPLIB });
    const r = one.rec;
    expect([r.published, r.confirmed, r.nacked, r.consumed]).toEqual([3000, 3000, 0, 3000]);
    // Every message through Channel#publish, the confirm window held, one Channel#ack each, all acked.
    expect([one.calls, one.acks.length, one.acks.includes(true), one.left, one.tapped]).toEqual([3000, 3000, false, 0, false]);
    expect(one.maxOutstanding).toBeLessThanOrEqual(one.window);
    expect([r.latency.totalCount, r.confirmLatency.totalCount]).toEqual([3000, 3000]);
    expect(r.latency.maxValue).toBeLessThan(30_000_000);

    const fan = await runCounted(conn, { fanout: 3, messages: 1000, multiAck: 10 });
    const f = fan.rec;
    expect([f.published, f.confirmed, f.consumed, fan.calls, fan.left, fan.tapped]).toEqual([1000, 1000, 3000, 1000, 0, false]);
    // -A 10: one multiple ack per 10 deliveries on each of the three queues.
    expect([fan.acks.length, fan.acks.every((all) => all)]).toEqual([300, true]);
    expect([f.latency.totalCount, f.confirmLatency.totalCount]).toEqual([3000, 1000]);

    // The engine, as the action runs it: valid trials that record the plain path.
    const a = await runWorkload(spec('one_fast', { producers: 1, consumers: 1, confirm: 500, size: 100, persistent: true }, { warmup: 1, duration: 2 }), url);
    expect(a.valid, a.invalidReason).toBe(true);
    expect(a.generator.amqpPath).toBe('plain');
    expect(a.metrics.published_rate).toBeGreaterThan(100);
    expect(a.metrics.confirmed_rate).toBeGreaterThan(100);
    expect(a.metrics.consumed_rate).toBeGreaterThan(100);
    expect([typeof a.histograms.latency, typeof a.histograms.confirm_latency]).toEqual(['string', 'string']);
    const b = await runWorkload(
      spec(
        'fanout3',
        {
          producers: 1,
          consumers: 3,
          confirm: 100,
          exchange: 'amq.fanout',
          exchangeType: 'fanout',
          queuePattern: 'fq-%d',
          queuePatternFrom: 1,
          queuePatternTo: 3,
          multiAckEvery: 10,
        },
        { warmup: 1, duration: 2 },
      ),
      url,
    );
    expect(b.valid, b.invalidReason).toBe(true);
    expect(b.generator.amqpPath).toBe('plain');
    expect(b.metrics.consumed_rate / b.metrics.published_rate).toBeGreaterThan(2.5);
    expect(b.metrics.consumed_rate / b.metrics.published_rate).toBeLessThan(3.5);
    // Said once per process, however many producers, consumers and trials.
    expect(warnings()).toEqual([`rabbitmq-perf-gate: load generator fast path off, running on plain amqplib APIs (amqplib ${AMQPLIB}): ${PLAIN_AMQP_ENV}=1 is set\n`]);
  });

  /** Moves (or replaces) `obj[key]` for the duration of the check; returns the undo. */
  function change(obj: object, key: string, to: { rename: string } | { value: unknown }): () => void {
    const before = Object.getOwnPropertyDescriptor(obj, key);
    if (!before) throw new Error(`test setup: ${key} is not an own property here`);
    if ('rename' in to) Object.defineProperty(obj, to.rename, before);
    if ('value' in to) Object.defineProperty(obj, key, { ...before, value: to.value });
    else delete (obj as Record<string, unknown>)[key];
    return () => {
      Object.defineProperty(obj, key, before);
      if ('rename' in to) delete (obj as Record<string, unknown>)[to.rename];
    };
  }
  const connOf = (ch: Channel) => (ch as unknown as { connection: object }).connection;
  const cases: Array<[string, RegExp, (ch: Channel) => () => void]> = [
    ['Connection.prototype.recvFrame renamed', /internal Connection\.prototype\.recvFrame is missing/, (ch) => change(Object.getPrototypeOf(connOf(ch)), 'recvFrame', { rename: 'readFrame' })],
    ['Connection#rest renamed', /internal Connection#rest \(/, (ch) => change(connOf(ch), 'rest', { rename: 'pending' })],
    ['Channel#ch renamed', /internal Channel#ch \(/, (ch) => change(ch, 'ch', { rename: 'id' })],
    // Not on the shape list: the probes catch them by behaviour.
    [
      "Connection.prototype.sendMessage renamed (amqplib's own publish)",
      /probe: publish capture failed \(.*sendMessage/,
      (ch) => change(Object.getPrototypeOf(connOf(ch)), 'sendMessage', { rename: 'sendContentMessage' }),
    ],
    ['ConfirmChannel.prototype.waitForConfirms renamed', /probe: publish capture failed/, (ch) => change(Object.getPrototypeOf(ch), 'waitForConfirms', { rename: 'confirmed' })],
    ['Connection.prototype.recvFrame reads from somewhere else', /probe: Connection#recvFrame does not read/, (ch) => change(Object.getPrototypeOf(connOf(ch)), 'recvFrame', { value: () => false })],
  ];

  it.each(cases)('%s before the check: plain path, one warning naming it, the workload runs right', async (_, reason, simulate) => {
    const { conn } = await connect('changed');
    const ch = await (await conn()).createConfirmChannel();
    const undo = simulate(ch);
    let path: string | undefined;
    try {
      path = wirePath(ch);
    } finally {
      undo();
    }
    expect(path).toBe('plain');
    expect(decidedWirePath()?.reason).toMatch(reason);
    expect(checkFastPath(ch)).toBeUndefined(); // restored: the change alone made the difference
    const r = await runCounted(conn, { messages: 1000 });
    expect([r.rec.published, r.rec.confirmed, r.rec.consumed, r.calls, r.acks.length, r.left, r.tapped]).toEqual([1000, 1000, 1000, 1000, 1000, 0, false]);
    expect(r.maxOutstanding).toBeLessThanOrEqual(r.window);
    expect([r.rec.latency.totalCount, r.rec.confirmLatency.totalCount]).toEqual([1000, 1000]);
    const lines = warnings();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^rabbitmq-perf-gate: warning: load generator fast path off, running on plain amqplib APIs \\(amqplib ${AMQPLIB.replace(/\./g, '\\.')}\\): `));
    expect(lines[0]).toMatch(reason);
  });
});
