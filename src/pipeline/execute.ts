// Stage 3 of a run — execute: the interleaved trial plan, trial by trial. A resumed run's kept
// trials are taken instead of run again; after each trial the caller may save a checkpoint; a
// same-run A/B with looks asks its stopping policy (SequentialRun, src/compare/sequential.ts) at
// each completed round whether a scenario is decided (its remaining rounds skipped) or failed
// (fail-fast: the undecided ones stop there too). A pair whose two trials saw the machine's other
// load differ (pairDisturbance, src/metrics/machine.ts) is not compared: both its trials are marked
// invalid, and an undecided scenario goes on to its next look. Running one trial is the caller's (the broker
// stage's handles, the idle target frozen, the machine watched), so this loop runs without a broker
// in its tests.
import type { PlannedTrial } from '../plan/plan';
import { estimateSeconds } from '../plan/plan';
import { answerFor } from '../compare/compare';
import type { SequentialDesign } from '../compare/sequential';
import { pairDisturbance } from '../metrics/machine';
import type { Comparison, TrialResult } from '../schema/types';
import type { RunState } from './state';

/** What the loop reads and records of a run. */
export type ExecuteState = Pick<RunState, 'ui' | 'opts' | 'specs' | 'scenarios' | 'design' | 'seq' | 'kept' | 'trials' | 'errors' | 'trialSignal' | 'planned' | 'lastRun'>;

export interface TrialRunner {
  /** Runs one planned trial on its target. */
  run(p: PlannedTrial): Promise<TrialResult>;
  /** After each trial this run ran itself (not a kept one): e.g. save a checkpoint. */
  ran?(): void;
}

/** Runs `plan` until it ends, every scenario stopped, or the run's signal aborts. */
export async function execute(s: ExecuteState, plan: PlannedTrial[], runner: TrialRunner): Promise<void> {
  const { ui, seq } = s;
  let remaining = estimateSeconds(plan);
  for (const [i, p] of plan.entries()) {
    if (s.trialSignal.aborted) break;
    if (seq && !seq.runs(p.scenario.id, p.trial)) continue;
    let result = s.kept.get(p.order);
    if (!result) {
      result = await runner.run(p);
      s.lastRun = result;
    }
    s.trials.push(result);
    // This trial's round of its scenario: complete once every target has run it.
    const round = s.trials.filter((t) => t.scenario === p.scenario.id && t.trial === p.trial);
    const roundDone = round.length === s.specs.length;
    if (s.opts.reference && roundDone && round.length === 2) {
      const why = dropDisturbedPair(round);
      if (why) ui.info(`${p.scenario.id}, pair ${p.trial + 1}: not compared: ${why}`);
    }
    remaining -= estimateSeconds([p]);
    if (result === s.lastRun) {
      ui.trialDone(s.trials.length, s.planned, result, Math.max(0, remaining));
      runner.ran?.();
    }
    if (result.error) s.errors.push({ scope: `${p.scenario.id} on ${p.target}, trial ${p.trial + 1}`, message: result.error });
    if (!seq || !s.opts.reference || !seq.isLook(p.trial + 1) || !roundDone) continue;
    const comparisons = seq.compareAt(p.scenario, s.trials, s.opts.candidate, s.opts.reference);
    const event = seq.look(p.scenario.id, p.trial + 1, comparisons);
    if (event.stop) ui.info(`${p.scenario.id}: ${lookLine(comparisons, p.trial + 1, s.design!, event.stop)}`);
    if (event.stop || event.failFast) {
      // What is left of the plan: the rounds the policy still runs.
      const rest = plan.slice(i + 1).filter((q) => seq.runs(q.scenario.id, q.trial));
      s.planned = s.trials.length + rest.length;
      remaining = estimateSeconds(rest);
    }
  }
  const ran = new Map(s.scenarios.map((x) => [x.id, s.trials.filter((t) => t.scenario === x.id && t.target === s.opts.candidate.id).length]));
  const cut = seq?.finish(ran) ?? [];
  if (cut.length) ui.info(`fail-fast: ${seq!.failedFast!.scenario} failed after ${seq!.failedFast!.pairs} pairs, so ${cut.join(', ')} stopped there too (fail-fast: false runs each until decided)`);
}

/** A completed pair: if the machine disturbed it, both trials are marked invalid (its reason) and
 *  the reason returned. */
function dropDisturbedPair(pair: TrialResult[]): string | undefined {
  if (!pair.every((t) => t.valid)) return undefined;
  const why = pairDisturbance(pair[0].machine, pair[1].machine);
  if (!why) return undefined;
  for (const t of pair) Object.assign(t, { valid: false, invalidReason: why });
  return why;
}

/** One log line for a scenario that stopped at a look: its answers, why, and the pairs it took. */
function lookLine(cs: Comparison[], pairs: number, d: SequentialDesign, stop: 'decided' | 'cap'): string {
  const k = d.looks.indexOf(pairs) + 1;
  const gating = cs.filter((c) => c.gating);
  const answers = gating
    .map((c) => `${c.metric} ${answerFor(c)}${c.bound !== null && c.bound !== undefined && answerFor(c) !== 'regression' ? ` (bound ${(100 * Math.max(0, c.bound)).toFixed(1)} %)` : ''}`)
    .join(', ');
  if (stop === 'cap') return `ran to the cap, ${pairs} pairs, not decided: ${answers}`;
  return `decided at look ${k} of ${d.looks.length}, after ${pairs} pairs: ${answers}${k < d.looks.length ? '; its remaining rounds are skipped' : ''}`;
}
