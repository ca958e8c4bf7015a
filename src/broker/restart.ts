// Restarting a node this tool started, in place and timed: what `kind: restart` scenarios
// measure (src/workload/restart.ts). `docker stop` with a bounded grace period (SIGTERM, then
// SIGKILL), `docker start`, then the docker provider's own readiness check (AMQP + management).
// The container keeps its filesystem, so durable queues, policies, users and feature flags (e.g.
// Khepri enabled by a setup command) survive; the ports are in its config, so URLs stay valid.
import { GateError } from '../schema/errors';
import * as cli from './docker-cli';
import type { NodeRestart } from './provider';

/** Seconds `docker stop` gives RabbitMQ to shut down cleanly before it kills the container. */
export const STOP_GRACE_SECONDS = 60;

const seconds = (fromMs: number) => Math.round(performance.now() - fromMs) / 1000;

/** Stops the container, starts it again and waits for `ready` (which throws on a failed boot). */
export async function restartContainer(name: string, ready: () => Promise<void>, graceSeconds = STOP_GRACE_SECONDS): Promise<NodeRestart> {
  const t0 = performance.now();
  await cli.docker(['stop', '-t', String(graceSeconds), name], { timeoutMs: (graceSeconds + 60) * 1000 });
  const stopSeconds = seconds(t0);
  const state = await cli.containerState(name);
  if (!state || state.running) {
    throw new GateError(`container ${name} ${state ? 'was still running' : 'was gone'} after docker stop`, { field: 'image' },
      'see the docker daemon log; the target is removed at the end of the run');
  }
  // 137: SIGKILL after the grace period (or the OOM killer); RabbitMQ exits 0 on SIGTERM.
  const killed = state.exitCode === 137 || stopSeconds >= graceSeconds;
  const t1 = performance.now();
  await cli.docker(['start', name], { timeoutMs: 60_000 });
  await ready();
  return { stopSeconds, startSeconds: seconds(t1), killed };
}
