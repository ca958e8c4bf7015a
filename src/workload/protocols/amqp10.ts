// The AMQP 1.0 driver (rhea), after omq's amqp mode as rabbitmq/testing runs it: one connection
// per producer and per consumer to the trial's vhost (`vhost:<name>` as the open frame's
// hostname), senders and receivers on the v2 address /queues/<name> (RabbitMQ 4.x). The queue is
// declared the PerfTest way over AMQP 0-9-1 with the scenario's arguments (classic or quorum).
// With a confirm window (-c) transfers are unsettled and resolve on the broker's `accepted`
// outcome; without one they are sent settled; a consume-only scenario's backlog is written
// unsettled and confirmed before its clients start. Receivers grant the consumer prefetch (-q,
// as omq's --consumer-credits) as their credit window and accept each message.
import amqp from 'amqplib';
import { create_container, message as amqpMessage, type Connection, type Delivery, type EventContext, type Sender } from 'rhea';
import type { Amqp10Protocol, ProtocolScenario } from '../../schema/types';
import { connectUrl } from '../pool';
import { clientName, type DriverProducer, type DriverTarget, type ProtocolDriver, writeBacklog } from './driver';

/** Receiver credit where the scenario sets no prefetch (omq's --consumer-credits in script.sh). */
const DEFAULT_CREDIT = 1000;

export function amqp10Driver(spec: ProtocolScenario, t: DriverTarget): ProtocolDriver {
  const w = spec.workload;
  const p = spec.protocol as Amqp10Protocol;
  const address = `/queues/${encodeURIComponent(w.queue)}`;
  const confirms = w.confirm !== null;
  const conns: Connection[] = [];
  /** Set once the trial closes its links: a disconnect after that is not an error (nor on a
   *  connection this driver ended itself). */
  let closing = false;
  const ended = new WeakSet<Connection>();
  const open = (id: string, onError: (m: string) => void) =>
    new Promise<Connection>((resolve, reject) => {
      const container = create_container({ id: `${t.vhost}-${id}` });
      // rhea raises what no handler took (e.g. a transfer the broker had in flight when a receiver
      // detached) as the container's 'error' event, which would end this process without a listener.
      container.on('error', (ctx: EventContext) => {
        if (!closing && !ended.has(conn)) onError(`AMQP 1.0 client ${id}: ${String((ctx.error as Error | undefined)?.message ?? ctx.error ?? 'error')}`);
      });
      const conn = container.connect({ host: t.host, port: t.port, username: t.user, password: t.pass, hostname: `vhost:${t.vhost}`, reconnect: false, idle_time_out: 0 });
      conns.push(conn);
      conn.once('connection_open', () => resolve(conn));
      conn.once('connection_error', (ctx: EventContext) => reject(new Error(`AMQP 1.0 connection ${id} refused: ${ctx.connection.error ?? 'no reason given'}`)));
      conn.on('disconnected', (ctx: EventContext) => {
        if (closing || ended.has(conn)) return;
        const why = ctx.error ? String((ctx.error as Error).message ?? ctx.error) : 'the broker closed it';
        reject(new Error(`AMQP 1.0 connection ${id} lost: ${why}`));
        onError(`AMQP 1.0 connection ${id} lost: ${why}`);
      });
    });
  const linkOpen = <L extends { once(e: string, f: (ctx: EventContext) => void): unknown }>(link: L, what: string) =>
    new Promise<L>((resolve, reject) => {
      link.once(what === 'sender' ? 'sendable' : 'receiver_open', () => resolve(link));
      link.once(`${what}_error`, (ctx: EventContext) => reject(new Error(`AMQP 1.0 ${what} on ${address} refused: ${String(ctx[what as 'sender']?.error ?? 'no reason')}`)));
    });
  /** A sender whose send() waits for link credit, then resolves on the broker's `accepted` outcome
   *  (unsettled) or at once (settled). */
  const openSender = async (id: string, onError: (m: string) => void, unsettled: boolean): Promise<DriverProducer> => {
    const conn = await open(id, onError);
    const sender: Sender = await linkOpen(conn.open_sender({ target: { address }, snd_settle_mode: unsettled ? 0 : 1 }), 'sender');
    const pending = new Map<Delivery, { resolve(): void; reject(e: Error): void }>();
    const waiting: Array<() => void> = [];
    sender.on('accepted', (ctx: EventContext) => {
      pending.get(ctx.delivery!)?.resolve();
      pending.delete(ctx.delivery!);
    });
    for (const outcome of ['rejected', 'released', 'modified'] as const) {
      sender.on(outcome, (ctx: EventContext) => {
        pending.get(ctx.delivery!)?.reject(new Error(`the broker answered ${outcome} to a transfer`));
        pending.delete(ctx.delivery!);
      });
    }
    // Wakes as many waiters as the link has credit; each re-checks it, since a transfer without
    // credit would overflow rhea's outgoing buffer (2,048 deliveries), which throws.
    sender.on('sendable', () => {
      const credit = (sender as unknown as { credit?: number }).credit ?? 1;
      for (const wake of waiting.splice(0, Math.max(1, credit))) wake();
    });
    return {
      send: async (bodies) => {
        while (!sender.sendable()) await new Promise<void>((r) => waiting.push(r));
        await new Promise<void>((resolve, reject) => {
          const d = sender.send({ body: amqpMessage.data_section(bodies[0]), durable: w.persistent });
          if (unsettled) pending.set(d, { resolve, reject });
          else resolve();
        });
      },
      close: async () => {
        ended.add(conn);
        sender.close();
        conn.close();
      },
    };
  };

  return {
    client: clientName('rhea'),
    confirms,
    batch: 1,
    replayable: p.backlog > 0 ? Math.floor(p.backlog / Math.max(1, w.consumers)) : undefined,
    async prepare() {
      const conn = await amqp.connect(connectUrl(t.amqpUrl));
      try {
        const ch = await conn.createChannel();
        await ch.assertQueue(w.queue, { durable: true, autoDelete: false, exclusive: false, arguments: w.queueArgs });
      } finally {
        await conn.close().catch(() => undefined);
      }
      // The backlog is confirmed (unsettled transfers), so it is all in the queue before the trial.
      if (p.backlog > 0) await writeBacklog(await openSender('backlog', () => undefined, true), p.backlog, w.size);
    },
    producer: (i, onError) => openSender(`p${i}`, onError, confirms),
    async consumer(i, onMessage, onError) {
      const conn = await open(`c${i}`, onError);
      const receiver = conn.open_receiver({ source: { address }, credit_window: w.qos ?? DEFAULT_CREDIT, autoaccept: true });
      receiver.on('message', (ctx: EventContext) => {
        const body = ctx.message?.body as Buffer | { content?: Buffer } | undefined;
        const bytes = Buffer.isBuffer(body) ? body : body?.content;
        if (bytes) onMessage(bytes);
      });
      await linkOpen(receiver, 'receiver');
      return {
        close: async () => {
          ended.add(conn);
          conn.close();
        },
      };
    },
    async close() {
      closing = true;
      for (const c of conns.splice(0)) if (c.is_open()) c.close();
    },
  };
}
