// Restarting a node this tool started, in place and timed: what `kind: restart` scenarios
// measure (src/workload/restart.ts), by either method (RestartMethod). Container: `docker stop`
// with a bounded grace period (SIGTERM, then SIGKILL), `docker start`, then the docker provider's
// own readiness check (AMQP + management). The container keeps its filesystem, so durable queues,
// policies, users and feature flags (e.g. Khepri enabled by a setup command) survive; the ports
// are in its config, so URLs stay valid. App: `rabbit:stop()` and `rabbit:start()` on the node
// (what rabbitmqctl stop_app / start_app call), each timed inside the node by timer:tc so that the
// CLI's own start-up is not counted; the VM, its distribution and epmd stay up, which is what lets
// a node of a cluster restart (host networking: the cluster's nodes share one epmd).
import { GateError } from '../schema/errors';
import * as cli from './docker-cli';
import type { NodeRestart } from './provider';

/** Seconds `docker stop` gives RabbitMQ to shut down cleanly before it kills the container. */
export const STOP_GRACE_SECONDS = 60;

const seconds = (fromMs: number) => Math.round(performance.now() - fromMs) / 1000;

/** rabbitmqctl eval of `timer:tc(rabbit, Fun, [])`: the call's seconds, or an error naming its result. */
async function timedRabbitCall(name: string, fun: 'stop' | 'start', timeoutMs: number): Promise<number> {
  const r = await cli.exec(name, ['rabbitmqctl', 'eval', `{T, R} = timer:tc(rabbit, ${fun}, []), {T, R}.`], timeoutMs);
  const m = /\{(\d+),\s*ok\}/.exec(r.output);
  if (r.code !== 0 || !m) {
    throw new GateError(
      `rabbit:${fun}() on ${name} did not return ok (exit code ${r.code}): ${r.output.slice(-300)}`,
      { field: 'image' },
      'see the container log; the target is removed at the end of the run',
    );
  }
  return Number(m[1]) / 1e6;
}

/** Bound on each of rabbit:stop() and rabbit:start() (the roadmap: 13 s and 40 s for 100,000 queues). */
export const APP_CALL_SECONDS = 600;

/** Stops node 1's RabbitMQ application and starts it again (stop_app / start_app), then waits for
 *  `ready`. start_app returns once the boot steps are done, durable queues recovered among them.
 *  A start that fails is tried once more before the error is thrown, so that later trials do not
 *  meet a node whose application is down. */
export async function restartApp(name: string, ready: () => Promise<void>, timeoutSeconds = APP_CALL_SECONDS): Promise<NodeRestart> {
  const stopSeconds = await timedRabbitCall(name, 'stop', timeoutSeconds * 1000);
  const started = await timedRabbitCall(name, 'start', timeoutSeconds * 1000).catch(async (e: unknown) => {
    await timedRabbitCall(name, 'start', timeoutSeconds * 1000).catch(() => undefined);
    throw e;
  });
  const t1 = performance.now();
  await ready();
  return { stopSeconds, startSeconds: Math.round((started + (performance.now() - t1) / 1000) * 1000) / 1000, killed: false };
}

/** Stops the container, starts it again and waits for `ready` (which throws on a failed boot). */
export async function restartContainer(name: string, ready: () => Promise<void>, graceSeconds = STOP_GRACE_SECONDS): Promise<NodeRestart> {
  const t0 = performance.now();
  await cli.docker(['stop', '-t', String(graceSeconds), name], { timeoutMs: (graceSeconds + 60) * 1000 });
  const stopSeconds = seconds(t0);
  const state = await cli.containerState(name);
  if (!state || state.running) {
    throw new GateError(
      `container ${name} ${state ? 'was still running' : 'was gone'} after docker stop`,
      { field: 'image' },
      'see the docker daemon log; the target is removed at the end of the run',
    );
  }
  // 137: SIGKILL after the grace period (or the OOM killer); RabbitMQ exits 0 on SIGTERM.
  const killed = state.exitCode === 137 || stopSeconds >= graceSeconds;
  const t1 = performance.now();
  await cli.docker(['start', name], { timeoutMs: 60_000 });
  await ready();
  return { stopSeconds, startSeconds: seconds(t1), killed };
}
