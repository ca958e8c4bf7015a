// The machine around a run (src/metrics/machine.ts, src/report/machine.ts): /proc parsing, the
// docker cgroup of a process and of a container (v1 and v2 layouts), what counts as this run's
// own load and what as other load, the summary's busy rule and its sentence — and a real busy
// process on this machine, seen and named.
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { containerCpu, containerOfCgroup, type CpuSnapshot, cpuSnapshot, loadBetween, parseProcStat, summariseMachine } from '../../src/metrics/machine';
import { machineText } from '../../src/report/machine';
import type { MachineLoad } from '../../src/schema/types';

const tmp = mkdtempSync(join(tmpdir(), 'perf-gate-machine-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const ID = (c: string) => c.repeat(64);

describe('parsing', () => {
  it('/proc/<pid>/stat: state, ppid, CPU ticks, start time, and a command name with spaces and parentheses', () => {
    const own = parseProcStat(readFileSync('/proc/self/stat', 'utf8'))!;
    expect(own.ppid).toBe(process.ppid); // "self" is the reading process: this one
    expect(own.state).toBe('R');
    expect(own.start).toMatch(/^\d+$/);
    const odd = parseProcStat('42 (a) b (c) S 7 42 42 0 -1 4194304 1 0 0 0 150 25 0 0 20 0 1 0 9999 0 0')!;
    expect(odd).toEqual({ state: 'S', ppid: 7, ticks: 175, start: '9999', comm: 'a) b (c' });
    expect(parseProcStat('garbage')).toBeUndefined();
  });

  it('the docker container of a process, from /proc/<pid>/cgroup in every layout; none for a host process', () => {
    expect(containerOfCgroup(`12:cpu,cpuacct:/docker/${ID('a')}\n0::/`)).toBe(ID('a'));
    expect(containerOfCgroup(`0::/system.slice/docker-${ID('b')}.scope`)).toBe(ID('b'));
    expect(containerOfCgroup(`0::/docker/${ID('c')}`)).toBe(ID('c'));
    expect(containerOfCgroup('0::/user.slice/user-1000.slice/session-2.scope\n4:memory:/process_api/x')).toBeUndefined();
  });

  it("every container's cgroup CPU time (µs), v1 (ns) and v2 (usage_usec), systemd and cgroupfs drivers", () => {
    const root = join(tmp, 'cg');
    mkdirSync(join(root, 'cpuacct/docker', ID('a')), { recursive: true });
    writeFileSync(join(root, 'cpuacct/docker', ID('a'), 'cpuacct.usage'), '2500000000\n');
    mkdirSync(join(root, 'system.slice', `docker-${ID('b')}.scope`), { recursive: true });
    writeFileSync(join(root, 'system.slice', `docker-${ID('b')}.scope`, 'cpu.stat'), 'usage_usec 1200\nuser_usec 1000\n');
    mkdirSync(join(root, 'system.slice', 'ssh.service'), { recursive: true });
    mkdirSync(join(root, 'docker', ID('c')), { recursive: true });
    writeFileSync(join(root, 'docker', ID('c'), 'cpu.stat'), 'usage_usec 7\n');
    expect(containerCpu(root)).toEqual(
      new Map([
        [ID('a'), 2_500_000],
        [ID('b'), 1200],
        [ID('c'), 7],
      ]),
    );
    expect(containerCpu(join(tmp, 'nothing'))).toEqual(new Map());
  });
});

/** A snapshot at `at` seconds, with /proc/stat ticks busy/idle and the given processes and containers. */
function snap(at: number, busy: number, idle: number, procs: Array<[number, number, string, string?, number?]>, containers: Array<[string, number]> = [], self = 0): CpuSnapshot {
  return {
    at: at * 1000,
    total: busy + idle,
    idle,
    iowait: 0,
    steal: 0,
    self,
    procs: new Map(procs.map(([pid, ticks, comm, start, ppid]) => [pid, { ticks, comm, start: start ?? '1', ppid: ppid ?? 1 }])),
    containers: new Map(containers),
  };
}

describe('loadBetween: other load, this run set apart', () => {
  const cgroups: Record<number, string> = { 100: `0::/docker/${ID('a')}`, 200: `0::/docker/${ID('b')}` };
  const cgroupOf = (pid: number) => cgroups[pid] ?? '0::/';

  it("2 cores: the machine busy 1.5; this process 0.5 and this run's container 0.4 set apart; the rest named", () => {
    // 10 s, 2 cores: 2000 ticks; 1500 busy.
    const a = snap(
      0,
      0,
      0,
      [
        [100, 0, 'beam.smp'],
        [200, 0, 'beam.smp'],
        [300, 0, 'esbuild'],
        [301, 0, 'esbuild'],
        [process.pid, 0, 'node'],
        [400, 0, 'sleep', '1'],
      ],
      [],
      0,
    );
    const b = snap(
      10,
      1500,
      500,
      [
        [100, 400, 'beam.smp'],
        [200, 300, 'beam.smp'],
        [300, 100, 'esbuild'],
        [301, 100, 'esbuild'],
        [process.pid, 500, 'node'],
        [400, 50, 'sleep', '2'],
        [500, 30, 'sh', '9', process.pid],
      ],
      [],
      5_000_000,
    );
    const l = loadBetween(a, b, new Set([ID('a')]), { cores: 2, cgroupOf });
    expect(l).toMatchObject({ seconds: 10, busyCores: 1.5, otherCores: 0.6, steal: 0, iowait: 0 });
    // pid 400 was another process with the same pid (another start time): all of its 50 ticks count; a child of ours (500) does not.
    expect(l.top).toEqual([
      { kind: 'container', name: ID('b').slice(0, 12), cores: 0.3 },
      { kind: 'process', name: 'esbuild', count: 2, cores: 0.2 },
      { kind: 'process', name: 'sleep', count: 1, cores: 0.05 },
    ]);
  });

  it('containers by their cgroups where those are readable (a finished docker exec counts), their processes then skipped', () => {
    const a = snap(
      0,
      0,
      0,
      [
        [100, 0, 'beam.smp'],
        [200, 0, 'beam.smp'],
      ],
      [
        [ID('a'), 0],
        [ID('b'), 1_000_000],
      ],
    );
    const b = snap(
      10,
      1000,
      1000,
      [
        [100, 100, 'beam.smp'],
        [200, 100, 'beam.smp'],
      ],
      [
        [ID('a'), 4_000_000],
        [ID('b'), 9_000_000],
        [ID('c'), 2_000_000],
      ],
    );
    const l = loadBetween(a, b, new Set([ID('a')]), { cores: 2, cgroupOf });
    expect(l.otherCores).toBe(0.6); // 1.0 busy − 0.4 of ours
    expect(l.top).toEqual([
      { kind: 'container', name: ID('b').slice(0, 12), cores: 0.8 },
      { kind: 'container', name: ID('c').slice(0, 12), cores: 0.2 },
    ]);
  });

  it("a real busy process on this machine is seen and named (not a child of this one, which counts as the generator's)", async () => {
    // Detached from this process: the loop's parent shell exits at once.
    const pid = Number(execFileSync('sh', ['-c', '(while :; do :; done) >/dev/null 2>&1 & echo $!'], { encoding: 'utf8' }).trim());
    try {
      await new Promise((r) => setTimeout(r, 200));
      const a = cpuSnapshot()!;
      await new Promise((r) => setTimeout(r, 2500));
      const b = cpuSnapshot()!;
      const l = loadBetween(a, b);
      const sh = l.top?.find((u) => u.kind === 'process' && u.name === 'sh');
      expect(sh?.cores, JSON.stringify(l)).toBeGreaterThan(0.1); // one core's loop, on a shared (possibly very busy) machine
      expect(l.busyCores).toBeGreaterThanOrEqual(sh!.cores - 0.1);
      expect(l.otherCores).toBeGreaterThan(0.1);
    } finally {
      process.kill(pid, 'SIGKILL');
    }
  });
});

describe('the summary and its sentence', () => {
  const load = (other: number, top?: MachineLoad['top']): MachineLoad => ({ seconds: 4, busyCores: other + 1, otherCores: other, steal: 0, iowait: 0, ...(top ? { top } : {}) });

  it('quiet: little other load at the start and in most trials', () => {
    const m = summariseMachine({ start: load(0.05), trials: [load(0.02), load(0.5), load(0.01), load(0.03)], cores: 2 });
    expect(m).toMatchObject({ busy: false, busyAbove: 0.2, trials: { median: 0.03, max: 0.5, busy: 1, of: 4 } });
    expect(machineText({ machine: m })).toBe(
      "Machine load: quiet — other containers and processes than this run's used 0.05 of 2 cores at the start and 0.03 in the median trial (up to 0.50; 1 of 4 trials at 0.20 or more).",
    );
  });

  it('busy: at the start, or in more than a quarter of the trials; the largest users over the trials named, other runs counted', () => {
    const users = new Map([
      ['c', { kind: 'container' as const, name: 'rabbitmq-perf-gate-x-1', cores: 0, coreSeconds: 8 }],
      ['p', { kind: 'process' as const, name: 'node', count: 3, cores: 0, coreSeconds: 2 }],
    ]);
    const m = summariseMachine({
      start: { ...load(0.1), cpuPressure: 0.3 },
      trials: [load(0.9), load(0.8), load(0.02), load(0.01)],
      users,
      cores: 2,
      otherRuns: ['rabbitmq-perf-gate-x-1 (run r, pid 9, running)'],
    });
    expect(m.busy).toBe(true);
    expect(m.trials!.top).toEqual([
      { kind: 'container', name: 'rabbitmq-perf-gate-x-1', cores: 0.5 },
      { kind: 'process', name: 'node', count: 3, cores: 0.13 },
    ]);
    expect(machineText({ machine: m })).toBe(
      "The machine was busy: other containers and processes than this run's used 0.10 of 2 cores at the start and 0.41 in the median trial (up to 0.90; 2 of 4 trials at 0.20 or more)" +
        ' — most by container rabbitmq-perf-gate-x-1 0.50, node ×3 0.13; tasks waited for a CPU 30 % of the start sample; 1 broker container(s) of other runs were running.' +
        " Differences in this run may be the machine's noise rather than the broker's.",
    );
    expect(summariseMachine({ start: load(0.3), trials: [], cores: 2 }).busy).toBe(true);
    expect(machineText({})).toBeUndefined();
  });
});
