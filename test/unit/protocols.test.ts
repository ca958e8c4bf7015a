// The protocol rules that need no broker: which scenario a target cannot run and why (versions,
// listeners, restarts), the plugins and listener lines a docker target gets, the protocol axes'
// ids and defaults, the body stamp every protocol carries, and the stream client's version guard.
import { describe, expect, it } from 'vitest';
import { unmetNeed, versionAtLeast, type Capable } from '../../src/broker/capabilities';
import { layoutConfig, listenerLines } from '../../src/broker/docker';
import { pluginsFor } from '../../src/broker/endpoints';
import { resolveScenarios } from '../../src/config/catalogue';
import { parseScenario } from '../../src/config/scenario-file';
import type { TargetInfo } from '../../src/schema/types';
import { sendTimeOf, stampedBody } from '../../src/workload/stamp';
import { beforeCommandVersions } from '../../src/workload/protocols/stream-compat';
import { ofKind } from '../support/kinds';

const info = (version: string, endpoints: TargetInfo['endpoints'], kind: TargetInfo['kind'] = 'docker'): TargetInfo => ({
  id: `v${version}`,
  label: `RabbitMQ ${version}`,
  kind,
  amqpUrl: 'amqp://x',
  managementUrl: 'http://x',
  rabbitmqVersion: version,
  erlangVersion: '26',
  nodes: [],
  endpoints,
});
const ALL = { stream: '127.0.0.1:1', mqtt: '127.0.0.1:2', 'amqp-1.0': '127.0.0.1:3' };
const timed = async () => ({ stopSeconds: 1, startSeconds: 1, killed: false });
/** restart: what a docker target offers (single node: both methods; a cluster: its application only). */
const handle = (i: TargetInfo, restart: 'single' | 'cluster' | false = 'single'): Capable => ({
  info: i,
  ...(restart ? { restartNode: { app: timed, ...(restart === 'single' ? { container: timed } : {}) } } : {}),
});
const spec = (id: string) => resolveScenarios(id).scenarios[0];

describe('what a target cannot run', () => {
  it('compares versions by their numbers, ignoring suffixes', () => {
    expect(versionAtLeast('3.10.8', '3.13')).toBe(false);
    expect(versionAtLeast('3.13.0', '3.13')).toBe(true);
    expect(versionAtLeast('4.0.5', '4.0')).toBe(true);
    expect(versionAtLeast('3.9.29', '4.0')).toBe(false);
    expect(versionAtLeast('4.1.0-rc.1', '4.0')).toBe(true);
    expect(versionAtLeast('unknown', '4.0')).toBe(true);
  });

  it('names the version a feature needs and the target that lacks it', () => {
    const old = handle(info('3.10.8', ALL));
    const now = handle(info('4.0.5', ALL));
    expect(unmetNeed(spec('amqp10_one_fast'), [now])).toBeUndefined();
    expect(unmetNeed(spec('amqp10_one_fast'), [now, old])?.why).toBe('needs native AMQP 1.0, from RabbitMQ 4.0 on; RabbitMQ 3.10.8 (RabbitMQ 3.10.8) does not have it');
    expect(unmetNeed(spec('stream_filtering'), [old])?.why).toMatch(/^needs stream filtering, from RabbitMQ 3.13 on/);
    expect(unmetNeed(spec('mqtt5_pubsub'), [old])?.why).toMatch(/^needs MQTT 5, from RabbitMQ 3.13 on/);
    expect(unmetNeed(spec('stream_one_fast'), [old])).toBeUndefined();
    expect(unmetNeed(spec('one_fast'), [old])).toBeUndefined();
  });

  it('names a target without the listener and how to enable it', () => {
    const url = handle(info('3.13.7', { 'amqp-1.0': '127.0.0.1:5672' }, 'url'), false);
    const u = unmetNeed(spec('mqtt_idle_connections'), [url]);
    expect(u?.why).toBe('speaks MQTT, for which RabbitMQ 3.13.7 (an existing broker, attached by URL) has no listener');
    expect(u?.fix).toMatch(/^Enable rabbitmq_mqtt on that broker/);
    expect(unmetNeed(spec('node_start_classic_queues'), [url])?.why).toMatch(/cannot be restarted$/);
  });

  it("restarts a cluster's node 1 by its application only, and says how when a scenario asks for its container", () => {
    const cluster = handle(info('4.0.5', ALL), 'cluster');
    const single = handle(info('4.0.5', ALL));
    expect(spec('start_app_classic_queues')).toMatchObject({ kind: 'restart', restart: { method: 'app', queues: 1000 } });
    expect(unmetNeed(spec('start_app_classic_queues'), [cluster, single])).toBeUndefined();
    const u = unmetNeed(spec('node_start_classic_queues'), [single, cluster]);
    expect(u?.why).toBe("restarts the broker node's container, which needs a single-node docker target started by this tool; RabbitMQ 4.0.5 (a cluster) cannot be restarted");
    expect(u?.fix).toMatch(/restart\.method: app/);
    const url = handle(info('4.0.5', ALL, 'url'), false);
    expect(unmetNeed(spec('start_app_classic_queues'), [url])?.why).toBe(
      "restarts node 1's RabbitMQ application, which needs a docker target started by this tool; RabbitMQ 4.0.5 (an existing broker, attached by URL) cannot be restarted",
    );
  });
});

