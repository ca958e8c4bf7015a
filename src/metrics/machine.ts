// The machine around a run: how busy its CPUs were and with what, so that a noisy run can be told
// from a regression. A snapshot reads /proc/stat (every CPU), /proc/pressure/cpu (where the kernel
// has PSI), this process's CPU time, every docker container's cgroup CPU accounting (v1 or v2, so
// that a short `docker exec` in a container counts too) and every process's /proc/<pid>/stat;
// between two snapshots, what neither this process (the load generator) nor this run's broker
// containers used is the "other" load, attributed to the other containers and to the processes
// outside containers (by the docker cgroup in /proc/<pid>/cgroup) that used the most. The pipeline takes snapshots at a run's start and at each
// trial's edges and summarises them (summariseMachine); nothing here talks to Docker.
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import type { LoadUser, MachineLoad, MachineSummary } from '../schema/types';

/** Linux's USER_HZ: the unit of /proc/<pid>/stat's CPU times on every mainstream architecture. */
const TICKS_PER_SECOND = 100;
/** Other load of at least this share of the machine's cores makes it a busy machine. */
export const BUSY_SHARE = 0.1;
/** Users below this many cores are not named. */
const NAMED_ABOVE = 0.02;

interface ProcSample {
  ticks: number;
  start: string;
  comm: string;
  ppid: number;
}

export interface CpuSnapshot {
  /** performance.now(), ms. */
  at: number;
  /** /proc/stat's aggregate line: all ticks, and idle, iowait and steal ticks. */
  total: number;
  idle: number;
  iowait: number;
  steal: number;
  /** /proc/pressure/cpu "some" total, µs. */
  pressureUs?: number;
  /** This process's CPU time (user + system, every thread), µs. */
  self: number;
  procs: Map<number, ProcSample>;
  /** Docker container ID → its cgroup's CPU time, µs (empty where the layout is not known). */
  containers: Map<string, number>;
}

/** Where docker puts its containers' CPU accounting: cgroup v1 (cpuacct.usage, ns) or v2 (cpu.stat
 *  usage_usec), with the cgroupfs or systemd driver. */
const CGROUP_LAYOUTS = [
  { dir: 'cpuacct/docker', file: 'cpuacct.usage', v2: false },
  { dir: 'cpu,cpuacct/docker', file: 'cpuacct.usage', v2: false },
  { dir: 'docker', file: 'cpu.stat', v2: true },
  { dir: 'system.slice', file: 'cpu.stat', v2: true },
];

/** Every container's cgroup CPU time in µs, by container ID. */
export function containerCpu(cgroup = '/sys/fs/cgroup'): Map<string, number> {
  const out = new Map<string, number>();
  for (const l of CGROUP_LAYOUTS) {
    let entries: string[];
    try {
      entries = readdirSync(`${cgroup}/${l.dir}`);
    } catch {
      continue;
    }
    for (const e of entries) {
      const id = /^(?:docker-)?([0-9a-f]{64})(?:\.scope)?$/.exec(e)?.[1];
      if (!id || out.has(id)) continue;
      const text = read(`${cgroup}/${l.dir}/${e}/${l.file}`);
      const v = text === undefined ? NaN : l.v2 ? Number(/^usage_usec (\d+)/m.exec(text)?.[1]) : Number(text.trim()) / 1000;
      if (Number.isFinite(v)) out.set(id, v);
    }
  }
  return out;
}

/** /proc/<pid>/stat's fields after the command name: [state, ppid, …]; utime is index 11, stime 12, starttime 19. */
export function parseProcStat(text: string): { state: string; ppid: number; ticks: number; start: string; comm: string } | undefined {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return undefined;
  const f = text
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  if (f.length < 20) return undefined;
  return { state: f[0], ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]), start: f[19], comm: text.slice(open + 1, close) };
}

/** The docker container a process runs in, from the text of its /proc/<pid>/cgroup (v1, v2,
 *  cgroupfs or systemd driver), or undefined. */
