// Runs one planned trial in its own throw-away vhost on the target broker, with a hard time
// limit, and packages the outcome as a TrialResult. A failing trial becomes an invalid result
// with its error, so the other trials and scenarios still report. A trial ends in bounded time
// whatever the broker does (e.g. a SIGSTOPped broker that accepts TCP but never answers): once its
// own limit or the caller's signal (cancel, the run's time limit) fires, the workload gets
// WIND_DOWN_MS to stop cleanly before the trial is given up, and the vhost clean-up is bounded.
// The trial's context carries the target's capabilities (a node restart, where there is one).
// Before the workload starts, the trial vhost receives the target's vhost-scoped configuration
// (src/broker/vhost-config.ts), so what a target declares is what the trial measures; after the
// window, the first round reads its queues back as the broker ran them (src/broker/effective.ts)
// and, where the target gives broker evidence, its largest queue processes.
import { STOP } from './stop-reasons';
import type { BrokerHandle } from '../broker/provider';
import { ManagementClient } from '../broker/management';
import { applyVhostConfig, readVhostConfig, vhostOfUrl } from '../broker/vhost-config';
import { readQueues } from '../broker/effective';
import { amqpUrlForVhost, credentials } from '../broker/urls';
import { describeError } from '../schema/errors';
import type { PlannedTrial } from '../plan/plan';
import type { TrialResult } from '../schema/types';
import { runWorkload } from './scenario';
import { evidenceWindow } from './evidence-window';
import { readTopQueues } from '../broker/evidence';
import { restartLimitSeconds } from './restart';

/** Extra seconds a trial may take beyond warm-up + window (connections, topology, teardown). */
const TRIAL_GRACE_SECONDS = 90;
/** After an abort, how long the workload may take to stop before the trial is given up. */
const WIND_DOWN_MS = 10_000;
/** Bound on deleting the trial's vhost (a hung broker must not hold the run). */
const CLEANUP_MS = 10_000;

/** The reason a run's signal was aborted with, in words ("the run was interrupted", the time
 *  limit's sentence), or "the run was cancelled" when it carries none. */
export function abortReason(signal: AbortSignal): string {
  const r = signal.reason as { name?: string; message?: string } | undefined;
  return r?.message && r.name !== 'AbortError' && r.name !== 'TimeoutError' ? r.message : 'the run was cancelled';
}

/** Why a trial was stopped, in words: its own limit, or the reason the caller aborted with. */
function stopReason(own: AbortSignal, ownLimitS: number, caller?: AbortSignal): string {
  if (caller?.aborted) return abortReason(caller);
  return own.aborted ? `trial exceeded its time limit of ${ownLimitS} s` : STOP.cancelled;
}

export async function runTrial(p: PlannedTrial, broker: BrokerHandle, runId: string, signal?: AbortSignal): Promise<TrialResult> {
  const startedAt = new Date().toISOString();
  const base = { scenario: p.scenario.id, target: p.target, trial: p.trial, order: p.order, startedAt };
  const mgmt = new ManagementClient(broker.managementUrl);
  const vhost = `perf-gate-${runId}-${p.order}`;
  const budget = p.scenario.kind === 'restart' ? restartLimitSeconds(p.scenario) : p.scenario.warmupSeconds + p.scenario.durationSeconds;
  const limitS = budget + TRIAL_GRACE_SECONDS;
  const limit = AbortSignal.timeout(limitS * 1000);
  const combined = signal ? AbortSignal.any([signal, limit]) : limit;
  const why = () => stopReason(limit, limitS, signal);
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    const work = (async () => {
      // The target's own vhost-scoped configuration (policies, limits, …) reaches the trial vhost.
      // (A user who may not read it was warned once by the pipeline; what was read is applied or the trial fails.)
      const inherited = await readVhostConfig(mgmt, vhostOfUrl(broker.amqpUrl)).catch(() => undefined);
      await mgmt.createVhost(vhost, credentials(broker.amqpUrl).user, inherited?.defaultQueueType);
      if (inherited) await applyVhostConfig(mgmt, inherited, vhost);
      const ctx = { managementUrl: broker.managementUrl, vhost, restartNode: broker.restartNode, endpoints: broker.info.endpoints };
      // Broker evidence is read as the runner's window opens and closes (nothing runs in the broker meanwhile).
      const window = broker.evidence ? evidenceWindow(broker.evidence) : undefined;
      const r = await runWorkload(p.scenario, amqpUrlForVhost(broker.amqpUrl, vhost), combined, ctx).finally(() => window?.close());
      const evidence = r.valid && window ? await window.result(r.metrics) : undefined;
      // The first round records its queues as the broker ran them (after the window; bounded).
      const first = p.trial === 0 && !combined.aborted;
      const queues = first ? await readQueues(mgmt, vhost).catch(() => undefined) : undefined;
      const topQueues = first && window ? await readTopQueues(mgmt, vhost).catch(() => undefined) : undefined;
      return { ...r, ...(queues ? { queues } : {}), ...(evidence ? { evidence } : {}), ...(topQueues?.length ? { topQueues } : {}) };
    })();
    work.catch(() => undefined); // it may settle after the race below is decided
    const givenUp = new Promise<never>((_, reject) => {
      onAbort = () => {
        timer = setTimeout(() => reject(new Error(`${why()}; the trial did not stop within ${WIND_DOWN_MS / 1000} s and was abandoned`)), WIND_DOWN_MS);
      };
      if (combined.aborted) onAbort();
      else combined.addEventListener('abort', onAbort, { once: true });
    });
    const r = await Promise.race([work, givenUp]);
    // The runners say STOP.cancelled for any abort; say which one.
    if (!r.valid && r.invalidReason === STOP.cancelled && combined.aborted) r.invalidReason = why();
    return { ...base, ...r };
  } catch (err) {
    const message = combined.aborted && !(err instanceof Error && err.message.startsWith(why())) ? `${why()}: ${describeError(err)}` : describeError(err);
    return { ...base, valid: false, invalidReason: message, error: message, metrics: {}, series: [], histograms: {} };
  } finally {
    clearTimeout(timer);
    if (onAbort) combined.removeEventListener('abort', onAbort);
    await mgmt.deleteVhost(vhost, CLEANUP_MS).catch(() => undefined);
  }
}
