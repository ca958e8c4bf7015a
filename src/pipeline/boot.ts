// Stage 2 of a run — boot: starts (or attaches to) every target side by side (src/broker/boot.ts)
// and tells what each start said; a target that cannot start ends the run, naming it
// (startFailedTarget: a bisect skips such a candidate), except the stored baseline's own broker,
// whose stored trials then decide. A resumed run's brokers must prove the same as before. Then the
// scenarios some target cannot run are skipped on every target, and a plan too small to reach
// significance is warned about before it runs.
import { bootTargets } from '../broker/boot';
import { type Capable, type Unmet, unmetNeed } from '../broker/capabilities';
import { containerLogsOf } from '../broker/docker';
import { assertDockerAvailable } from '../broker/docker-cli';
import { pluginsFor } from '../broker/endpoints';
import { checkSameBrokers } from '../broker/resume';
import { defaultRepetitions, trialsNeeded } from '../compare/compare';
import type { RunError, ScenarioSpec } from '../schema/types';
import type { Ui } from '../schema/ui';
import type { RunState } from './state';

/** Thrown when a signal came before any trial could start: straight to the report. */
export class StoppedBeforeTrials extends Error {}

/** Errors thrown because a target could not be started, by the target's id (see startFailedTarget). */
const failedStarts = new WeakMap<object, string>();

function startFailure(target: string, error: unknown): unknown {
  const e = error !== null && typeof error === 'object' ? error : new Error(String(error));
  failedStarts.set(e, target);
  return e;
}

/** The id of the target whose start made runPipeline throw `e` (the image could not be pulled, or
 *  the broker did not boot), or undefined for any other error: a bisect skips such a candidate. */
export function startFailedTarget(e: unknown): string | undefined {
  return e !== null && typeof e === 'object' ? failedStarts.get(e) : undefined;
}

/** The candidate of a run could not be pulled or started while Docker itself answers (a bisect
 *  skips such an image; Docker being down ends the search instead). */
export async function candidateCouldNotStart(e: unknown, candidate = 'candidate'): Promise<boolean> {
  return (
    startFailedTarget(e) === candidate &&
    (await assertDockerAvailable().then(
      () => true,
      () => false,
    ))
  );
}

/** Starts the targets; every broker that came up is in `s.handles` (the caller stops them). */
export async function boot(s: RunState): Promise<void> {
  const { ui, anchor } = s;
  if (s.trialSignal.aborted) throw new StoppedBeforeTrials();
  if (s.specs.length > 1) ui.info(`Starting brokers ${s.specs.map((x) => x.label).join(' and ')} side by side`);
  const booted = await bootTargets(s.specs, { runId: s.runId, profile: s.profiling, plugins: pluginsFor(s.scenarios) });
  for (const b of booted) if (b.handle) s.handles.push(b.handle);
  for (const b of booted) {
    const { spec } = b;
    await ui.group(`Starting broker ${spec.label}`, async () => {
      for (const l of b.startLines)
        if (l.warn) ui.warn(l.text);
        else ui.info(l.text);
    });
    for (const l of b.readLines)
      if (l.warn) ui.warn(l.text);
      else ui.info(l.text);
    if (b.error && s.trialSignal.aborted) continue; // its containers were removed by the signal: no boot error to tell
    for (const message of b.configWarnings) s.errors.push({ scope: `${spec.label}: configuration`, message });
    if (b.error) {
      const logs = containerLogsOf(b.error);
      if (logs?.length) await ui.group(`Last log lines of ${spec.label}`, async () => ui.info(logs.join('\n')));
      if (!anchor || spec !== anchor.reference || b.handle) throw startFailure(spec.id, b.error);
      // The recorded broker did not come up: the stored trials decide, as without an anchor.
      anchor.note = `the stored baseline's broker could not be started again (${(b.error as Error).message}): compared with the baseline's stored trials`;
      ui.warn(`Stored baseline: ${anchor.note}.`);
      s.specs.pop();
      s.opts.reference = undefined;
      s.design = undefined;
      s.repetitions = s.opts.repetitions ?? defaultRepetitions(s.selection.scenarios, false, s.selection.pairs);
      continue;
    }
    s.inheritedBy.set(spec.id, b.inherited);
  }
  if (s.trialSignal.aborted) throw new StoppedBeforeTrials();
  if (s.prior?.trials.length)
    checkSameBrokers(
      s.prior,
      s.handles.map((h) => h.info),
      s.given.resume!.file,
    );
  await s.watch.adopt(s.runId);
  s.scenarios = skipUnrunnable(s.scenarios, s.handles, s.errors, ui);
  if (s.opts.reference || (s.opts.stored && s.opts.mode === 'check')) warnIfUnderpowered(s.scenarios, s.repetitions, ui, s.opts.reference !== undefined);
}

/** Drops each scenario some target cannot run (src/broker/capabilities.ts: a node restart, a
 *  protocol listener, a RabbitMQ version) on every target, so that A/B stays paired: one warning
 *  per reason, and one error per scenario whose scope is its id (not 'run', so a skip alone never
 *  changes the verdict). */
export function skipUnrunnable(scenarios: ScenarioSpec[], handles: Capable[], errors: RunError[], ui: Pick<Ui, 'warn'>): ScenarioSpec[] {
  const byReason = new Map<string, { unmet: Unmet; specs: ScenarioSpec[] }>();
  for (const s of scenarios) {
    const unmet = unmetNeed(s, handles);
    if (unmet) (byReason.get(unmet.why) ?? byReason.set(unmet.why, { unmet, specs: [] }).get(unmet.why)!).specs.push(s);
  }
  if (!byReason.size) return scenarios;
  const skipped = new Set<ScenarioSpec>();
  for (const { unmet, specs } of byReason.values()) {
    const able = handles.filter((h) => !unmetNeed(specs[0], [h])).length;
    const both = handles.length > 1 ? ` on both targets${able ? ', to keep the A/B paired' : ''}` : '';
    ui.warn(`Skipping ${specs.map((s) => s.id).join(', ')}${both}: ${specs.length > 1 ? 'each' : 'it'} ${unmet.why}.`);
    for (const s of specs) {
      errors.push({ scope: s.id, message: `Skipped${both}: this scenario ${unmet.why}. ${unmet.fix}` });
      skipped.add(s);
    }
  }
  return scenarios.filter((s) => !skipped.has(s));
}

/** Holm's correction over many gating metrics puts significance out of reach of small samples:
 *  say so before the run rather than after it (every gating metric would be inconclusive). */
export function warnIfUnderpowered(scenarios: ScenarioSpec[], repetitions: number, ui: Pick<Ui, 'warn'>, paired = false): void {
  const gating = scenarios.reduce((sum, s) => sum + s.gate.length, 0);
  const needed = trialsNeeded(gating, paired);
  if (gating === 0 || repetitions >= needed) return;
  ui.warn(
    `${repetitions} ${paired ? 'paired rounds' : 'trials per side'} cannot reach significance across ${gating} gating metrics (Holm's correction): ` +
      `every gating metric will be inconclusive. Use repetitions ≥ ${needed}, or fewer scenarios.`,
  );
}
