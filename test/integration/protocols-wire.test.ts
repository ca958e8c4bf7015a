// The MQTT and AMQP 1.0 drivers on a realistic wire: every byte between the generator and a
// 4.0.5 container passes a proxy that re-sends it in 1–64 byte pieces with small pauses and
// back-pressure (test/support/chunking-proxy.ts), so frames arrive split at arbitrary bytes. The
// trials stay valid and lose nothing; and when the proxy goes silent mid-trial (a broker that
// stops answering), the trial ends with the named stop reason "stalled" in bounded time instead of
// hanging. (Stream clients connect to the address the broker advertises for a stream's leader,
// not to the proxy: the stream driver's wire is the broker's own, exercised by protocols.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeRunContainers } from '../../src/broker/cleanup';
import { startDocker, type DockerBrokerHandle } from '../../src/broker/docker';
import { ManagementClient } from '../../src/broker/management';
import { amqpUrlForVhost } from '../../src/broker/urls';
import { resolveScenarios } from '../../src/config/catalogue';
import type { ProtocolName } from '../../src/schema/types';
import { runProtocol } from '../../src/workload/protocols/runner';
import { STALL_ENV } from '../../src/workload/watchdog';
import { startChunkingProxy, type ChunkingProxy } from '../support/chunking-proxy';
import { ofKind } from '../support/kinds';

const RUN = `protowire-${process.pid}-${Date.now().toString(36)}`;
let handle: DockerBrokerHandle;
let mgmt: ManagementClient;
const proxies: ChunkingProxy[] = [];
let vhosts = 0;

beforeAll(async () => {
  handle = await startDocker(
    { id: 'w', label: 'wire 4.0.5', kind: 'docker', image: 'rabbitmq-perf-gate/rabbitmq:4.0.5', configFiles: [], nodes: 1, env: {}, setup: [], network: 'host', evidence: false },
    { runId: RUN, plugins: ['rabbitmq_mqtt'] },
  );
  mgmt = new ManagementClient(handle.managementUrl);
}, 300_000);

afterAll(async () => {
  delete process.env[STALL_ENV];
  for (const p of proxies) await p.close();
  await handle?.stop();
  await removeRunContainers(RUN);
}, 60_000);

/** A trial's context with `protocol`'s endpoint behind a fresh fragmenting proxy. */
async function behindProxy(protocol: ProtocolName, seed: number) {
  const [host, port] = handle.info.endpoints![protocol]!.split(':');
  const proxy = await startChunkingProxy({ host, port: Number(port) }, seed);
  proxies.push(proxy);
  const vhost = `${RUN}-${++vhosts}`;
  await mgmt.createVhost(vhost, 'guest');
  return { proxy, vhost, ctx: { managementUrl: handle.managementUrl, vhost, endpoints: { [protocol]: `127.0.0.1:${proxy.port}` } } };
}

const short = (id: string) => ({ ...ofKind(resolveScenarios(id).scenarios[0], 'protocol'), warmupSeconds: 0.5, durationSeconds: 2 });

describe('protocol drivers through a fragmenting proxy', () => {
  it.each([
    ['AMQP 1.0', 'amqp10_one_fast', 'amqp-1.0'],
    ['MQTT 5 at QoS 1', 'mqtt5_pubsub', 'mqtt'],
  ] as const)(
    '%s stays valid with frames split at arbitrary bytes',
    async (_name, id, protocol) => {
      const { proxy, vhost, ctx } = await behindProxy(protocol, 7);
      const spec = short(id);
      const r = await runProtocol(spec, amqpUrlForVhost(handle.amqpUrl, vhost), ctx);
      expect(r.valid, r.invalidReason).toBe(true);
      expect(r.metrics.consumed_rate).toBeGreaterThan(0);
      expect(r.metrics.confirmed_rate).toBeGreaterThan(0);
      expect(r.histograms.latency).toBeTruthy();
      // Every connection went through the proxy, and what it carried was cut into many pieces.
      expect(proxy.stats.connections).toBe(2);
      expect(proxy.stats.pieces).toBeGreaterThan(1000);
      expect(proxy.stats.down / proxy.stats.pieces).toBeLessThan(40);
      await mgmt.deleteVhost(vhost);
    },
    60_000,
  );

  it.each([
    ['AMQP 1.0', 'amqp10_one_fast', 'amqp-1.0'],
    ['MQTT 3.1.1 at QoS 1', 'mqtt_pubsub[qos=1]', 'mqtt'],
  ] as const)(
    '%s: a broker that goes silent mid-trial ends it as stalled, in bounded time',
    async (_name, id, protocol) => {
      process.env[STALL_ENV] = '2';
      const { proxy, vhost, ctx } = await behindProxy(protocol, 11);
      const spec = { ...short(id), durationSeconds: 20 };
      setTimeout(() => proxy.freeze(), 1500);
      const t0 = Date.now();
      const r = await runProtocol(spec, amqpUrlForVhost(handle.amqpUrl, vhost), ctx);
      const took = (Date.now() - t0) / 1000;
      expect(r.valid).toBe(false);
      expect(r.invalidReason).toMatch(/^stalled: no progress for 2 s \(waiting for publishes .* on (rhea|mqtt) \d/);
      // Stall limit + bounded closes, well before the 20.5 s the trial would otherwise run.
      expect(took).toBeLessThan(12);
      delete process.env[STALL_ENV];
      await mgmt.deleteVhost(vhost);
    },
    60_000,
  );
});
