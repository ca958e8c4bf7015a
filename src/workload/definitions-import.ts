// Definitions import through the management API, as rabbitmq/testing's metadata-store tests time
// `rabbitmqctl import_definitions`: N queues × M bindings POSTed to /api/definitions/{vhost} (or,
// for the many-vhosts variant, N vhosts named after the trial through the global endpoint), then
// the same document again (re-import). Reports import_seconds and reimport_seconds, checks that
// every queue exists, and deletes the extra vhosts it created. It never touches other vhosts.
import { STOP } from './stop-reasons';
import type { ImportScenario, ImportSpec } from '../schema/types';
import { ManagementClient } from '../broker/management';
import { SelfLoad } from '../metrics/selfload';
import { nowMs } from './clock';
import { generatorLoad } from './pool';
import type { WorkloadResult } from './types';
import type { TrialContext } from './types';

/** One import may take this long before the trial gives up (Mnesia: minutes for 100k objects). */
const IMPORT_TIMEOUT_MS = 600_000;

interface Definitions {
  vhosts?: Array<{ name: string }>;
  queues: Array<Record<string, unknown>>;
  bindings: Array<Record<string, unknown>>;
}

/** The extra vhosts of the many-vhosts variant: always prefixed with the trial's own vhost. */
export function importVhosts(trialVhost: string, imp: ImportSpec): string[] {
  if (imp.vhosts > 0 && !trialVhost.startsWith('perf-gate-')) {
    throw new Error(`refusing to create vhosts next to "${trialVhost}": only trial vhosts (perf-gate-…) may have siblings`);
  }
  return Array.from({ length: imp.vhosts }, (_, i) => `${trialVhost}-v${i + 1}`);
}

export function buildDefinitions(imp: ImportSpec, vhosts: Array<string | undefined>): Definitions {
  const defs: Definitions = { queues: [], bindings: [] };
  const args = imp.queueType === 'classic' ? {} : { 'x-queue-type': imp.queueType };
  for (const vhost of vhosts) {
    const at = vhost === undefined ? {} : { vhost };
    for (let q = 1; q <= imp.queues; q++) {
      const name = `import-q-${q}`;
      defs.queues.push({ name, ...at, durable: true, auto_delete: false, arguments: args });
      for (let b = 1; b <= imp.bindingsPerQueue; b++) {
        defs.bindings.push({ source: 'amq.direct', ...at, destination: name, destination_type: 'queue', routing_key: `${name}-k${b}`, arguments: {} });
      }
    }
  }
  if (vhosts[0] !== undefined) defs.vhosts = vhosts.map((name) => ({ name: name! }));
  return defs;
}

export async function runImport(spec: ImportScenario, ctx: TrialContext, signal?: AbortSignal): Promise<WorkloadResult> {
  const imp = spec.import;
  const mgmt = new ManagementClient(ctx.managementUrl);
  const extra = importVhosts(ctx.vhost, imp);
  const defs = buildDefinitions(imp, extra.length ? extra : [undefined]);
  const path = extra.length ? '/api/definitions' : `/api/definitions/${encodeURIComponent(ctx.vhost)}`;
  const selfLoad = new SelfLoad();
  const metrics: Record<string, number> = {};
  let invalid: string | undefined;
  const timed = async (): Promise<number> => {
    const t = nowMs();
    await mgmt.request('POST', path, defs, IMPORT_TIMEOUT_MS);
    return Math.round(nowMs() - t) / 1000;
  };
  const start = nowMs();
  try {
    selfLoad.start();
    metrics.import_seconds = await timed();
    const expected = imp.queues * Math.max(1, extra.length);
    const found = await countQueues(mgmt, extra.length ? extra : [ctx.vhost]);
    if (found !== expected) invalid = `${found} of ${expected} imported queues exist after the import`;
    if (imp.reimport && !invalid && !signal?.aborted) metrics.reimport_seconds = await timed();
    if (signal?.aborted) invalid ??= STOP.cancelled;
    const load = selfLoad.stop();
    return {
      metrics,
      series: [],
      histograms: {},
      valid: !invalid,
      invalidReason: invalid,
      generator: generatorLoad(load, (nowMs() - start) / 1000, defs.queues.length + defs.bindings.length),
    };
  } finally {
    selfLoad.stop();
    for (const v of extra) await mgmt.deleteVhost(v).catch(() => undefined);
  }
}

async function countQueues(mgmt: ManagementClient, vhosts: string[]): Promise<number> {
  let n = 0;
  for (const v of vhosts) n += (await mgmt.queues(v)).filter((q) => q.name.startsWith('import-q-')).length;
  return n;
}