describe('a docker target for protocol scenarios', () => {
  it("enables the plugins the scenarios need, next to the user's and its own", () => {
    expect(pluginsFor(resolveScenarios('protocols').scenarios)).toEqual(['rabbitmq_mqtt', 'rabbitmq_stream']);
    expect(pluginsFor(resolveScenarios('pr').scenarios)).toEqual([]);
    const user = { path: 'enabled_plugins', content: Buffer.from('[rabbitmq_shovel].\n') };
    const l = layoutConfig([user], ['rabbitmq_stream']);
    expect(l.plugins).toEqual(['rabbitmq_shovel', 'rabbitmq_management', 'rabbitmq_prometheus', 'rabbitmq_stream']);
    expect(l.files.get('enabled_plugins')?.toString()).toBe('[rabbitmq_shovel,rabbitmq_management,rabbitmq_prometheus,rabbitmq_stream].\n');
  });

  it("gives every protocol plugin its own port (MQTT's 1883 would collide) and advertises the stream port the runner reaches", () => {
    const inner = { amqp: 1, mgmt: 2, prom: 3, stream: 4, mqtt: 5 };
    expect(listenerLines(['rabbitmq_management'], inner, 4)).toEqual(['listeners.tcp.default = 1', 'management.tcp.port = 2', 'prometheus.tcp.port = 3']);
    expect(listenerLines(['rabbitmq_stream', 'rabbitmq_mqtt'], { ...inner, stream: 5552 }, 26001).slice(3)).toEqual([
      'stream.listeners.tcp.default = 5552',
      'stream.advertised_host = 127.0.0.1',
      'stream.advertised_port = 26001',
      'mqtt.listeners.tcp.default = 5',
    ]);
  });
});

describe('protocol scenarios as data', () => {
  it('expands the protocol axis into one workload per protocol, AMQP 0-9-1 staying a messaging scenario', () => {
    const specs = resolveScenarios('protocols_one_fast').scenarios;
    expect(specs.map((s) => `${s.id}:${s.kind}`)).toEqual([
      'protocols_one_fast[protocol=amqp-0-9-1]:messaging',
      'protocols_one_fast[protocol=amqp-1.0]:protocol',
      'protocols_one_fast[protocol=stream]:protocol',
      'protocols_one_fast[protocol=mqtt]:protocol',
    ]);
    // MQTT's QoS follows the confirm window; a stream takes a stream's arguments, as -sq does.
    expect(ofKind(specs[3], 'protocol').protocol).toEqual({ name: 'mqtt', version: '3.1.1', qos: 1, idleConnections: 0 });
    expect(specs[2].workload.queueArgs['x-queue-type']).toBe('stream');
    expect(specs.every((s) => s.workload.confirm === 200 && s.workload.size === 100)).toBe(true);
  });

  it("expands sub-entry sizes and QoS levels, and keeps a protocol block's settings", () => {
    expect(resolveScenarios('stream_one_fast').scenarios.map((s) => ofKind(s, 'protocol').protocol)).toEqual([
      { name: 'stream', subEntrySize: 1, offset: 'next', backlog: 0, filterValues: 0 },
      { name: 'stream', subEntrySize: 100, offset: 'next', backlog: 0, filterValues: 0 },
    ]);
    expect(resolveScenarios('mqtt_pubsub').scenarios.map((s) => s.id)).toEqual(['mqtt_pubsub[qos=0]', 'mqtt_pubsub[qos=1]']);
    const [s] = parseScenario('id: x\ndescription: d\norigin: { source: s, command: c }\nperf-test: -x 0 -y 2\nprotocol:\n  name: stream\n  offset: first\n  backlog: 10\n', 'x.yml');
    expect(ofKind(s, 'protocol').protocol).toEqual({ name: 'stream', subEntrySize: 1, offset: 'first', backlog: 10, filterValues: 0 });
    expect(s.gate).toEqual(['consumed_rate']);
    expect(resolveScenarios('mqtt_idle_connections').scenarios[0].gate).toEqual(['memory_per_connection_kib']);
  });
});

describe('the body every protocol carries', () => {
  it('stamps a sequence and a send time, at least 12 bytes, readable back', () => {
    const b = stampedBody(100, 7, 1.7e12 + 0.25);
    expect(b.length).toBe(100);
    expect(b.readUInt32BE(0)).toBe(7);
    expect(sendTimeOf(b)).toBe(1.7e12 + 0.25);
    expect(stampedBody(3, 1, 5).length).toBe(12);
    expect(sendTimeOf(Buffer.alloc(8))).toBeNaN();
    expect(sendTimeOf(stampedBody(12, 0, Number.NaN))).toBeNaN(); // a stream backlog: no latency
  });
});

describe('the stream client guard', () => {
  it('skips the command-version exchange for brokers before 3.11, where it closes the connection', () => {
    expect(beforeCommandVersions('3.10.8')).toBe(true);
    expect(beforeCommandVersions('3.9.29')).toBe(true);
    expect(beforeCommandVersions('3.11.0')).toBe(false);
    expect(beforeCommandVersions('4.0.5')).toBe(false);
    expect(beforeCommandVersions(undefined)).toBe(false);
  });
});
