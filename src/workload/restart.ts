// Node start time with N queues, as the Khepri roadmap post's stop_app/start_app rows and the
// 3.12 post's restart with 100k classic queues: declare N queues in the trial's vhost (one
// definitions import), optionally publish persistent messages to each, restart node 1 through
// the target's restartNode capability by the scenario's method (its container: single-node docker
// targets; its application: any docker target, clusters too), and time it until AMQP,
// the management API and all N queues are back. Reports node_stop_seconds, node_start_seconds and
// recovered_queues; missing queues or messages, or a node that had to be killed, make the trial
// invalid. It deletes the trial's vhost itself, waiting as long as N queues take (trial.ts bounds
// its own clean-up at 10 s, for hung brokers), so that the next trial, maybe another restart, never
// starts on a node still deleting them: a restart in mid-deletion can leave the vhost behind.
import { STOP } from './stop-reasons';
import amqp from 'amqplib';
import type { RestartScenario, RestartSpec } from '../schema/types';
import { ManagementClient } from '../broker/management';
import { APP_CALL_SECONDS, STOP_GRACE_SECONDS } from '../broker/restart';
import { SelfLoad } from '../metrics/selfload';
import { restartEstimateSeconds } from '../plan/plan';
import { nowMs } from './clock';
import { connectUrl, generatorLoad, sleep } from './pool';
import type { WorkloadResult } from './types';
import type { TrialContext } from './types';

/** Declaring the queues may take this long (Mnesia: minutes for 100k queues). */
const DECLARE_TIMEOUT_MS = 600_000;
/** Once the node is ready, how long its queues may take to be listed before the trial is invalid. */
const LISTED_WITHIN_MS = 60_000;
/** Bound on the docker provider's readiness wait after `docker start` (its default). */
const READY_SECONDS = 120;
/** Bound on deleting the trial's vhost with its N queues (Khepri: > 10 s for 1000 queues; at
 *  least 20 ms a queue, for tens of thousands on a cluster). */
const deleteTimeoutMs = (r: RestartSpec) => Math.max(120_000, r.queues * 20);
const PREFIX = 'restart-q-';

/** The trial's own limit: every bounded step of a restart, on top of the expected time (an
 *  application restart bounds its stop and its start by APP_CALL_SECONDS each). */
export function restartLimitSeconds(spec: RestartScenario): number {
  const stopping = spec.restart.method === 'app' ? 2 * APP_CALL_SECONDS : STOP_GRACE_SECONDS;
  return Math.round(stopping + READY_SECONDS + (LISTED_WITHIN_MS + deleteTimeoutMs(spec.restart)) / 1000 + 3 * restartEstimateSeconds(spec.restart));
}

export function restartDefinitions(r: RestartSpec): { queues: Array<Record<string, unknown>>; bindings: [] } {
  const args = r.queueType === 'quorum' ? { 'x-queue-type': 'quorum' } : {};
  return {
    queues: Array.from({ length: r.queues }, (_, i) => ({ name: `${PREFIX}${i + 1}`, durable: r.durable, auto_delete: false, arguments: args })),
    bindings: [],
  };
}

async function publish(amqpUrl: string, r: RestartSpec): Promise<void> {
  const conn = await amqp.connect(connectUrl(amqpUrl), { timeout: 15_000 });
  try {
    const ch = await conn.createConfirmChannel();
    const body = Buffer.alloc(r.messageSize, 0x61);
    for (let q = 1; q <= r.queues; q++) {
      for (let m = 0; m < r.messagesPerQueue; m++) ch.sendToQueue(`${PREFIX}${q}`, body, { persistent: true });
      if (q % 50 === 0 || q === r.queues) await ch.waitForConfirms();
    }
  } finally {
    await conn.close().catch(() => undefined);
  }
}

/** Messages in all N queues, by passive declares (management stats lag a restart by seconds). */
async function countMessages(amqpUrl: string, r: RestartSpec): Promise<number> {
  const conn = await amqp.connect(connectUrl(amqpUrl), { timeout: 15_000 });
  try {
    const ch = await conn.createChannel();
    let n = 0;
    for (let q = 1; q <= r.queues; q++) n += (await ch.checkQueue(`${PREFIX}${q}`)).messageCount;
    return n;
  } finally {
    await conn.close().catch(() => undefined);
  }
}

async function listed(mgmt: ManagementClient, vhost: string): Promise<number> {
  return (await mgmt.queues(vhost)).filter((q) => q.name.startsWith(PREFIX)).length;
}

export async function runRestart(spec: RestartScenario, amqpUrl: string, ctx: TrialContext, signal?: AbortSignal): Promise<WorkloadResult> {
  const r = spec.restart;
  const restartNode = ctx.restartNode?.[r.method];
  if (!restartNode) {
    throw new Error(`scenario ${spec.id} restarts the broker node (method ${r.method}), which this target cannot do: see src/broker/capabilities.ts`);
  }
  const mgmt = new ManagementClient(ctx.managementUrl);
  const selfLoad = new SelfLoad();
  const start = nowMs();
  const metrics: Record<string, number> = {};
  const done = (invalid?: string): WorkloadResult => ({
    metrics,
    series: [],
    histograms: {},
    valid: !invalid,
    invalidReason: invalid,
    generator: generatorLoad(selfLoad.stop(), (nowMs() - start) / 1000, r.queues * Math.max(1, r.messagesPerQueue)),
  });
  try {
    selfLoad.start();
    await mgmt.request('POST', `/api/definitions/${encodeURIComponent(ctx.vhost)}`, restartDefinitions(r), DECLARE_TIMEOUT_MS);
    const before = await listed(mgmt, ctx.vhost);
    if (before !== r.queues) return done(`${before} of ${r.queues} queues exist after declaring them, before the restart`);
    if (r.messagesPerQueue > 0) await publish(amqpUrl, r);
    if (signal?.aborted) return done(STOP.cancelled);

    // Not abortable: a node left stopped would fail every later trial on this target.
    const restart = await restartNode();
    const ready = nowMs();
    metrics.node_stop_seconds = restart.stopSeconds;
    const expected = r.durable ? r.queues : 0;
    let found = -1;
    let lastError = '';
    while (nowMs() - ready < LISTED_WITHIN_MS && !signal?.aborted) {
      try {
        found = await listed(mgmt, ctx.vhost);
        if (found === expected) break;
      } catch (e) {
        lastError = ` (last error: ${(e as Error).message})`;
      }
      await sleep(250);
    }
    metrics.recovered_queues = Math.max(0, found);
    if (found !== expected) {
      if (signal?.aborted) return done(STOP.cancelled);
      const what = r.durable ? 'durable queues were back' : 'transient queues were still there (a restart deletes them)';
      return done(`${Math.max(0, found)} of ${r.queues} ${what} ${LISTED_WITHIN_MS / 1000} s after the node was ready${lastError}`);
    }
    metrics.node_start_seconds = Math.round((restart.startSeconds + (nowMs() - ready) / 1000) * 1000) / 1000;
    if (restart.killed) {
      return done(`the node did not stop within ${STOP_GRACE_SECONDS} s and was killed, so its start was a crash recovery and is not comparable`);
    }
    if (r.messagesPerQueue > 0) {
      const messages = await countMessages(amqpUrl, r);
      const sent = r.queues * r.messagesPerQueue;
      if (messages !== sent) return done(`${messages} of ${sent} persistent messages were back after the restart`);
    }
    return done();
  } finally {
    selfLoad.stop();
    await mgmt.deleteVhost(ctx.vhost, deleteTimeoutMs(r)).catch(() => undefined);
  }
}
