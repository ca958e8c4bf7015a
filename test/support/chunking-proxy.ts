// A loopback TCP proxy that fragments: every chunk, in both directions, is re-sent in random
// 1–64 byte pieces, with a small random pause (a timer of 0–2 ms) before about one piece in
// eight, and the proxy's own writes respect back-pressure (pause the source while the sink is
// full). So the generator's frame tap sees frames split at arbitrary bytes and reads that stop
// mid-frame, the broker sees acks and publishes arrive in slivers, as on a slow or TLS-wrapped
// link. freeze() stops forwarding (bytes are held, sockets stay open): a broker that goes silent.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { rng } from '../../src/plan/plan';

export interface ChunkingProxy {
  /** The proxy's port on 127.0.0.1. */
  port: number;
  /** `url` (amqp://user:pass@host:port/vhost) rewritten to go through the proxy. */
  via(url: string): string;
  /** Bytes forwarded so far, and pieces written (to check that fragmentation happened). */
  stats: { up: number; down: number; pieces: number; connections: number };
  /** With `record`: every connection's broker → client bytes, as received from the broker. */
  captured: Buffer[][];
  freeze(): void;
  close(): Promise<void>;
}

export async function startChunkingProxy(target: { host: string; port: number }, seed = 1, record = false): Promise<ChunkingProxy> {
  const rnd = rng(seed); // deterministic, so a failing run can be replayed with its seed
  const sockets = new Set<Socket>();
  let frozen = false;
  const stats = { up: 0, down: 0, pieces: 0, connections: 0 };
  const captured: Buffer[][] = [];

  // One direction: queue what `from` sends, write it to `to` piece by piece.
  const pipe = (from: Socket, to: Socket, dir: 'up' | 'down') => {
    const queue: Buffer[] = [];
    let pumping = false;
    const pump = async () => {
      if (pumping) return;
      pumping = true;
      while (queue.length && !frozen && !to.destroyed) {
        const head = queue[0];
        const n = Math.min(head.length, 1 + Math.floor(rnd() * 64));
        const piece = head.subarray(0, n);
        if (n === head.length) queue.shift();
        else queue[0] = head.subarray(n);
        stats[dir] += n;
        stats.pieces++;
        const ok = to.write(piece);
        if (!ok)
          await new Promise<void>((r) => {
            to.once('drain', r);
            to.once('close', r);
          });
        else if (rnd() < 0.125) await new Promise((r) => setTimeout(r, Math.floor(rnd() * 3)));
        else await new Promise((r) => setImmediate(r));
      }
      pumping = false;
      if (queue.length === 0) from.resume();
    };
    from.on('data', (chunk: Buffer) => {
      queue.push(chunk);
      if (queue.length > 16) from.pause(); // back-pressure towards the sender
      void pump();
    });
    from.on('end', () => to.end());
  };

  const server: Server = createServer((client) => {
    stats.connections++;
    const upstream = connect(target.port, target.host);
    if (record) {
      const chunks: Buffer[] = [];
      captured.push(chunks);
      upstream.on('data', (c: Buffer) => chunks.push(Buffer.from(c)));
    }
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.setNoDelay(true);
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    pipe(client, upstream, 'up');
    pipe(upstream, client, 'down');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    stats,
    captured,
    via: (url) => {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    freeze: () => {
      frozen = true;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
