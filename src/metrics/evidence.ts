// Broker evidence: what moved inside the broker during a trial's measured window, as metrics
// compared like the others but never gating. One table (EVIDENCE) holds every evidence metric:
// its id, label, unit, which direction is better, how it is captured and which targets can
// provide it. deriveEvidence() turns the raw readings taken at the window's edges
// (src/broker/evidence.ts) into those metrics, per message (or per churn operation) where the
// trial moved messages, so a faster candidate is not blamed for doing more work.
import type { Direction } from '../schema/types';

/** Where a raw reading comes from; a target offers a subset (TargetInfo.evidence). */
export type EvidenceSource = 'prometheus' | 'msacc' | 'cgroup';

export interface EvidenceDef {
  id: string;
  label: string;
  unit: string;
  direction: Direction;
  source: EvidenceSource;
  /** How it is captured, in words (docs/evidence.md and the HTML report's legend). */
  capture: string;
}

const PER = 'per message (per operation in churn scenarios; per second where nothing was counted)';

/** Microstate-accounting states of the normal scheduler threads, in OTP's names. */
export const MSACC_STATES = ['emulator', 'gc', 'port', 'check_io', 'aux', 'other', 'sleep'] as const;

export const EVIDENCE: EvidenceDef[] = [
  {
    id: 'broker_cpu_us_per_msg',
    label: 'broker CPU per message',
    unit: 'µs',
    direction: 'lower',
    source: 'cgroup',
    capture: `the container's cgroup CPU time (every node of the target) over the window, ${PER}; docker targets`,
  },
  {
    id: 'broker_cpu_cores',
    label: 'broker CPU',
    unit: 'cores',
    direction: 'lower',
    source: 'cgroup',
    capture: "the container's cgroup CPU time over the window divided by its length; docker targets",
  },
  {
    id: 'broker_disk_write_kb_per_msg',
    label: 'disk written per message',
    unit: 'KiB',
    direction: 'lower',
    source: 'cgroup',
    capture: `the container's cgroup block-I/O bytes written over the window, ${PER}; docker targets`,
  },
  {
    id: 'broker_disk_read_kb_per_msg',
    label: 'disk read per message',
    unit: 'KiB',
    direction: 'lower',
    source: 'cgroup',
    capture: `the container's cgroup block-I/O bytes read over the window, ${PER}; docker targets`,
  },
  {
    id: 'broker_reductions_per_msg',
    label: 'reductions per message',
    unit: 'red.',
    direction: 'lower',
    source: 'prometheus',
    capture: `erlang_vm_statistics_reductions_total (every node) over the window, ${PER}`,
  },
  {
    id: 'broker_gc_per_kmsg',
    label: 'GCs per 1000 messages',
    unit: 'GCs',
    direction: 'lower',
    source: 'prometheus',
    capture: `erlang_vm_statistics_garbage_collection_number_of_gcs over the window, per 1000 messages (operations; per second where nothing was counted)`,
  },
  {
    id: 'broker_gc_words_per_msg',
    label: 'GC words reclaimed per message',
    unit: 'words',
    direction: 'lower',
    source: 'prometheus',
    capture: `erlang_vm_statistics_garbage_collection_words_reclaimed over the window, ${PER}`,
  },
  {
    id: 'broker_sched_busy',
    label: 'schedulers busy',
    unit: 'cores',
    direction: 'lower',
    source: 'msacc',
    capture:
      'microstate accounting of the normal schedulers (erlang_vm_msacc_*_seconds_total, type scheduler): their time in every state but sleep over the window, divided by its length; targets this tool started (it switches microstate accounting on after boot)',
  },
  {
    id: 'broker_sched_us_per_msg',
    label: 'scheduler time per message',
    unit: 'µs',
    direction: 'lower',
    source: 'msacc',
    capture: `microstate accounting: the normal schedulers' time in every state but sleep over the window, ${PER}`,
  },
  {
    id: 'broker_gc_us_per_msg',
    label: 'GC time per message',
    unit: 'µs',
    direction: 'lower',
    source: 'msacc',
    capture: `microstate accounting: the normal schedulers' time in state gc over the window, ${PER}`,
  },
  ...MSACC_STATES.filter((s) => s !== 'sleep').map(
    (s): EvidenceDef => ({
      id: `broker_msacc_${s}`,
      label: `schedulers' busy time in ${s}`,
      unit: 'share',
      direction: 'lower',
      source: 'msacc',
      capture: `microstate accounting: the normal schedulers' time in state ${s} / their time in every state but sleep, over the window`,
    }),
  ),
  {
    id: 'broker_mem_total_mb',
    label: 'memory, total',
    unit: 'MiB',
    direction: 'lower',
    source: 'prometheus',
    capture: 'erlang_vm_memory_bytes_total (processes + system, every node) as the window closes',
  },
  { id: 'broker_mem_processes_mb', label: 'memory, processes', unit: 'MiB', direction: 'lower', source: 'prometheus', capture: 'erlang_vm_memory_bytes_total{kind="processes"} as the window closes' },
  { id: 'broker_mem_binary_mb', label: 'memory, binaries', unit: 'MiB', direction: 'lower', source: 'prometheus', capture: 'erlang_vm_memory_system_bytes_total{usage="binary"} as the window closes' },
  { id: 'broker_mem_ets_mb', label: 'memory, ETS', unit: 'MiB', direction: 'lower', source: 'prometheus', capture: 'erlang_vm_memory_system_bytes_total{usage="ets"} as the window closes' },
  { id: 'broker_run_queue', label: 'run queue length', unit: 'processes', direction: 'lower', source: 'prometheus', capture: 'erlang_vm_statistics_run_queues_length as the window closes' },
];

