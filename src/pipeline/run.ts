// The pipeline shared by the CLI and the action: configuration → broker → workload → metrics →
// compare, as five stages a run goes through — prepare (what runs: scenarios, seed, reference,
// design; ./prepare.ts) → boot (the targets side by side; ./boot.ts) → execute (the interleaved
// trial plan and the sequential stopping policy; ./execute.ts) → profile (flame graphs of a failing
// A/B; ./profile.ts) → assemble (the judged RunReport; ./assemble.ts). It always stops what it
// started and returns one RunReport; reporting and GitHub are the callers' business. Every run
// first sweeps up the containers of runs whose process is gone and watches the machine's other
// load (src/broker/machine-watch.ts). A run that stops early (interrupted, time limit) says so and
// records what a resume needs; given such a report, a run goes on with its plan, its trials kept,
// once its restarted brokers proved the same (src/broker/resume.ts).
import { focusOn } from '../broker/focus';
import { SequentialRun } from '../compare/sequential';
import { buildPlan, estimateSeconds } from '../plan/plan';
import { keptTrials } from '../broker/resume';
import { describeError } from '../schema/errors';
import type { RunReport } from '../schema/types';
import type { Ui } from '../schema/ui';
import { runTrial } from '../workload/trial';
import { assemble, packaged, warnUnmatchedPolicies } from './assemble';
import { boot, StoppedBeforeTrials } from './boot';
import { execute } from './execute';
import { prepare } from './prepare';
import { profile } from './profile';
import type { RunOptions, RunState } from './state';

export type { RunOptions, Ui };
export { candidateCouldNotStart, startFailedTarget } from './boot';
export { newRunId } from './prepare';

export async function runPipeline(given: RunOptions, ui: Ui): Promise<RunReport> {
  const s = await prepare(given, ui);
  try {
    await boot(s);
    const plan = buildPlan(
      s.scenarios,
      s.specs.map((x) => x.id),
      s.repetitions,
      s.seed,
    );
    s.planned = plan.length;
    s.focus = focusOn(s.handles, ui.warn, s.opts.freezeIdle !== false);
    if (s.prior) {
      s.kept = keptTrials(s.prior, plan, given.resume!.file);
      ui.info(`Resuming ${given.resume!.file}: ${s.kept.size} trial(s) of the interrupted run are kept, the rest of its plan runs now`);
    }
    ui.info(
      `Running ${plan.length} trials (${s.scenarios.length} scenarios × ${s.specs.length} targets × ${s.repetitions}), about ${Math.round(estimateSeconds(plan))} s, seed ${s.seed}` +
        (s.design ? `; group-sequential: each scenario judged after ${s.design.looks.join(', ')} pairs and stopped once decided` : ''),
    );
    s.seq = s.design && s.opts.reference ? new SequentialRun(s.design, s.opts.failFast !== false) : undefined;
    await execute(s, plan, {
      run: (p) => trialOnItsTarget(s, p),
      // Should the process be killed, what ran so far is written and can be resumed.
      ran: () => given.checkpoint?.(packaged(s, { why: "the run's process ended" }, undefined, true)),
    });
    await profile(s);
    warnUnmatchedPolicies(s);
  } catch (e) {
    if (!(e instanceof StoppedBeforeTrials)) throw e;
  } finally {
    s.limit.clear();
    // Side by side, as they booted: each removal waits for its container to die (about a second).
    await Promise.all(s.handles.map((h) => h.stop().catch((e) => ui.warn(`could not stop ${h.info.label}: ${describeError(e)}`))));
  }
  return assemble(s);
}

/** One trial on its target's broker: that broker thawed and the other frozen, the machine's other
 *  load measured across it. */
async function trialOnItsTarget(s: RunState, p: Parameters<typeof runTrial>[0]) {
  const handle = s.handles[s.specs.findIndex((x) => x.id === p.target)];
  await s.focus!.on(handle);
  s.watch.trialStarts();
  const result = await runTrial(p, handle, s.runId, s.trialSignal);
  const machine = await s.watch.trialEnds();
  if (machine) result.machine = machine;
  return result;
}
