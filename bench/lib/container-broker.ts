// A private broker for the bench scripts: the offline image started through the project's own
// docker provider (host networking, its own ports), so the measurement does not share a broker
// with other people's tests, and so its file-descriptor limit fits thousands of connections.
// Bundled and imported by bench/lib/common.mjs (containerBroker()).
import { startDocker } from '../../src/broker/docker';

export async function start(image = 'rabbitmq-perf-gate/rabbitmq:3.10.8', env: Record<string, string> = {}, configFiles: string[] = []) {
  const h = await startDocker(
    {
      id: 'bench',
      label: 'bench broker',
      kind: 'docker',
      image,
      configFiles,
      nodes: 1,
      env,
      setup: [],
      network: 'host',
    },
    { log: (l) => process.stderr.write(`  [broker] ${l}\n`) },
  );
  return { amqpUrl: h.amqpUrl, managementUrl: h.managementUrl, container: h.containers[0], version: h.info.rabbitmqVersion, stop: () => h.stop() };
}