const BY_ID = new Map(EVIDENCE.map((e) => [e.id, e]));
export const evidenceDef = (id: string): EvidenceDef | undefined => BY_ID.get(id);
export const isEvidence = (id: string): boolean => BY_ID.has(id);

/** Raw readings at one window edge: counters (monotonic) and gauges, summed over a target's nodes. */
export interface EvidenceReading {
  /** Wall clock (ms) of the reading. */
  at: number;
  counters: Partial<Record<EvidenceCounter, number>>;
  gauges: Partial<Record<EvidenceGauge, number>>;
  /** The sources that answered. */
  sources: EvidenceSource[];
}

export type EvidenceCounter = 'cpu_us' | 'disk_read_bytes' | 'disk_write_bytes' | 'reductions' | 'gcs' | 'gc_words' | `msacc_${(typeof MSACC_STATES)[number]}`;
export type EvidenceGauge = 'mem_total' | 'mem_processes' | 'mem_binary' | 'mem_ets' | 'run_queue';

/** What the trial did in the window, to normalise by: messages consumed (else published), or
 *  churn operations; 0 = nothing counted (the evidence is then per second). */
export function workUnits(metrics: Record<string, number>, seconds: number): number {
  const rate =
    metrics.consumed_rate ||
    metrics.published_rate ||
    metrics.drain_rate ||
    metrics.fill_rate ||
    metrics.queue_churn_ops ||
    metrics.bind_churn_ops ||
    metrics.connection_churn_ops ||
    metrics.channel_churn_ops ||
    0;
  return rate > 0 ? rate * seconds : 0;
}

const MB = 1024 * 1024;

/**
 * The evidence metrics of one window from its two readings. A counter is used only when both
 * readings have it and it did not go backwards (a node restart resets the VM's counters).
 */
export function deriveEvidence(start: EvidenceReading, end: EvidenceReading, units: number): Record<string, number> {
  const seconds = (end.at - start.at) / 1000;
  if (!(seconds > 0)) return {};
  const per = units > 0 ? units : seconds;
  const d = (k: EvidenceCounter): number | undefined => {
    const a = start.counters[k];
    const b = end.counters[k];
    return a === undefined || b === undefined || b < a ? undefined : b - a;
  };
  const out: Record<string, number> = {};
  const put = (id: string, v: number | undefined) => {
    if (v !== undefined && Number.isFinite(v)) out[id] = Math.round(v * 1e4) / 1e4;
  };
  const cpu = d('cpu_us');
  put('broker_cpu_us_per_msg', cpu === undefined ? undefined : cpu / per);
  put('broker_cpu_cores', cpu === undefined ? undefined : cpu / 1e6 / seconds);
  const rd = d('disk_read_bytes');
  const wr = d('disk_write_bytes');
  put('broker_disk_read_kb_per_msg', rd === undefined ? undefined : rd / 1024 / per);
  put('broker_disk_write_kb_per_msg', wr === undefined ? undefined : wr / 1024 / per);
  const red = d('reductions');
  put('broker_reductions_per_msg', red === undefined ? undefined : red / per);
  const gcs = d('gcs');
  put('broker_gc_per_kmsg', gcs === undefined ? undefined : (gcs / per) * (units > 0 ? 1000 : 1));
  const words = d('gc_words');
  put('broker_gc_words_per_msg', words === undefined ? undefined : words / per);
  // Busy time rather than shares of all time: schedulers set offline (+S 2:1) sleep throughout
  // and would dilute a share. All zero: microstate accounting is off (nothing to say, not "idle").
  const states = MSACC_STATES.map((s) => [s, d(`msacc_${s}`)] as const);
  const busy = states.reduce((sum, [s, v]) => sum + (s === 'sleep' ? 0 : (v ?? 0)), 0);
  if (states.every(([, v]) => v !== undefined) && busy > 0) {
    for (const [s, v] of states) if (s !== 'sleep') put(`broker_msacc_${s}`, v! / busy);
    put('broker_sched_busy', busy / 1e6 / seconds);
    put('broker_sched_us_per_msg', busy / per);
    put('broker_gc_us_per_msg', d('msacc_gc')! / per);
  }
  const g = end.gauges;
  put('broker_mem_total_mb', g.mem_total === undefined ? undefined : g.mem_total / MB);
  put('broker_mem_processes_mb', g.mem_processes === undefined ? undefined : g.mem_processes / MB);
  put('broker_mem_binary_mb', g.mem_binary === undefined ? undefined : g.mem_binary / MB);
  put('broker_mem_ets_mb', g.mem_ets === undefined ? undefined : g.mem_ets / MB);
  put('broker_run_queue', g.run_queue);
  return out;
}

/** Evidence ids a set of sources can provide, and the ones it cannot (for the report). */
export function evidenceCoverage(sources: readonly EvidenceSource[]): { provided: string[]; missing: EvidenceSource[] } {
  const all: EvidenceSource[] = ['prometheus', 'msacc', 'cgroup'];
  return { provided: EVIDENCE.filter((e) => sources.includes(e.source)).map((e) => e.id), missing: all.filter((s) => !sources.includes(s)) };
}
