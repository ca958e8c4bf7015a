// What a scenario needs from a target beyond AMQP 0-9-1, and why a target cannot give it: a node
// restart (restart scenarios: a docker target; a single-node one to restart the container), a
// protocol listener (streams, MQTT), a minimum RabbitMQ version (native AMQP 1.0 from 4.0;
// stream filtering and MQTT 5 from 3.13). The pipeline skips a scenario on every target when one
// of them cannot run it (src/pipeline/boot.ts).
import type { ProtocolName, ScenarioSpec, TargetInfo } from '../schema/types';
import type { BrokerHandle } from './provider';
import { PROTOCOL_PLUGIN } from './endpoints';

export type Capable = Pick<BrokerHandle, 'info' | 'restartNode'>;

/** Why some targets cannot run a scenario: the reason (naming them) and the fix, or undefined. */
export interface Unmet {
  why: string;
  fix: string;
}

/** "3.10.8" ≥ "3.13"? Pre-release and build suffixes are ignored; an unknown version passes. */
export function versionAtLeast(version: string, min: string): boolean {
  const digits = /^\d+(\.\d+)*/.exec(version);
  if (!digits) return true;
  const v = digits[0].split('.').map(Number);
  const m = min.split('.').map(Number);
  for (let i = 0; i < m.length; i++) {
    const a = v[i] ?? 0;
    if (a !== m[i]) return a > m[i];
  }
  return true;
}

/** The RabbitMQ version a protocol scenario needs, and what for. */
function minVersion(spec: Extract<ScenarioSpec, { kind: 'protocol' }>): { min: string; what: string } | undefined {
  const p = spec.protocol;
  if (p.name === 'amqp-1.0') return { min: '4.0', what: 'native AMQP 1.0' };
  if (p.name === 'stream' && p.filterValues > 0) return { min: '3.13', what: 'stream filtering' };
  if (p.name === 'mqtt' && p.version === '5') return { min: '3.13', what: 'MQTT 5' };
  return undefined;
}

const PROTOCOL_LABEL: Record<ProtocolName, string> = { stream: 'the stream protocol', mqtt: 'MQTT', 'amqp-1.0': 'AMQP 1.0' };

const who = (hs: Capable[], what: (i: TargetInfo) => string) => hs.map((h) => `${h.info.label} (${what(h.info)})`).join(' and ');

/** Why `spec` cannot run on some of `handles`, naming them; undefined when all can. */
export function unmetNeed(spec: ScenarioSpec, handles: Capable[]): Unmet | undefined {
  if (spec.kind === 'restart') {
    const container = spec.restart.method === 'container';
    const unable = handles.filter((h) => typeof h.restartNode?.[spec.restart.method] !== 'function');
    if (!unable.length) return undefined;
    return container
      ? {
          why: `restarts the broker node's container, which needs a single-node docker target started by this tool; ${who(unable, (i) => (i.kind === 'url' ? 'an existing broker, attached by URL' : 'a cluster'))} cannot be restarted`,
          fix: "Run it on a single-node docker target (image:, nodes: 1); on a cluster, start_app_classic_queues (restart.method: app) restarts node 1's application instead.",
        }
      : {
          why: `restarts node 1's RabbitMQ application, which needs a docker target started by this tool; ${who(unable, () => 'an existing broker, attached by URL')} cannot be restarted`,
          fix: 'Run it on a docker target (image:).',
        };
  }
  if (spec.kind !== 'protocol') return undefined;
  const min = minVersion(spec);
  const old = min ? handles.filter((h) => !versionAtLeast(h.info.rabbitmqVersion, min.min)) : [];
  if (min && old.length) {
    return { why: `needs ${min.what}, from RabbitMQ ${min.min} on; ${who(old, (i) => `RabbitMQ ${i.rabbitmqVersion}`)} does not have it`, fix: `Run it on RabbitMQ ${min.min} or later.` };
  }
  const name = spec.protocol.name;
  const closed = handles.filter((h) => !h.info.endpoints?.[name]);
  if (!closed.length) return undefined;
  const plugin = PROTOCOL_PLUGIN[name];
  return {
    why: `speaks ${PROTOCOL_LABEL[name]}, for which ${who(closed, (i) => (i.kind === 'url' ? 'an existing broker, attached by URL' : `RabbitMQ ${i.rabbitmqVersion}`))} has no listener`,
    fix: plugin ? `Enable ${plugin} on that broker, or run it on a docker target (image:), which enables it itself.` : 'Run it on a target that speaks it.',
  };
}
