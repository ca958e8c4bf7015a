// Host port allocation for brokers that share the host's network: finds ports that nothing
// listens on by binding them briefly (never connecting anywhere), and never hands out the same
// port twice — within this process (a set) nor across processes on this machine (a claim file
// per port under the temp directory, naming the process that holds it as a container's owner
// label does; a claim whose owner is gone is taken over), so two runs booting at once cannot
// pick the same ports before either broker binds them.
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Owner, ownerState, selfOwner } from './cleanup';

export const PORT_BASE = 25_000;
export const PORT_LIMIT = 30_000;

const handedOut = new Set<number>();

/** Where this machine's port claims live: one file per claimed port, holding its owner (host, pid, start time, boot id). */
export function claimDir(): string {
  return join(tmpdir(), 'rabbitmq-perf-gate-ports');
}

function holderOf(file: string): Partial<Owner> | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Partial<Owner>;
  } catch {
    return undefined; // released meanwhile, or still being written
  }
}

/** Claims `port` for this process across the machine; false when a live process holds it. */
function claim(port: number): boolean {
  const file = join(claimDir(), String(port));
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, JSON.stringify(selfOwner()), { flag: 'wx' });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return true; // no claim store: the in-process set and the bind probe still apply
      const holder = holderOf(file);
      if (!holder || ownerState(holder) !== 'gone') return false; // held, or being written this instant
      try {
        unlinkSync(file); // a finished process's claim
      } catch {
        // another process took it over first; the next write decides
      }
    }
  }
  return false;
}

function unclaim(port: number): void {
  const file = join(claimDir(), String(port));
  if (holderOf(file)?.pid !== selfOwner().pid) return;
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}

/** True when a listener can bind the port on all interfaces right now. */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen({ port, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** `count` free ports from [base, limit), starting at a random offset, each claimed for this
 *  process until `releasePorts`. */
export async function allocatePorts(count: number, base = PORT_BASE, limit = PORT_LIMIT): Promise<number[]> {
  const span = limit - base;
  const start = Math.floor(Math.random() * span);
  try {
    mkdirSync(claimDir(), { recursive: true });
  } catch {
    // no claim store: each claim below falls back to the in-process set and the bind probe
  }
  const out: number[] = [];
  for (let i = 0; i < span && out.length < count; i++) {
    const port = base + ((start + i) % span);
    if (handedOut.has(port) || !claim(port)) continue;
    handedOut.add(port);
    if (await isPortFree(port)) out.push(port);
    else release(port);
  }
  if (out.length < count) {
    for (const p of out) release(p);
    throw new Error(`only ${out.length} of ${count} free ports found in ${base}-${limit - 1}`);
  }
  return out;
}

function release(port: number): void {
  handedOut.delete(port);
  unclaim(port);
}

/** Lets ports be handed out again once the broker that used them is gone. */
export function releasePorts(ports: number[]): void {
  for (const p of ports) release(p);
}
