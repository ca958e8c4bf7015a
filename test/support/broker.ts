// The real local broker the integration tests talk to (the machine's RabbitMQ service, or
// whatever PERF_GATE_TEST_AMQP_URL / PERF_GATE_TEST_MANAGEMENT_URL point at), and a helper to run
// a workload spec in a fresh vhost.
import { ManagementClient } from '../../src/broker/management';
import { amqpUrlForVhost } from '../../src/broker/urls';
import { perfTestDefaults } from '../../src/config/perftest-args';
import type { MessagingScenario, WorkloadParams } from '../../src/schema/types';

export const AMQP_URL = process.env.PERF_GATE_TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
export const MANAGEMENT_URL = process.env.PERF_GATE_TEST_MANAGEMENT_URL ?? 'http://guest:guest@127.0.0.1:15672';

export function spec(id: string, w: Partial<WorkloadParams>, seconds = { warmup: 1, duration: 3 }): MessagingScenario {
  return {
    id,
    kind: 'messaging',
    description: id,
    origin: { source: 'test', command: '' },
    workload: { ...perfTestDefaults(id), ...w },
    warmupSeconds: seconds.warmup,
    durationSeconds: seconds.duration,
    gate: [],
    tolerances: {},
    file: 'test',
    lines: {},
  };
}

/** Creates a throw-away vhost and returns its AMQP URL and a cleanup function. */
export async function freshVhost(name: string): Promise<{ url: string; mgmt: ManagementClient; vhost: string; drop: () => Promise<void> }> {
  const mgmt = new ManagementClient(MANAGEMENT_URL);
  const vhost = `perf-gate-test-${name}-${process.pid}-${Date.now()}`;
  await mgmt.createVhost(vhost, 'guest');
  return { url: amqpUrlForVhost(AMQP_URL, vhost), mgmt, vhost, drop: () => mgmt.deleteVhost(vhost) };
}
