// The MQTT driver (mqtt.js), after omq's mqtt mode: one connection per producer and per consumer,
// MQTT 3.1.1 or 5, QoS 0 or 1 for publishes and subscriptions, every consumer subscribed to the
// scenario's topic (RabbitMQ routes it through amq.topic). The trial's vhost is chosen by the
// user name (`vhost:user`, which both the 3.x plugin and native MQTT accept). QoS 1 publishes
// resolve on PUBACK (the broker's confirm), QoS 0 ones once written. Idle connections (memory
// per connection, idle.ts) connect and do nothing else, as in the 3.12 native-MQTT post's test.
import { connectAsync, type MqttClient } from 'mqtt';
import type { MqttProtocol, ProtocolScenario } from '../../schema/types';
import { clientName, type DriverConsumer, type DriverTarget, type ProtocolDriver } from './driver';

/** The topic a scenario's queue name becomes. */
export const mqttTopic = (queue: string) => `perf-gate/${queue}`;

export function mqttDriver(spec: ProtocolScenario, t: DriverTarget): ProtocolDriver {
  const p = spec.protocol as MqttProtocol;
  const topic = mqttTopic(spec.workload.queue);
  const clients: MqttClient[] = [];
  const open = async (id: string, onError?: (m: string) => void): Promise<MqttClient> => {
    const c = await connectAsync({
      protocol: 'mqtt',
      host: t.host,
      port: t.port,
      username: `${t.vhost}:${t.user}`,
      password: t.pass,
      clientId: `${t.vhost}-${id}`,
      protocolVersion: p.version === '5' ? 5 : 4,
      clean: true,
      keepalive: 60,
      reconnectPeriod: 0,
      connectTimeout: 15_000,
    });
    c.on('error', (e) => onError?.(`MQTT client ${id}: ${e.message}`));
    clients.push(c);
    return c;
  };
  const closer = (c: MqttClient): DriverConsumer => ({ close: () => c.endAsync(true) });
  return {
    client: clientName('mqtt'),
    confirms: p.qos === 1,
    batch: 1,
    prepare: async () => undefined,
    async producer(i, onError) {
      const c = await open(`p${i}`, onError);
      return {
        send: async (bodies) => {
          await c.publishAsync(topic, bodies[0], { qos: p.qos });
        },
        close: () => c.endAsync(true),
      };
    },
    async consumer(i, onMessage, onError) {
      const c = await open(`c${i}`, onError);
      c.on('message', (_topic, payload) => onMessage(payload));
      const [grant] = await c.subscribeAsync(topic, { qos: p.qos });
      if (!grant || grant.qos !== p.qos) throw new Error(`the broker granted QoS ${grant?.qos} for ${topic}, not the ${p.qos} asked for`);
      return closer(c);
    },
    async idle(i) {
      return closer(await open(`idle${i}`));
    },
    async close() {
      await Promise.all(clients.splice(0).map((c) => c.endAsync(true).catch(() => undefined)));
    },
  };
}
