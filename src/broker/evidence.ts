// Reads a target's broker evidence at the edges of a trial's measured window, without running
// anything inside the broker during it: each node's Prometheus endpoint (the Erlang VM's
// reductions, GC, memory by category, run queue and, once switched on, microstate accounting)
// and, for containers this tool started, the container's cgroup CPU and block-I/O accounting read
// from the host's /sys/fs/cgroup (v1 or v2); after the window, a trial's largest queue processes
// from the management API. Providers build an EvidenceCapture per target; the
// trial (src/workload/trial.ts) reads it as the window opens and closes, and
// src/metrics/evidence.ts turns the two readings into metrics.
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EvidenceCounter, EvidenceReading, EvidenceSource } from '../metrics/evidence';
import { MSACC_STATES } from '../metrics/evidence';
import type { TopQueue } from '../schema/types';
import type { ManagementClient } from './management';

/** One target's evidence: what it can read, and why the rest is missing. */
export interface EvidenceCapture {
  sources: EvidenceSource[];
  /** A source this target lacks, with the reason (shown in the report). */
  missing: Array<{ source: EvidenceSource | 'all'; why: string }>;
  read(): Promise<EvidenceReading>;
}

/** Bound on one reading: a slow scrape must not hold the trial. */
const READ_TIMEOUT_MS = 3_000;

type Counters = EvidenceReading['counters'];
type Gauges = EvidenceReading['gauges'];

/**
 * The lines of a Prometheus text exposition that the evidence uses, summed over the nodes' scrapes
 * by the caller. msacc series are summed over the normal schedulers (type="scheduler").
 */
export function parsePrometheus(text: string): { counters: Counters; gauges: Gauges } {
  const counters: Counters = {};
  const gauges: Gauges = {};
  const add = <K extends string>(o: Partial<Record<K, number>>, k: K, v: number) => {
    o[k] = (o[k] ?? 0) + v;
  };
  for (const line of text.split('\n')) {
    if (!line.startsWith('erlang_vm_')) continue;
    const m = /^(\w+)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const [, name, labels = '', raw] = m;
    const v = Number(raw);
    if (!Number.isFinite(v)) continue;
    switch (name) {
      case 'erlang_vm_statistics_reductions_total':
        add(counters, 'reductions', v);
        break;
      case 'erlang_vm_statistics_garbage_collection_number_of_gcs':
        add(counters, 'gcs', v);
        break;
      case 'erlang_vm_statistics_garbage_collection_words_reclaimed':
        add(counters, 'gc_words', v);
        break;
      case 'erlang_vm_statistics_run_queues_length':
        add(gauges, 'run_queue', v);
        break;
      case 'erlang_vm_memory_bytes_total':
        add(gauges, 'mem_total', v);
        if (labels.includes('kind="processes"')) add(gauges, 'mem_processes', v);
        break;
      case 'erlang_vm_memory_system_bytes_total':
        if (labels.includes('usage="binary"')) add(gauges, 'mem_binary', v);
        if (labels.includes('usage="ets"')) add(gauges, 'mem_ets', v);
        break;
      default: {
        const s = /^erlang_vm_msacc_(\w+)_seconds_total$/.exec(name);
        if (s && labels.includes('type="scheduler"') && (MSACC_STATES as readonly string[]).includes(s[1])) {
          add(counters, `msacc_${s[1]}` as EvidenceCounter, v * 1e6);
        }
      }
    }
  }
  return { counters, gauges };
}

async function scrape(url: string): Promise<{ counters: Counters; gauges: Gauges }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(READ_TIMEOUT_MS) });
  if (!res.ok) throw new Error(`${res.status} from the Prometheus endpoint`);
  return parsePrometheus(await res.text());
}

/** What a Prometheus endpoint offers: nothing (no answer), the VM's metrics, and whether
 *  microstate accounting is on: its counters move between two scrapes only then (switched off,
 *  they keep their last values). */
export async function probePrometheus(url: string): Promise<{ vm: boolean; msacc: boolean }> {
  const total = (r?: { counters: Counters }) => MSACC_STATES.reduce((sum, s) => sum + (r?.counters[`msacc_${s}`] ?? 0), 0);
  const a = await scrape(url).catch(() => undefined);
  if (a?.counters.reductions === undefined) return { vm: false, msacc: false };
  await sleep(200);
  const b = await scrape(url).catch(() => undefined);
  return { vm: true, msacc: total(b) > total(a) };
}

/** A container's cgroup accounting files, found from its process's /proc/<pid>/cgroup. */
export interface CgroupFiles {
  cpu: { file: string; scale: number; key?: string };
  io?: { file: string; v2: boolean };
}

