// A profiled trial: one extra trial of a scenario on a target, with the target's perf recording
// (src/broker/profile.ts) started as the runner's window opens and stopped as it closes (the same
// window announcements the broker evidence uses). Its result is not a sample: the pipeline keeps
// only the folded stacks, for a differential flame graph of a failing scenario.
import type { BrokerHandle } from '../broker/provider';
import type { Focus } from '../broker/focus';
import type { Folded, FlameGraph } from '../metrics/flame';
import type { ScenarioSpec } from '../schema/types';
import { describeError } from '../schema/errors';
import { onNextWindow } from '../metrics/selfload';
import type { PlannedTrial } from '../plan/plan';
import { runTrial } from './trial';

export async function profiledTrial(p: PlannedTrial, broker: BrokerHandle & Required<Pick<BrokerHandle, 'profile'>>, runId: string, signal?: AbortSignal): Promise<Folded> {
  const session = broker.profile();
  let started = false;
  let stopped: Promise<Folded> | undefined;
  const close = onNextWindow({
    start: () => {
      started = true;
      session.start();
    },
    end: () => {
      stopped = session.stop();
    },
  });
  try {
    const r = await runTrial(p, broker, runId, signal);
    if (!r.valid) throw new Error(`the profiled trial failed: ${r.invalidReason ?? r.error}`);
  } finally {
    close();
    if (started && !stopped) stopped = session.stop();
    stopped?.catch(() => undefined); // awaited below, or dropped with the trial's own error
  }
  if (!stopped) throw new Error('the scenario announced no measured window');
  return stopped;
}

/**
 * Differential flame graphs of the failing scenarios: one profiled trial of each on the candidate
 * and on the reference (the idle one frozen, as in the run), after the measured trials and before
 * the brokers stop. A failure to profile becomes the note, never the run's error.
 */
export async function flameGraphs(
  failing: ScenarioSpec[],
  candidate: BrokerHandle,
  reference: BrokerHandle,
  focus: Focus,
  runId: string,
  signal?: AbortSignal,
): Promise<{ flames: FlameGraph[]; note?: string }> {
  if (!candidate.profile || !reference.profile) return { flames: [], note: 'no flame graph: only brokers this tool starts as containers can be profiled' };
  const flames: FlameGraph[] = [];
  try {
    for (const [i, scenario] of failing.entries()) {
      const folded: Folded[] = [];
      for (const h of [candidate, reference] as Array<BrokerHandle & Required<Pick<BrokerHandle, 'profile'>>>) {
        await focus.on(h);
        folded.push(await profiledTrial({ scenario, target: h.info.id, trial: 10_000 + i, order: 10_000 + i }, h, `${runId}-profile`, signal));
      }
      flames.push({ scenario: scenario.id, against: reference.info.id, candidateLabel: candidate.info.label, baselineLabel: reference.info.label, candidate: folded[0], baseline: folded[1] });
    }
  } catch (e) {
    return { flames, note: `flame graph incomplete: ${describeError(e)}` };
  }
  return { flames };
}
