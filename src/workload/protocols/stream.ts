// The stream protocol driver (rabbitmq-stream-js-client), after stream-perf-test: one client
// connection per producer and per consumer, publisher confirms, sub-entry batching
// (--sub-entry-size), consumers starting at `next` or `first` (--offset), and stream filtering
// (--filter-value-set / --filter-values: producers tag each message with one of N values, consumer
// j asks for value j mod N). The stream is declared the PerfTest way (x-queue-type: stream over
// AMQP 0-9-1) with the scenario's arguments; a backlog is written before clients start.
import { connect, Offset, type Client, type Publisher } from 'rabbitmq-stream-js-client';
import amqp from 'amqplib';
import type { ProtocolScenario, StreamProtocol } from '../../schema/types';
import { connectUrl } from '../pool';
import { guardStreamClient } from './stream-compat';
import { clientName, type DriverProducer, type DriverTarget, type ProtocolDriver, writeBacklog } from './driver';

const CLIENT = 'rabbitmq-stream-js-client';

type Pending = { resolve(): void; reject(e: Error): void };

/** How long opening a stream connection may take (the client itself waits forever on some refusals). */
const CONNECT_MS = 15_000;

export function streamDriver(spec: ProtocolScenario, t: DriverTarget): ProtocolDriver {
  guardStreamClient();
  const p = spec.protocol as StreamProtocol;
  const stream = spec.workload.queue;
  const clients: Client[] = [];
  const open = async (): Promise<Client> => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no stream connection to ${t.host}:${t.port} within ${CONNECT_MS / 1000} s`)), CONNECT_MS);
    });
    const opening = connect({ hostname: t.host, port: t.port, username: t.user, password: t.pass, vhost: t.vhost, heartbeat: 0, socketTimeout: CONNECT_MS });
    opening.then(
      (c) => clients.push(c),
      () => undefined,
    ); // a late connection is still closed with the others
    try {
      return await Promise.race([opening, late]);
    } finally {
      clearTimeout(timer);
    }
  };
  const filterOf = (seq: number) => `v${seq % p.filterValues}`;

  /** A publisher whose send() resolves on the broker's confirm of that publishing id (or, for a
   *  sub-entry, of the next sub-entry in order: they all carry the publisher's current id). */
  const publisher = async (onError: (m: string) => void): Promise<DriverProducer> => {
    const client = await open();
    const pub: Publisher = await client.declarePublisher({ stream }, p.filterValues > 0 ? (m) => m.applicationProperties?.f as string | undefined : undefined);
    const byId = new Map<bigint, Pending>();
    const subEntries: Pending[] = [];
    let nextId = 0n;
    pub.on('publish_confirm', (err, ids) => {
      for (const id of ids) {
        const pending = p.subEntrySize > 1 ? subEntries.shift() : byId.get(id);
        byId.delete(id);
        if (!pending) continue;
        if (err === null) pending.resolve();
        else pending.reject(new Error(`the broker refused publishing id ${id} (stream error code ${err})`));
      }
    });
    return {
      send: (bodies) =>
        new Promise<void>((resolve, reject) => {
          if (p.subEntrySize > 1) {
            subEntries.push({ resolve, reject });
            pub.sendSubEntries(bodies.map((content) => ({ content }))).catch((e: Error) => {
              onError(`stream sub-entry publish failed: ${e.message}`);
              reject(e);
            });
            return;
          }
          const id = ++nextId;
          byId.set(id, { resolve, reject });
          const seq = bodies[0].readUInt32BE(0);
          const opts = p.filterValues > 0 ? { applicationProperties: { f: filterOf(seq) } } : {};
          pub.basicSend(id, bodies[0], opts).catch((e: Error) => {
            byId.delete(id);
            onError(`stream publish failed: ${e.message}`);
            reject(e);
          });
        }),
      close: () => pub.close(),
    };
  };

  return {
    client: clientName(CLIENT),
    confirms: true,
    batch: p.subEntrySize,
    replayable: p.offset === 'first' ? p.backlog : undefined,
    async prepare() {
      const conn = await amqp.connect(connectUrl(t.amqpUrl));
      try {
        const ch = await conn.createChannel();
        await ch.assertQueue(stream, { durable: true, autoDelete: false, exclusive: false, arguments: { ...spec.workload.queueArgs, 'x-queue-type': 'stream' } });
      } finally {
        await conn.close().catch(() => undefined);
      }
      if (p.backlog > 0) await writeBacklog(await publisher(() => undefined), p.backlog, spec.workload.size);
    },
    producer: (_i, onError) => publisher(onError),
    async consumer(i, onMessage) {
      const client = await open();
      const value = p.filterValues > 0 ? filterOf(i) : undefined;
      const consumer = await client.declareConsumer(
        {
          stream,
          offset: p.offset === 'first' ? Offset.first() : Offset.next(),
          ...(value ? { filter: { values: [value], postFilterFunc: (m) => m.applicationProperties?.f === value, matchUnfiltered: false } } : {}),
        },
        (m) => onMessage(m.content),
      );
      return { close: () => consumer.close() };
    },
    async close() {
      await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
    },
  };
}
