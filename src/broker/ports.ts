// Host port allocation for brokers that share the host's network: finds ports that nothing
// listens on by binding them briefly (never connecting anywhere), and never hands out the same
// port twice within this process.
import net from 'node:net';

export const PORT_BASE = 25_000;
export const PORT_LIMIT = 30_000;

const handedOut = new Set<number>();

/** True when a listener can bind the port on all interfaces right now. */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen({ port, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** `count` free ports from [base, limit), starting at a random offset so that concurrent
 *  processes rarely race for the same ones. */
export async function allocatePorts(count: number, base = PORT_BASE, limit = PORT_LIMIT): Promise<number[]> {
  const span = limit - base;
  const start = Math.floor(Math.random() * span);
  const out: number[] = [];
  for (let i = 0; i < span && out.length < count; i++) {
    const port = base + ((start + i) % span);
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (await isPortFree(port)) out.push(port);
    else handedOut.delete(port);
  }
  if (out.length < count) {
    for (const p of out) handedOut.delete(p);
    throw new Error(`only ${out.length} of ${count} free ports found in ${base}-${limit - 1}`);
  }
  return out;
}

/** Lets ports be handed out again once the broker that used them is gone. */
export function releasePorts(ports: number[]): void {
  for (const p of ports) handedOut.delete(p);
}
