// One counted producer/consumer run through the generator's own Producer and Consumer (whatever
// transport this process decided on): used to check exact counts on a plain loopback and through
// the fragmenting proxy.
import type { Channel, ChannelModel } from 'amqplib';
import { TrialRecorder } from '../../src/metrics/recorder';
import { Consumer } from '../../src/workload/consumer';
import { Producer } from '../../src/workload/producer';
import { spec } from './broker';

export async function until(f: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

const internalConn = (c: ChannelModel) => (c as unknown as { connection: object }).connection;
/** Is the frame tap (an own recvFrame) installed on any of these connections? */
const tapped = (cs: ChannelModel[]) => cs.some((c) => Object.hasOwn(internalConn(c), 'recvFrame'));

/**
 * One producer (confirm window 64, a message limit) to one queue ('one_fast'-like) or to
 * amq.fanout bound to `fanout` queues, one acking consumer per queue; counts everything the
 * generator and amqplib's public methods saw.
 */
export async function runCounted(conn: () => Promise<ChannelModel>, o: { fanout?: number; messages: number; multiAck?: number }) {
  const window = 64;
  const c = await conn();
  const setup = await c.createChannel();
  const queues = o.fanout ? Array.from({ length: o.fanout }, (_, i) => `q-${i + 1}`) : ['single'];
  for (const q of queues) {
    await setup.assertQueue(q, { durable: true });
    if (o.fanout) await setup.bindQueue(q, 'amq.fanout', '');
  }
  const rec = new TrialRecorder();
  rec.measuring = true;
  const acks: boolean[] = [];
  const conns: ChannelModel[] = [];
  const consumers: Array<{ consumer: Consumer; ch: Channel }> = [];
  for (const q of queues) {
    const cc = await conn();
    conns.push(cc);
    const ch = await cc.createChannel();
    const ack = ch.ack.bind(ch);
    ch.ack = (m, all) => {
      acks.push(Boolean(all));
      ack(m, all);
    };
    const consumer = new Consumer(ch, spec(q, { qos: 100, multiAckEvery: o.multiAck ?? 0 }).workload, q, rec);
    await consumer.start();
    consumers.push({ consumer, ch });
  }
  const pc = await conn();
  conns.push(pc);
  const pch = await pc.createConfirmChannel();
  let calls = 0;
  let maxOutstanding = 0;
  const publish = pch.publish.bind(pch);
  pch.publish = (...a: Parameters<typeof publish>) => {
    calls++;
    maxOutstanding = Math.max(maxOutstanding, calls - rec.confirmed - rec.nacked);
    return publish(...a);
  };
  const w = spec(queues[0], { confirm: window, producerMessageLimit: o.messages, size: 100, persistent: true }).workload;
  new Producer(pch, w, o.fanout ? 'amq.fanout' : '', o.fanout ? '' : queues[0], rec).startUnlimited();
  await until(() => rec.confirmed === o.messages && rec.consumed === o.messages * queues.length, 30_000);
  for (const x of consumers) {
    await x.consumer.stop();
    await x.ch.close();
  }
  // Closing a channel requeues what it left unacked (asynchronously on the broker).
  let left = -1;
  for (const end = Date.now() + 3000; Date.now() < end && left !== 0; await new Promise((r) => setTimeout(r, 50))) {
    left = 0;
    for (const q of queues) left += (await setup.checkQueue(q)).messageCount;
  }
  return { rec, calls, maxOutstanding, window, acks, left, tapped: tapped(conns) };
}
