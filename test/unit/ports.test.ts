// Port claims across processes (src/broker/ports.ts): a port another live process claimed is
// never handed out, a finished process's claim is taken over, and a release removes only this
// process's own claims. Real processes and real sockets; a narrow port range of its own.
import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { allocatePorts, claimDir, releasePorts } from '../../src/broker/ports';

const BASE = 29_900;
const LIMIT = 29_904;
const startOf = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[19];
const claimOf = (pid: number) => ({ host: os.hostname(), pid: String(pid), start: startOf(pid) });
const claimFile = (port: number) => join(claimDir(), String(port));
const sleeper = spawn('sleep', ['60']);
afterAll(() => sleeper.kill());

describe('port claims', () => {
  it("skips a port another live process claimed, takes over a finished one's, releases only its own", async () => {
    mkdirSync(claimDir(), { recursive: true });
    writeFileSync(claimFile(BASE), JSON.stringify(claimOf(sleeper.pid as number)));
    const done = spawn('true');
    const donePid = done.pid as number;
    const doneClaim = claimOf(donePid);
    await new Promise((r) => done.once('exit', r));
    writeFileSync(claimFile(BASE + 1), JSON.stringify(doneClaim));

    const ports = await allocatePorts(4, BASE, LIMIT + 1);
    expect(ports).not.toContain(BASE); // the sleeper still holds it
    expect([...ports].sort((a, b) => a - b)).toEqual([BASE + 1, BASE + 2, BASE + 3, BASE + 4]);
    for (const p of ports) expect(JSON.parse(readFileSync(claimFile(p), 'utf8')).pid).toBe(String(process.pid));
    await expect(allocatePorts(1, BASE, LIMIT + 1)).rejects.toThrow('only 0 of 1 free ports found in 29900-29904');

    releasePorts([...ports, BASE]);
    for (const p of ports) expect(existsSync(claimFile(p))).toBe(false);
    expect(existsSync(claimFile(BASE))).toBe(true); // not ours: left alone
    expect((await allocatePorts(4, BASE, LIMIT + 1)).sort((a, b) => a - b)).toEqual([BASE + 1, BASE + 2, BASE + 3, BASE + 4]);
    releasePorts([BASE + 1, BASE + 2, BASE + 3, BASE + 4]);
  });

  it('a port something listens on is skipped even with no claim on it', async () => {
    const srv = net.createServer();
    await new Promise<void>((r) => srv.listen({ port: BASE + 10 }, () => r()));
    try {
      const ports = await allocatePorts(2, BASE + 10, BASE + 13);
      expect(ports).not.toContain(BASE + 10);
      expect(ports).toHaveLength(2);
      releasePorts(ports);
    } finally {
      srv.close();
    }
  });
});
