// Where a broker speaks the protocols besides AMQP 0-9-1, read back from the broker itself (the
// management API's listener list), and which plugin a docker target must enable for each. One
// place for both providers: a target attached by URL offers what its operator enabled; a docker
// target enables what the run's scenarios need (src/broker/docker.ts).
import type { ProtocolName, ScenarioSpec } from '../schema/types';
import type { ManagementClient } from './management';

/** "host:port" per protocol the broker listens for; AMQP 1.0 shares the AMQP 0-9-1 listener. */
export type Endpoints = Partial<Record<ProtocolName, string>>;

/** The plugin each protocol needs (AMQP 1.0 is built into RabbitMQ 4.x: no plugin). */
export const PROTOCOL_PLUGIN: Partial<Record<ProtocolName, string>> = { stream: 'rabbitmq_stream', mqtt: 'rabbitmq_mqtt' };

/** Listener protocol names in GET /api/overview → our protocol names. */
const LISTENER: Record<string, ProtocolName> = { stream: 'stream', mqtt: 'mqtt', amqp: 'amqp-1.0' };

/** The plugins the scenarios' protocols need, sorted. */
export function pluginsFor(scenarios: ScenarioSpec[]): string[] {
  const names = scenarios.flatMap((s) => (s.kind === 'protocol' ? [PROTOCOL_PLUGIN[s.protocol.name]] : []));
  return [...new Set(names.filter((n): n is string => Boolean(n)))].sort();
}

/** The broker's listeners on the node the AMQP URL reaches, as endpoints on the AMQP URL's host
 *  (the listener's own address is often 0.0.0.0 or ::). */
export async function readEndpoints(mgmt: ManagementClient, amqpUrl: string): Promise<Endpoints> {
  const overview = await mgmt.request<{ listeners?: Array<{ protocol?: string; port?: number; node?: string }>; node?: string }>('GET', '/api/overview');
  const host = new URL(amqpUrl).hostname;
  const out: Endpoints = {};
  for (const l of overview.listeners ?? []) {
    const p = l.protocol ? LISTENER[l.protocol] : undefined;
    if (!p || !l.port || out[p] || (overview.node && l.node && l.node !== overview.node)) continue;
    out[p] = `${host}:${l.port}`;
  }
  return out;
}
