// What one trial runs, by scenario kind — one row each: the steady PerfTest run (messaging, the
// AMQP 0-9-1 driver of the messaging engine, amqp091.ts), phases, churn, a definitions import, a node
// restart, or another protocol (protocols/runner.ts). First the scenario's setup (policies through
// the management API, dead-letter queues through AMQP). A messaging run gets window checks where
// they apply — the dead-letter queue's growth (dead_lettered_rate) and, for fixed-rate workloads
// with consumers, a backlog check that makes the trial invalid when the queues grew across the
// window (the consumers fell behind the target rate, so its latency is not comparable; it is
// reported, never averaged in).
import amqp from 'amqplib';
import type { ScenarioKind, ScenarioSpec, SetupSpec } from '../schema/types';
import { ManagementClient } from '../broker/management';
import { round2 as round } from '../metrics/recorder';
import { runMessaging } from './amqp091';
import { runChurn } from './churn';
import { runImport } from './definitions-import';
import { runPhases } from './phases';
import { runRestart } from './restart';
import { runProtocol } from './protocols/runner';
import { ClientPool, connectUrl, readyDepth } from './pool';
import { queueNames } from './topology';
import type { TrialContext, WindowHooks, WorkloadResult } from './types';

export type { WorkloadResult };

/** Fixed-rate runs with consumers must not build a backlog across the window. */
export function backlogChecked(spec: ScenarioSpec): boolean {
  const w = spec.workload;
  return spec.kind === 'messaging' && (w.rate !== null || w.publishingInterval !== null) && w.producers > 0 && w.consumers > 0 && w.consumerStartDelay <= 0 && w.queueArgs['x-queue-type'] !== 'stream';
}

/** The runner of each scenario kind, and whether it needs the management API (the trial's
 *  context). One entry per kind: a new kind is a new row. */
interface KindRunner<S extends ScenarioSpec> {
  needsContext: boolean;
  run(spec: S, amqpUrl: string, ctx: TrialContext, signal: AbortSignal | undefined): Promise<WorkloadResult>;
}
type ScenarioOf<K extends ScenarioKind> = Extract<ScenarioSpec, { kind: K }>;
const RUNNERS: { [K in ScenarioKind]: KindRunner<ScenarioOf<K>> } = {
  messaging: { needsContext: false, run: (spec, url, _ctx, signal) => (backlogChecked(spec) || spec.setup?.deadLetterQueue ? runWithChecks(spec, url, signal) : runMessaging(spec, url, signal)) },
  import: { needsContext: true, run: (spec, _url, ctx, signal) => runImport(spec, ctx, signal) },
  restart: { needsContext: true, run: (spec, url, ctx, signal) => runRestart(spec, url, ctx, signal) },
  churn: { needsContext: false, run: (spec, url, _ctx, signal) => runChurn(spec, url, signal) },
  phases: { needsContext: false, run: (spec, url, _ctx, signal) => runPhases(spec, url, signal) },
  protocol: { needsContext: true, run: (spec, url, ctx, signal) => runProtocol(spec, url, ctx, signal) },
};

/** One trial of `spec` on the broker at `amqpUrl` (the trial's vhost). */
export async function runWorkload(spec: ScenarioSpec, amqpUrl: string, signal?: AbortSignal, ctx?: TrialContext): Promise<WorkloadResult> {
  const runner = runnerOf(spec);
  if ((spec.setup || runner.needsContext) && !ctx) {
    throw new Error(`scenario ${spec.id} needs the management API (policies or definitions) but the trial has no management URL`);
  }
  if (spec.setup) await applySetup(spec.setup, amqpUrl, ctx!);
  return runner.run(spec, amqpUrl, ctx as TrialContext, signal);
}

/** The table's row for a spec's kind, typed for that spec (TypeScript cannot relate a union's
 *  `kind` to the row it indexes, hence the one cast). */
function runnerOf(spec: ScenarioSpec): KindRunner<ScenarioSpec> {
  return RUNNERS[spec.kind] as KindRunner<ScenarioSpec>;
}

/** rabbitmq/testing's `rabbitmqadmin declare policy` and `perf_test declare_*_dlq` lines. */
async function applySetup(setup: SetupSpec, amqpUrl: string, ctx: TrialContext): Promise<void> {
  const mgmt = new ManagementClient(ctx.managementUrl);
  for (const p of setup.policies) {
    await mgmt.setPolicy(ctx.vhost, p.name, { pattern: p.pattern, definition: p.definition, 'apply-to': p.applyTo, priority: p.priority });
  }
  if (!setup.queues.length) return;
  const conn = await amqp.connect(connectUrl(amqpUrl));
  try {
    const ch = await conn.createChannel();
    for (const q of setup.queues) await ch.assertQueue(q, { durable: true, autoDelete: false });
  } finally {
    await conn.close().catch(() => undefined);
  }
}

async function runWithChecks(spec: ScenarioSpec, amqpUrl: string, signal: AbortSignal | undefined): Promise<WorkloadResult> {
  const pool = new ClientPool(amqpUrl, { error: () => undefined });
  const mon = await pool.channel(await pool.open());
  const queues = queueNames(spec.workload);
  const dlq = spec.setup?.deadLetterQueue;
  const check = backlogChecked(spec);
  const depths = () => Promise.all([check ? readyDepth(mon, queues) : 0, dlq ? readyDepth(mon, [dlq]) : 0]);
  let atStart: Promise<number[]> = Promise.resolve([0, 0]);
  const hooks: WindowHooks = {
    windowStart: () => {
      atStart = depths();
      atStart.catch(() => undefined);
    },
    windowEnd: async (win) => {
      let q0: number, d0: number, q1: number, d1: number;
      try {
        [q0, d0] = await atStart;
        [q1, d1] = await depths();
      } catch (e) {
        return { invalidReason: `could not sample queue depths for the window checks: ${(e as Error).message}` };
      }
      const metrics: Record<string, number> = dlq ? { dead_lettered_rate: round((d1 - d0) / win.seconds) } : {};
      // Ready depth misses what unlimited-prefetch consumers hold unacked; counters catch that
      // where routing is known (direct: one queue per message; fanout: every queue).
      const copies = spec.workload.exchangeType === 'fanout' ? queues.length : spec.workload.exchangeType === 'direct' ? 1 : 0;
      const growth = Math.max(q1 - q0, copies ? win.published * copies - win.consumed : 0);
      const allowed = Math.max(100, Math.round(0.05 * win.published * Math.max(copies, 1)));
      const invalidReason =
        check && growth > allowed
          ? `the backlog grew by ${growth} messages across the window (more than ${allowed}): the consumers fell behind the fixed rate, so its latency is not comparable`
          : undefined;
      return { metrics, invalidReason };
    },
  };
  try {
    return await runMessaging(spec, amqpUrl, signal, hooks);
  } finally {
    await pool.closeAll();
  }
}
