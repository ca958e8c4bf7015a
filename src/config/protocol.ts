// A scenario file's `protocol:` block (streams, MQTT, AMQP 1.0): its defaults per protocol, which
// fields belong to which protocol, and which PerfTest workload fields a protocol cannot honour —
// each wrong field one located error. Also turns a spec into another protocol for the `protocol`
// axis (src/config/axes.ts), so one workload can be measured over every protocol.
import type { ProtocolName, ProtocolSpec, ScenarioSpec, WorkloadParams } from '../schema/types';
import { GateError, type Where } from '../schema/errors';
import { perfTestDefaults } from './perftest-args';

/** What a scenario file may write under `protocol:` (schema/scenario.schema.json). */
export interface RawProtocol {
  name: ProtocolName;
  subEntrySize?: number;
  offset?: 'first' | 'next';
  backlog?: number;
  filterValues?: number;
  version?: '3.1.1' | '5';
  qos?: 0 | 1;
  idleConnections?: number;
}

/** The fields each protocol takes besides `name`. */
const FIELDS: Record<ProtocolName, Array<keyof RawProtocol>> = {
  stream: ['subEntrySize', 'offset', 'backlog', 'filterValues'],
  mqtt: ['version', 'qos', 'idleConnections'],
  'amqp-1.0': ['backlog'],
};

/** A protocol's defaults; MQTT's QoS follows the workload: publisher confirms (-c) are QoS 1. */
export function protocolDefaults(name: ProtocolName, w: WorkloadParams): ProtocolSpec {
  if (name === 'stream') return { name, subEntrySize: 1, offset: 'next', backlog: 0, filterValues: 0 };
  if (name === 'mqtt') return { name, version: '3.1.1', qos: w.confirm !== null ? 1 : 0, idleConnections: 0 };
  return { name, backlog: 0 };
}

/** PerfTest workload fields no protocol driver implements (src/workload/protocols/): set to
 *  anything but PerfTest's default, they are an error rather than silently ignored. */
const UNSUPPORTED: Array<keyof WorkloadParams> = [
  'queuePattern',
  'exchangeType',
  'routingKey',
  'mandatory',
  'nack',
  'multiAckEvery',
  'autoAck',
  'consumerStartDelay',
  'predeclared',
  'messageProperties',
  'exclusive',
];

export function parseProtocol(raw: RawProtocol, w: WorkloadParams, at: (pointer: string, field: string) => Where): ProtocolSpec {
  for (const k of Object.keys(raw) as Array<keyof RawProtocol>) {
    if (k !== 'name' && !FIELDS[raw.name].includes(k)) {
      const owner = (Object.keys(FIELDS) as ProtocolName[]).find((p) => FIELDS[p].includes(k));
      throw new GateError(
        `protocol.${k} is ${owner ? `a ${owner} setting` : 'not a setting'}, not one of ${raw.name}`,
        at(`/protocol/${k}`, `protocol.${k}`),
        FIELDS[raw.name].length ? `${raw.name} takes ${FIELDS[raw.name].join(', ')}` : `${raw.name} takes no settings besides name`,
      );
    }
  }
  const spec = { ...protocolDefaults(raw.name, w), ...raw } as ProtocolSpec;
  if (w.producers === 0 && w.consumers > 0 && (spec.name === 'amqp-1.0' || (spec.name === 'stream' && spec.offset === 'first')) && spec.backlog === 0) {
    throw new GateError(
      `consumers with no producers need a backlog to read${spec.name === 'stream' ? " from the stream's first offset" : ''}`,
      at('/protocol/backlog', 'protocol.backlog'),
      'set protocol.backlog to more messages than the consumers read in warm-up + window',
    );
  }
  if (spec.name === 'mqtt' && spec.idleConnections > 0 && (w.producers > 0 || w.consumers > 0)) {
    throw new GateError(
      'an idle-connection scenario measures memory per connection, with no producers or consumers',
      at('/protocol/idleConnections', 'protocol.idleConnections'),
      'add -x 0 -y 0 to perf-test, or drop idleConnections',
    );
  }
  if (spec.name === 'stream' && spec.filterValues > 0 && w.consumers > spec.filterValues) {
    throw new GateError(
      `${w.consumers} consumers but ${spec.filterValues} filter values: consumer j asks for value j mod ${spec.filterValues}, so some would share one`,
      at('/protocol/filterValues', 'protocol.filterValues'),
      'give at least as many filter values as consumers',
    );
  }
  return spec;
}

/**
 * A PerfTest field no protocol driver implements is one error rather than silently ignored.
 * `where` points at what made it a protocol scenario (the file's perf-test, or its protocol axis).
 */
export function checkProtocolWorkload(spec: Extract<ScenarioSpec, { kind: 'protocol' }>, where: Where): void {
  const defaults = perfTestDefaults(spec.workload.queue);
  for (const k of UNSUPPORTED) {
    if (JSON.stringify(spec.workload[k]) !== JSON.stringify(defaults[k])) {
      throw new GateError(`workload.${k} has no equivalent over ${spec.protocol.name} in this tool (${spec.id})`, where, `remove the flag that sets ${k}, or run the workload over AMQP 0-9-1 only`);
    }
  }
}

/** The spec over another protocol (the `protocol` axis): AMQP 0-9-1 makes it a plain messaging
 *  scenario; another protocol keeps the file's settings for it, or takes that protocol's defaults. */
export function withProtocol(spec: ScenarioSpec, name: ProtocolName | 'amqp-0-9-1'): ScenarioSpec {
  if (spec.kind !== 'messaging' && spec.kind !== 'protocol') throw new Error(`a ${spec.kind} scenario has no protocol axis`);
  const { protocol: own, ...rest } = spec.kind === 'protocol' ? spec : { ...spec, protocol: undefined };
  if (name === 'amqp-0-9-1') return { ...rest, kind: 'messaging' };
  return { ...rest, kind: 'protocol', protocol: own?.name === name ? own : protocolDefaults(name, spec.workload) };
}