export function containerOfCgroup(text: string): string | undefined {
  return /(?:docker[-/]|\/docker\/)([0-9a-f]{64})/.exec(text)?.[1];
}

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** A snapshot of the machine's CPU counters; undefined where /proc/stat cannot be read (not Linux). */
export function cpuSnapshot(proc = '/proc', cgroup = '/sys/fs/cgroup'): CpuSnapshot | undefined {
  const stat = read(`${proc}/stat`);
  const cpu = stat?.split('\n')[0];
  if (!cpu?.startsWith('cpu ')) return undefined;
  // user nice system idle iowait irq softirq steal (guest time is already in user)
  const t = cpu.trim().split(/\s+/).slice(1, 9).map(Number);
  const pressure = read(`${proc}/pressure/cpu`);
  const some = pressure ? /^some .*\btotal=(\d+)/m.exec(pressure)?.[1] : undefined;
  const procs = new Map<number, ProcSample>();
  let pids: string[] = [];
  try {
    pids = readdirSync(proc).filter((d) => /^\d+$/.test(d));
  } catch {
    // no per-process view: the machine's figures still stand
  }
  for (const pid of pids) {
    const p = parseProcStat(read(`${proc}/${pid}/stat`) ?? '');
    if (p) procs.set(Number(pid), p);
  }
  const self = process.cpuUsage();
  return {
    at: performance.now(),
    total: t.reduce((a, b) => a + b, 0),
    idle: t[3],
    iowait: t[4],
    steal: t[7],
    ...(some !== undefined ? { pressureUs: Number(some) } : {}),
    self: self.user + self.system,
    procs,
    containers: containerCpu(cgroup),
  };
}

const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;

/**
 * The machine's load between two snapshots: busy cores, the part that was neither this process
 * (nor a child of it) nor a container in `ours`, and the other load's largest users.
 * `cgroupOf(pid)` reads /proc/<pid>/cgroup (injected for tests).
 */
export function loadBetween(
  a: CpuSnapshot,
  b: CpuSnapshot,
  ours: ReadonlySet<string> = new Set(),
  o: { cores?: number; proc?: string; cgroupOf?: (pid: number) => string | undefined } = {},
): MachineLoad {
  const seconds = Math.max(1e-3, (b.at - a.at) / 1000);
  const cores = o.cores ?? os.availableParallelism();
  const dTotal = Math.max(1, b.total - a.total);
  const busyShare = Math.max(0, 1 - (b.idle - a.idle + b.iowait - a.iowait) / dTotal);
  const busyCores = busyShare * cores;
  const selfCores = Math.max(0, b.self - a.self) / 1e6 / seconds;
  const cgroupOf = o.cgroupOf ?? ((pid: number) => read(`${o.proc ?? '/proc'}/${pid}/cgroup`));
  let oursCores = 0;
  const users = new Map<string, LoadUser>();
  const add = (container: string | undefined, comm: string, used: number) => {
    if (container && ours.has(container)) {
      oursCores += used;
      return;
    }
    const key = container ? `c:${container}` : `p:${comm}`;
    const u = users.get(key) ?? ({ kind: container ? 'container' : 'process', name: container ? container.slice(0, 12) : comm, cores: 0, ...(container ? {} : { count: 0 }) } as LoadUser);
    u.cores += used;
    if (u.count !== undefined) u.count++;
    users.set(key, u);
  };
  // Containers by their cgroups where they can be read (exited `docker exec`s included), else by their processes.
  const byCgroup = b.containers.size > 0;
  if (byCgroup) for (const [id, us] of b.containers) add(id, '', Math.max(0, us - (a.containers.get(id) ?? 0)) / 1e6 / seconds);
  for (const [pid, p] of b.procs) {
    if (pid === process.pid || p.ppid === process.pid) continue; // the generator (counted above) and its docker calls
    const before = a.procs.get(pid);
    const ticks = before && before.start === p.start ? p.ticks - before.ticks : p.ticks; // a process started in between: all of it
    if (ticks <= 0) continue;
    const container = containerOfCgroup(cgroupOf(pid) ?? '');
    if (container && byCgroup) continue;
    add(container, p.comm, ticks / TICKS_PER_SECOND / seconds);
  }
  const otherCores = Math.max(0, busyCores - selfCores - oursCores);
  const top = [...users.values()]
    .filter((u) => u.cores >= NAMED_ABOVE)
    .sort((x, y) => y.cores - x.cores)
    .slice(0, 5)
    .map((u) => ({ ...u, cores: round(Math.min(u.cores, cores), 2) }));
  return {
    seconds: round(seconds, 1),
    busyCores: round(busyCores, 2),
    otherCores: round(otherCores, 2),
    steal: round((b.steal - a.steal) / dTotal, 4),
    iowait: round((b.iowait - a.iowait) / dTotal, 4),
    ...(a.pressureUs !== undefined && b.pressureUs !== undefined ? { cpuPressure: round(Math.min(1, (b.pressureUs - a.pressureUs) / 1e6 / seconds), 3) } : {}),
    ...(top.length ? { top } : {}),
  };
}

