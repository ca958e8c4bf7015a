// Runs one planned trial in its own throw-away vhost on the target broker, with a hard time
// limit, and packages the outcome as a TrialResult. A failing trial becomes an invalid result
// with its error, so the other trials and scenarios still report.
import type { BrokerHandle } from '../broker/provider';
import { ManagementClient } from '../broker/management';
import { amqpUrlForVhost, credentials } from '../broker/urls';
import { describeError } from '../config/errors';
import type { PlannedTrial } from '../plan/plan';
import type { TrialResult } from '../schema/types';
import { runWorkload } from './engine';

/** Extra seconds a trial may take beyond warm-up + window (connections, topology, teardown). */
const TRIAL_GRACE_SECONDS = 90;

export async function runTrial(p: PlannedTrial, broker: BrokerHandle, runId: string, signal?: AbortSignal): Promise<TrialResult> {
  const startedAt = new Date().toISOString();
  const base = { scenario: p.scenario.id, target: p.target, trial: p.trial, order: p.order, startedAt };
  const mgmt = new ManagementClient(broker.managementUrl);
  const vhost = `perf-gate-${runId}-${p.order}`;
  const limitMs = (p.scenario.warmupSeconds + p.scenario.durationSeconds + TRIAL_GRACE_SECONDS) * 1000;
  const limit = AbortSignal.timeout(limitMs);
  const combined = signal ? AbortSignal.any([signal, limit]) : limit;
  let timer: NodeJS.Timeout | undefined;
  try {
    await mgmt.createVhost(vhost, credentials(broker.amqpUrl).user);
    const work = runWorkload(p.scenario, amqpUrlForVhost(broker.amqpUrl, vhost), combined, { managementUrl: broker.managementUrl, vhost });
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`trial exceeded its time limit of ${Math.round(limitMs / 1000)} s`)), limitMs + 15_000);
    });
    const r = await Promise.race([work, timeout]);
    return { ...base, ...r };
  } catch (err) {
    const message = describeError(err);
    return { ...base, valid: false, invalidReason: message, error: message, metrics: {}, series: [], histograms: {} };
  } finally {
    clearTimeout(timer);
    await mgmt.deleteVhost(vhost).catch(() => undefined);
  }
}
