// Profiles a container's RabbitMQ node with Linux perf, the RabbitMQ team's documented way: the
// node runs with `+JPperf true` (the JIT writes /tmp/perf-<pid>.map and keeps frame pointers),
// `perf record -g` samples its beam process from the host, and `perf script` resolves the Erlang
// functions from the map file, copied from the container to where perf looks for it (the host's
// /tmp/perf-<host pid>.map). What is missing (no perf, no permission) is said, never guessed.
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { foldPerfScript, type Folded } from '../metrics/flame';
import * as cli from './docker-cli';

/** Samples per second: enough for a few-second window, light on a 2-core runner. */
const FREQUENCY = 499;

const execFileP = promisify(execFile);

/** Runs a command; its exit code and output, never a throw. */
async function run(cmd: string, args: string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return execFileP(cmd, args, { timeout: timeoutMs, maxBuffer: 512 * 1024 * 1024, encoding: 'utf8' })
    .then(({ stdout, stderr }) => ({ code: 0, stdout, stderr }))
    .catch((e: { code?: number | string; stdout?: string; stderr?: string }) => ({ code: typeof e.code === 'number' ? e.code : null, stdout: e.stdout ?? '', stderr: e.stderr ?? String(e.code) }));
}

/** Why this runner cannot profile (undefined: it can). */
export async function perfUnavailable(): Promise<string | undefined> {
  const v = await run('perf', ['--version'], 10_000);
  if (v.code !== 0) return "perf is not installed on this runner (Debian's and Ubuntu's package: linux-perf / linux-tools)";
  const paranoid = Number((await readFile('/proc/sys/kernel/perf_event_paranoid', 'utf8').catch(() => '2')).trim());
  if (paranoid > 1 && process.getuid?.() !== 0) return `perf may not sample other processes here (kernel.perf_event_paranoid = ${paranoid}, not root): run as root or set it to 1`;
  return undefined;
}

/** The host pid of the container's beam.smp (a descendant of the container's first process). */
async function beamPid(container: string): Promise<number> {
  const root = Number((await cli.docker(['inspect', '--format', '{{.State.Pid}}', container])).stdout.trim());
  const parent = new Map<number, number>();
  const comm = new Map<number, string>();
  for (const d of await readdir('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const stat = await readFile(`/proc/${d}/stat`, 'utf8').catch(() => '');
    const m = /^(\d+) \((.*)\) \S+ (\d+)/.exec(stat);
    if (m) {
      parent.set(Number(m[1]), Number(m[3]));
      comm.set(Number(m[1]), m[2]);
    }
  }
  const descends = (pid: number) => {
    for (let p: number | undefined = pid; p && p > 1; p = parent.get(p)) if (p === root) return true;
    return false;
  };
  const beam = [...comm].find(([pid, c]) => c === 'beam.smp' && descends(pid));
  if (!beam) throw new Error(`no beam.smp process in container ${container}`);
  return beam[0];
}

/** One recording of a node: started as a window opens, stopped as it closes. */
export interface ProfileSession {
  start(): void;
  /** Stops the recording and returns the folded stacks (scheduler threads merged). */
  stop(): Promise<Folded>;
}

/** A perf recording of the container's node; `start` resolves the process as the window opens. */
export function profileContainer(container: string): ProfileSession {
  let recording: Promise<{ pid: number; dir: string; child: ReturnType<typeof spawn>; done: Promise<number | null> }> | undefined;
  return {
    start() {
      recording = (async () => {
        const pid = await beamPid(container);
        const dir = await mkdtemp(join(tmpdir(), 'perf-gate-profile-'));
        const child = spawn('perf', ['record', '-F', String(FREQUENCY), '-g', '-p', String(pid), '-o', join(dir, 'perf.data')], { stdio: 'ignore' });
        const done = new Promise<number | null>((resolve) => {
          child.on('close', resolve);
          child.on('error', () => resolve(null));
        });
        return { pid, dir, child, done };
      })();
      recording.catch(() => undefined);
    },
    async stop() {
      if (!recording) throw new Error('the window never opened');
      const { pid, dir, child, done } = await recording;
      child.kill('SIGINT');
      const code = await Promise.race([done, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 15_000))]);
      if (code === 'timeout') child.kill('SIGKILL');
      // The JIT's symbol map, where perf looks for it: /tmp/perf-<pid as perf saw it>.map.
      const nspid =
        (await readFile(`/proc/${pid}/status`, 'utf8'))
          .match(/^NSpid:\s+(.*)$/m)?.[1]
          .trim()
          .split(/\s+/)
          .at(-1) ?? String(pid);
      const map = `/tmp/perf-${pid}.map`;
      const copied =
        nspid !== String(pid) &&
        (await copyFile(`/proc/${pid}/root/tmp/perf-${nspid}.map`, map).then(
          () => true,
          () => false,
        ));
      try {
        const r = await run('perf', ['script', '-F', 'comm,tid,ip,sym', '-i', join(dir, 'perf.data')], 120_000);
        if (r.code !== 0) throw new Error(`perf script failed: ${r.stderr.trim().split('\n').at(-1)}`);
        return foldPerfScript(r.stdout);
      } finally {
        if (copied) await rm(map, { force: true });
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}