/** Why a same-run pair measures the machine rather than the brokers, or undefined: the other load
 *  during its two trials differed by a tenth of the cores or more (BUSY_SHARE). Steady other load
 *  on both trials cancels in the pair's ratio and is no reason. Measured on real A/As
 *  (bench/pair-spread.mjs, docs/statistics.md): dropping such pairs cut the pair spread of
 *  one_one_one from 19.6 % to 9.5 % on a disturbed run; a quiet run has none. */
/** How a pair the machine disturbed is named in its trials' invalid reason (pairDisturbance). */
export const DISTURBED_PAIR = "the machine's other load differed within the pair";
/** Whether a trial was left out only because the machine disturbed its pair. */
export const disturbedPair = (invalidReason: string | undefined): boolean => (invalidReason ?? '').startsWith(DISTURBED_PAIR);

export function pairDisturbance(a: MachineLoad | undefined, b: MachineLoad | undefined, cores = os.availableParallelism()): string | undefined {
  if (!a || !b) return undefined;
  const limit = round(BUSY_SHARE * cores, 2);
  if (Math.abs(a.otherCores - b.otherCores) < limit) return undefined;
  return `${DISTURBED_PAIR} (${a.otherCores} and ${b.otherCores} of ${cores} cores; ${limit} or more apart), so the pair would measure the machine, not the brokers`;
}

/** Adds an interval's named users to a running total of core-seconds. */
export function accumulate(total: Map<string, LoadUser & { coreSeconds: number }>, l: MachineLoad): void {
  for (const u of l.top ?? []) {
    const key = `${u.kind}:${u.name}`;
    const t = total.get(key) ?? { ...u, cores: 0, coreSeconds: 0 };
    t.coreSeconds += u.cores * l.seconds;
    if (u.count !== undefined) t.count = Math.max(t.count ?? 0, u.count);
    total.set(key, t);
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : 0;
};

/** The run's machine summary: its start, its trials' other load, whether the machine was busy
 *  (other load of a tenth of the cores or more at the start, or in more than a quarter of the
 *  trials), and the largest other users over the trials (core-seconds over trial seconds). */
export function summariseMachine(o: {
  start?: MachineLoad;
  trials: MachineLoad[];
  users?: Map<string, LoadUser & { coreSeconds: number }>;
  cores?: number;
  otherRuns?: string[];
  removed?: string[];
}): MachineSummary {
  const cores = o.cores ?? os.availableParallelism();
  const busyAbove = round(BUSY_SHARE * cores, 2);
  const others = o.trials.map((t) => t.otherCores);
  const busyTrials = others.filter((x) => x >= busyAbove).length;
  const seconds = o.trials.reduce((s, t) => s + t.seconds, 0);
  const top = [...(o.users?.values() ?? [])]
    .map(({ coreSeconds, ...u }) => ({ ...u, cores: round(coreSeconds / Math.max(1e-3, seconds), 2) }))
    .filter((u) => u.cores >= NAMED_ABOVE)
    .sort((x, y) => y.cores - x.cores)
    .slice(0, 5);
  const trials = others.length ? { median: round(median(others), 2), max: round(Math.max(...others), 2), busy: busyTrials, of: others.length, top } : undefined;
  const busy = (o.start !== undefined && o.start.otherCores >= busyAbove) || (trials !== undefined && busyTrials > trials.of / 4);
  return {
    cores,
    ...(o.start ? { start: o.start } : {}),
    ...(trials ? { trials } : {}),
    busyAbove,
    busy,
    ...(o.otherRuns?.length ? { otherRuns: o.otherRuns } : {}),
    ...(o.removed?.length ? { removed: o.removed } : {}),
  };
}
