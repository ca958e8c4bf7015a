// Axes and scale for scenario files. `axes:` expands one file into one spec per combination of
// protocol, message size, queue type, a stream's sub-entry size and MQTT QoS, with ids like
// one_fast[size=100,queue=quorum] or one_fast[protocol=stream]; `scale:` trims the
// original command's client, queue and message counts by one factor (7000 publishers × 0.05 = 350).
import type { ImportSpec, ProtocolName, RestartSpec, ScenarioSpec, WorkloadParams } from '../schema/types';
import { clampSize } from './perftest-args';
import { withProtocol } from './protocol';

export const QUEUE_TYPES = ['classic', 'classic-v1', 'classic-v2', 'quorum', 'stream'] as const;
export type QueueTypeAxis = (typeof QUEUE_TYPES)[number];
export interface Axes {
  size?: number[];
  queueType?: QueueTypeAxis[];
  protocol?: Array<ProtocolName | 'amqp-0-9-1'>;
  /** Streams: messages per sub-entry. */
  subEntrySize?: number[];
  /** MQTT: QoS of publishes and subscriptions. */
  qos?: Array<0 | 1>;
}

/** What `scale` may touch; `scaled:` in a file picks a subset (default: clients and queues). */
export const SCALABLE = ['producers', 'consumers', 'queues', 'messages', 'imports'] as const;
export type Scalable = (typeof SCALABLE)[number];
export const DEFAULT_SCALED: Scalable[] = ['producers', 'consumers', 'queues'];

const times = (n: number, f: number) => (n > 0 ? Math.max(1, Math.round(n * f)) : n);

export function scaleWorkload(w: WorkloadParams, f: number, what: readonly Scalable[]): void {
  if (f === 1) return;
  if (what.includes('producers')) w.producers = times(w.producers, f);
  if (what.includes('consumers')) w.consumers = times(w.consumers, f);
  if (what.includes('messages')) w.producerMessageLimit = times(w.producerMessageLimit, f);
  if (what.includes('queues') && w.queuePattern) {
    w.queuePatternTo = w.queuePatternFrom + times(w.queuePatternTo - w.queuePatternFrom + 1, f) - 1;
  }
}

export function scaleImport(imp: ImportSpec, f: number, what: readonly Scalable[]): void {
  if (f === 1 || !what.includes('imports')) return;
  imp.queues = times(imp.queues, f);
  imp.vhosts = times(imp.vhosts, f);
}

/** A restart's queue count follows `queues`, its messages per queue `messages`. */
export function scaleRestart(r: RestartSpec, f: number, what: readonly Scalable[]): void {
  if (f === 1) return;
  if (what.includes('queues')) r.queues = times(r.queues, f);
  if (what.includes('messages')) r.messagesPerQueue = times(r.messagesPerQueue, f);
}

const STREAM_UNSUPPORTED = ['x-max-length', 'x-single-active-consumer', 'x-message-ttl', 'x-dead-letter-exchange', 'x-dead-letter-routing-key', 'x-overflow', 'x-max-in-memory-length', 'x-queue-mode'];

/** Turns a (classic, as written) workload into the given queue type, the way PerfTest's -qq / -sq do. */
export function applyQueueType(w: WorkloadParams, t: QueueTypeAxis, notes: string[]): void {
  delete w.queueArgs['x-queue-type'];
  delete w.queueArgs['x-queue-version'];
  if (t === 'classic-v1' || t === 'classic-v2') w.queueArgs['x-queue-version'] = t === 'classic-v1' ? 1 : 2;
  if (t === 'quorum' || t === 'stream') {
    w.persistent = true;
    w.autoDelete = false;
    w.exclusive = false;
    w.queueArgs['x-queue-type'] = t;
  }
  if (t !== 'stream') return;
  const dropped = STREAM_UNSUPPORTED.filter((k) => k in w.queueArgs);
  for (const k of dropped) delete w.queueArgs[k];
  Object.assign(w.queueArgs, { 'x-max-length-bytes': 20_000_000_000, 'x-stream-max-segment-size-bytes': 500_000_000 });
  w.qos ??= 200;
  w.autoAck = false;
  if (dropped.length && !notes.some((n) => n.startsWith('stream:'))) {
    notes.push(`stream: ${dropped.join(', ')} dropped (streams do not support them)`);
  }
}

const LABEL: Record<keyof Axes, string> = { protocol: 'protocol', size: 'size', queueType: 'queue', subEntrySize: 'subEntry', qos: 'qos' };

/** One spec per combination of axis values, in the file's axis order. */
export function expandAxes(base: ScenarioSpec, axes: Axes | undefined, order: string[]): ScenarioSpec[] {
  const keys = order.filter((k): k is keyof Axes => k in LABEL && Boolean(axes?.[k as keyof Axes]?.length));
  let combos: Array<Record<string, number | string>> = [{}];
  for (const k of keys) combos = combos.flatMap((c) => axes![k]!.map((v: number | string) => ({ ...c, [k]: v })));
  if (!keys.length) return [base];
  return combos.map((c) => {
    const notes = [...(base.notes ?? [])];
    let spec: ScenarioSpec = structuredClone({ ...base, notes });
    const labels: Record<string, string | number> = {};
    if (c.protocol !== undefined) {
      spec = withProtocol(spec, c.protocol as ProtocolName | 'amqp-0-9-1');
      labels[LABEL.protocol] = c.protocol;
    }
    const all = [spec.workload, ...(spec.kind === 'phases' ? spec.phases : []).map((p) => p.workload)];
    if (c.size !== undefined) {
      const before = notes.length;
      for (const w of all) w.size = clampSize(Number(c.size), notes);
      notes.splice(before + 1);
      labels[LABEL.size] = all[0].size;
    }
    if (c.queueType !== undefined) {
      for (const w of all) applyQueueType(w, c.queueType as QueueTypeAxis, notes);
      if (spec.kind === 'import') spec.import.queueType = c.queueType === 'quorum' || c.queueType === 'stream' ? c.queueType : 'classic';
      labels[LABEL.queueType] = c.queueType;
    }
    if (c.subEntrySize !== undefined && spec.kind === 'protocol' && spec.protocol.name === 'stream') {
      spec.protocol = { ...spec.protocol, subEntrySize: Number(c.subEntrySize) };
      labels[LABEL.subEntrySize] = c.subEntrySize;
    }
    if (c.qos !== undefined && spec.kind === 'protocol' && spec.protocol.name === 'mqtt') {
      spec.protocol = { ...spec.protocol, qos: Number(c.qos) as 0 | 1 };
      labels[LABEL.qos] = c.qos;
    }
    spec.axes = labels;
    spec.id = `${base.id}[${Object.entries(labels)
      .map(([k, v]) => `${k}=${v}`)
      .join(',')}]`;
    spec.notes = notes.length ? notes : undefined;
    return spec;
  });
}