/** Where a process's CPU and I/O accounting live, from the text of /proc/<pid>/cgroup. */
export async function cgroupFiles(procCgroup: string, root = '/sys/fs/cgroup'): Promise<CgroupFiles | undefined> {
  const lines = procCgroup
    .trim()
    .split('\n')
    .map((l) => l.split(':'));
  const exists = (f: string) =>
    readFile(f).then(
      () => true,
      () => false,
    );
  const v1 = (controller: string) =>
    lines
      .find((l) => l[1]?.split(',').includes(controller))
      ?.slice(2)
      .join(':');
  const cpuPath = v1('cpuacct');
  if (cpuPath !== undefined) {
    for (const mount of ['cpuacct', 'cpu,cpuacct', 'cpuacct,cpu']) {
      const file = `${root}/${mount}${cpuPath}/cpuacct.usage`;
      if (await exists(file)) {
        const io = v1('blkio');
        const ioFile = io === undefined ? undefined : `${root}/blkio${io}/blkio.throttle.io_service_bytes`;
        return { cpu: { file, scale: 1e-3 }, io: ioFile && (await exists(ioFile)) ? { file: ioFile, v2: false } : undefined };
      }
    }
  }
  const unified = lines
    .find((l) => l[0] === '0' && l[1] === '')
    ?.slice(2)
    .join(':');
  if (unified !== undefined && (await exists(`${root}${unified}/cpu.stat`))) {
    const ioFile = `${root}${unified}/io.stat`;
    return { cpu: { file: `${root}${unified}/cpu.stat`, scale: 1, key: 'usage_usec' }, io: (await exists(ioFile)) ? { file: ioFile, v2: true } : undefined };
  }
  return undefined;
}

/** Bytes read and written, from blkio.throttle.io_service_bytes (v1) or io.stat (v2). */
export function parseIo(text: string, v2: boolean): { read: number; write: number } {
  let read = 0;
  let write = 0;
  for (const line of text.split('\n')) {
    if (v2) {
      read += Number(/\brbytes=(\d+)/.exec(line)?.[1] ?? 0);
      write += Number(/\bwbytes=(\d+)/.exec(line)?.[1] ?? 0);
    } else {
      const m = /^\S+\s+(Read|Write)\s+(\d+)$/.exec(line.trim());
      if (m) m[1] === 'Read' ? (read += Number(m[2])) : (write += Number(m[2]));
    }
  }
  return { read, write };
}

async function readCgroup(f: CgroupFiles): Promise<Counters> {
  const text = await readFile(f.cpu.file, 'utf8');
  const raw = f.cpu.key ? Number(new RegExp(`^${f.cpu.key} (\\d+)`, 'm').exec(text)?.[1]) : Number(text.trim());
  const out: Counters = { cpu_us: raw * f.cpu.scale };
  if (f.io) {
    const io = parseIo(await readFile(f.io.file, 'utf8'), f.io.v2);
    out.disk_read_bytes = io.read;
    out.disk_write_bytes = io.write;
  }
  return out;
}

/**
 * An EvidenceCapture over the given Prometheus URLs (one per node) and cgroup files (one per
 * container). A source that fails at a reading is left out of that reading, so its metrics are
 * missing for the trial rather than wrong.
 */
export function evidenceCapture(o: { prometheusUrls: string[]; cgroups?: CgroupFiles[]; msacc: boolean; missing: EvidenceCapture['missing'] }): EvidenceCapture {
  const sources: EvidenceSource[] = [];
  if (o.prometheusUrls.length) sources.push('prometheus');
  if (o.prometheusUrls.length && o.msacc) sources.push('msacc');
  if (o.cgroups?.length) sources.push('cgroup');
  return {
    sources,
    missing: o.missing,
    async read() {
      const at = Date.now();
      const counters: Counters = {};
      const gauges: Gauges = {};
      const answered: EvidenceSource[] = [];
      const sum = <K extends string>(into: Partial<Record<K, number>>, from: Partial<Record<K, number>>) => {
        for (const [k, v] of Object.entries(from) as Array<[K, number]>) into[k] = (into[k] ?? 0) + v;
      };
      const [prom, cg] = await Promise.all([
        Promise.all(o.prometheusUrls.map(scrape)).catch(() => undefined),
        o.cgroups?.length ? Promise.all(o.cgroups.map(readCgroup)).catch(() => undefined) : undefined,
      ]);
      if (prom) {
        for (const p of prom) {
          sum(counters, p.counters);
          sum(gauges, p.gauges);
        }
        answered.push('prometheus');
        if (o.msacc) answered.push('msacc');
      }
      if (cg) {
        for (const c of cg) sum(counters, c);
        answered.push('cgroup');
      }
      if (!o.msacc) for (const s of MSACC_STATES) delete counters[`msacc_${s}`];
      return { at, counters, gauges, sources: answered };
    },
  };
}

/** A trial's largest queue processes as the window closed (management API; first round only). */
export async function readTopQueues(mgmt: ManagementClient, vhost: string, max = 5, timeoutMs = 5_000): Promise<TopQueue[]> {
  type Q = { name: string; memory?: number; reductions?: number; reductions_details?: { rate?: number }; messages?: number };
  const qs = await mgmt.request<Q[]>('GET', `/api/queues/${encodeURIComponent(vhost)}?columns=name,memory,reductions,reductions_details,messages`, undefined, timeoutMs);
  // The broker emits queue stats every few seconds: a queue without them yet is left out.
  return (qs ?? [])
    .filter((q) => typeof q.memory === 'number')
    .sort((a, b) => b.memory! - a.memory!)
    .slice(0, max)
    .map((q) => ({
      name: q.name,
      memoryBytes: q.memory!,
      ...(typeof q.reductions === 'number' ? { reductions: q.reductions } : {}),
      ...(typeof q.reductions_details?.rate === 'number' ? { reductionsPerSecond: q.reductions_details.rate } : {}),
      ...(typeof q.messages === 'number' ? { messages: q.messages } : {}),
    }));
}

/** The Erlang call that switches microstate accounting on, and the expression for rabbitmqctl eval. */
export const MSACC_ON_CALL = 'erlang:system_flag(microstate_accounting, true)';
export const MSACC_ON_EXPR = `${MSACC_ON_CALL}, ok.`;
