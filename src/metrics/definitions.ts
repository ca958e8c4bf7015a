// The metric registry: every metric id a trial can report, with its unit, kind and which
// direction is better. Compare and report look metrics up here; nothing else hard-codes them.
import type { Direction, MetricKind } from '../schema/types';

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
];

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

/** Default tolerance per metric kind, as a fraction; scenario files override per metric. */
export const DEFAULT_TOLERANCE: Record<MetricKind, number> = {
  throughput: 0.1,
  churn: 0.1,
  latency: 0.25,
  duration: 0.15,
  memory: 0.15,
};

export function toleranceFor(id: string, overrides: Record<string, number>): number {
  return overrides[id] ?? DEFAULT_TOLERANCE[metricDef(id).kind];
}
