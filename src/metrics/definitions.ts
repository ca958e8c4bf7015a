// The metric registry: every metric id a trial can report, with its unit, kind and which
// direction is better (messaging over every protocol, phases, churn, import and node restart metrics alike). Compare and report look metrics up here; nothing else hard-codes them.
import type { Direction, MetricKind } from '../schema/types';
import { EVIDENCE } from './evidence';

export interface MetricDef {
  id: string;
  label: string;
  unit: string;
  kind: MetricKind;
  direction: Direction;
}

const PERCENTILES = [
  ['p50', 50],
  ['p75', 75],
  ['p95', 95],
  ['p99', 99],
  ['max', 100],
] as const;

export const LATENCY_PERCENTILES = PERCENTILES;

function latency(prefix: string, label: string): MetricDef[] {
  return PERCENTILES.map(([p]) => ({
    id: `${prefix}_${p}_ms`,
    label: `${label} ${p}`,
    unit: 'ms',
    kind: 'latency' as const,
    direction: 'lower' as const,
  }));
}

export const METRICS: MetricDef[] = [
  { id: 'published_rate', label: 'published', unit: 'msg/s', kind: 'throughput', direction: 'higher' },
  { id: 'confirmed_rate', label: 'confirmed', unit: 'msg/s', kind: 'throughput', direction: 'higher' },
  { id: 'consumed_rate', label: 'consumed', unit: 'msg/s', kind: 'throughput', direction: 'higher' },
  ...latency('latency', 'latency'),
  ...latency('confirm_latency', 'confirm latency'),
  // Phased scenarios (src/workload/phases.ts): publish a backlog, then consume it.
  { id: 'fill_rate', label: 'backlog fill', unit: 'msg/s', kind: 'throughput', direction: 'higher' },
  { id: 'drain_rate', label: 'backlog drain', unit: 'msg/s', kind: 'throughput', direction: 'higher' },
  // Growth of the scenario's dead-letter queue (TTL expiry, nack without requeue).
  { id: 'dead_lettered_rate', label: 'dead-lettered', unit: 'msg/s', kind: 'throughput', direction: 'higher' },
  // Metadata churn (src/workload/churn.ts), lavinmqperf's modes.
  { id: 'queue_churn_ops', label: 'queue declare+delete', unit: 'ops/s', kind: 'churn', direction: 'higher' },
  { id: 'bind_churn_ops', label: 'queue bind', unit: 'ops/s', kind: 'churn', direction: 'higher' },
  { id: 'connection_churn_ops', label: 'connection open+close', unit: 'ops/s', kind: 'churn', direction: 'higher' },
  { id: 'channel_churn_ops', label: 'channel open+close', unit: 'ops/s', kind: 'churn', direction: 'higher' },
  ...latency('churn_op_latency', 'churn operation'),
  // Definitions import (src/workload/definitions-import.ts) through the management API.
  { id: 'import_seconds', label: 'definitions import', unit: 's', kind: 'duration', direction: 'lower' },
  { id: 'reimport_seconds', label: 'definitions re-import', unit: 's', kind: 'duration', direction: 'lower' },
  // Node restart with N queues (src/workload/restart.ts), docker targets only. Start: from docker
  // start until AMQP, the management API and all N queues are back; the count is a sanity check.
  { id: 'node_start_seconds', label: 'node start with queues', unit: 's', kind: 'duration', direction: 'lower' },
  { id: 'node_stop_seconds', label: 'node stop with queues', unit: 's', kind: 'duration', direction: 'lower' },
  { id: 'recovered_queues', label: 'queues back after restart', unit: 'queues', kind: 'count', direction: 'higher' },
  // Idle MQTT connections (src/workload/protocols/idle.ts), the 3.12 native-MQTT post's headline:
  // the broker's memory growth per connection, Erlang's own accounting without socket buffers and
  // the process's resident memory; the count is the broker's own (a sanity check).
  { id: 'memory_per_connection_kib', label: 'memory per connection', unit: 'KiB', kind: 'memory', direction: 'lower' },
  { id: 'resident_per_connection_kib', label: 'resident memory per connection', unit: 'KiB', kind: 'memory', direction: 'lower' },
  { id: 'idle_connections', label: 'idle connections (broker count)', unit: 'connections', kind: 'count', direction: 'higher' },
  // What moved inside the broker (src/metrics/evidence.ts holds their table): compared, never gating.
  ...EVIDENCE.map((e): MetricDef => ({ id: e.id, label: e.label, unit: e.unit, kind: 'evidence', direction: e.direction })),
];

/** The metric each churn object reports (scenario files' default gate, src/workload/churn.ts). */
/** A messaging scenario's gating metrics when its file names none (those its clients produce). */
export const DEFAULT_GATE: readonly string[] = ['published_rate', 'consumed_rate', 'latency_p99_ms'];

export const CHURN_METRIC: Record<'queue' | 'binding' | 'connection' | 'channel', string> = {
  queue: 'queue_churn_ops',
  binding: 'bind_churn_ops',
  connection: 'connection_churn_ops',
  channel: 'channel_churn_ops',
};

const BY_ID = new Map(METRICS.map((m) => [m.id, m]));

export function metricDef(id: string): MetricDef {
  const def = BY_ID.get(id);
  if (def) return def;
  // Unknown ids (e.g. from a newer baseline) are reported, never gated on a guessed direction.
  return { id, label: id, unit: '', kind: 'throughput', direction: 'higher' };
}

export function isKnownMetric(id: string): boolean {
  return BY_ID.has(id);
}
