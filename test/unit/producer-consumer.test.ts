// The producer's and consumer's own logic against a fake transport (src/workload/transport.ts):
// the confirm window, tags matched single or multiple, in or out of order, nacks, duplicates,
// the message limit, back-pressure and its drain; the consumer's latency, ack every N, autoAck,
// nack and the broker's cancel. No broker: the transports themselves are tested against real
// ones (test/integration/generator-wire.test.ts, wire-fragmented.test.ts).
import type { Channel } from 'amqplib';
import { describe, expect, it } from 'vitest';
import { TrialRecorder } from '../../src/metrics/recorder';
import { Consumer } from '../../src/workload/consumer';
import { Producer } from '../../src/workload/producer';
import type { ConsumeSetup, PublishSetup, PublishTransport } from '../../src/workload/transport';
import { spec } from '../support/broker';

class FakePublish implements PublishTransport {
  blocked = false;
  capacity = 1;
  readonly messageBytes = 100;
  sent: Array<[number, number]> = [];
  flushes = 0;
  constructor(readonly setup: PublishSetup) {}
  send(seq: number, _t: number, tag: number): boolean {
    this.sent.push([seq, tag]);
    return true;
  }
  flush(): boolean {
    this.flushes++;
    return !this.blocked;
  }
}

const tick = () => new Promise<void>((r) => setImmediate(r));
const ch = { on: () => undefined } as unknown as Channel;

function producer(w: Parameters<typeof spec>[1]) {
  const rec = new TrialRecorder();
  rec.measuring = true;
  let t!: FakePublish;
  const p = new Producer(ch, spec('q', w).workload, '', 'q', rec, (s) => (t = new FakePublish(s)));
  return { p, rec, t: () => t };
}

describe('producer logic (fake transport)', () => {
  it('keeps the confirm window: out-of-order, multiple, nack and duplicate confirms', async () => {
    const { p, rec, t } = producer({ confirm: 4 });
    p.startUnlimited();
    await tick();
    expect(t().sent.map(([, tag]) => tag)).toEqual([1, 2, 3, 4]); // the window is full
    p.confirm(3, false, false); // out of order: one slot frees
    await tick();
    expect(t().sent).toHaveLength(5);
    p.confirm(3, false, false); // duplicate: nothing
    p.confirm(2, true, false); // multiple up to 2 (1 and 2)
    await tick();
    expect(t().sent).toHaveLength(7);
    p.confirm(5, false, true); // a nack settles too, counted apart
    await tick();
    p.stop();
    expect([rec.published, rec.confirmed, rec.nacked]).toEqual([t().sent.length, 3, 1]);
    expect(rec.confirmLatency.totalCount).toBe(3);
    // Sequences go out in order, one per tag.
    expect(t().sent.map(([seq]) => seq)).toEqual(t().sent.map((_, i) => i));
  });

  it('stops at the message limit, and holds while the transport is backed up until it drains', async () => {
    const { p, rec, t } = producer({ producerMessageLimit: 600 });
    t().blocked = true;
    p.startUnlimited();
    await tick();
    expect(t().sent).toHaveLength(0); // backed up: nothing handed over
    t().blocked = false;
    t().setup.onDrain();
    for (let i = 0; i < 10; i++) await tick();
    expect(t().sent).toHaveLength(600);
    expect(p.done).toBe(true);
    expect(rec.published).toBe(600);
  });

  it('a send the transport refuses (closed channel) is not counted and stops the producer', async () => {
    const rec = new TrialRecorder();
    let sends = 0;
    const p = new Producer(ch, spec('q', {}).workload, '', 'q', rec, (s) => ({
      blocked: false,
      capacity: 1,
      messageBytes: 100,
      flush: () => true,
      send: () => {
        if (++sends > 3) {
          s.onError(new Error('Channel closed'));
          return false;
        }
        return true;
      },
    }));
    p.startUnlimited();
    await tick();
    expect(rec.published).toBe(3);
    expect(rec.errors).toEqual([]); // a closed channel is the connection's error, not the producer's
  });
});

describe('consumer logic (fake transport)', () => {
  function consumer(w: Parameters<typeof spec>[1]) {
    const rec = new TrialRecorder();
    rec.measuring = true;
    const acks: number[] = [];
    let setup!: ConsumeSetup;
    const chan = { prefetch: async () => undefined, cancel: async () => undefined } as unknown as Channel;
    const c = new Consumer(chan, spec('q', w).workload, 'q', rec, (s) => {
      setup = s;
      return { start: async () => 'ctag', ack: (tag) => acks.push(tag), flush: () => undefined };
    });
    return { c, rec, acks, setup: () => setup };
  }
  const now = () => performance.timeOrigin + performance.now();

  it('counts deliveries and latency, acks each one (or every N with multiple)', async () => {
    const one = consumer({});
    await one.c.start();
    for (let tag = 1; tag <= 5; tag++) one.setup().onDelivery(tag, now() - 2);
    expect([one.rec.consumed, one.acks]).toEqual([5, [1, 2, 3, 4, 5]]);
    expect(one.rec.latency.totalCount).toBe(5);
    expect(one.setup().multiple).toBe(false);

    const multi = consumer({ multiAckEvery: 3 });
    for (let tag = 1; tag <= 7; tag++) multi.setup().onDelivery(tag, NaN); // bodies under 12 bytes
    expect([multi.rec.consumed, multi.acks, multi.rec.latency.totalCount, multi.setup().multiple]).toEqual([7, [3, 6], 0, true]);
  });

  it('autoAck never acks; nack mode nacks each; a broker cancel is the trial error', async () => {
    const auto = consumer({ autoAck: true });
    auto.setup().onDelivery(1, now());
    expect([auto.rec.consumed, auto.acks, auto.setup().noAck]).toEqual([1, [], true]);
    const nack = consumer({ nack: true, requeue: false, multiAckEvery: 10 });
    for (let tag = 1; tag <= 3; tag++) nack.setup().onDelivery(tag, now());
    expect([nack.acks, nack.setup().nack, nack.setup().requeue, nack.setup().multiple]).toEqual([[1, 2, 3], true, false, false]);
    nack.setup().onCancel();
    expect(nack.rec.errors).toEqual(['consumer on q was cancelled by the broker']);
  });
});
