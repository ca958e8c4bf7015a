// Stage 4 of a run — profile: before the brokers stop, a differential flame graph of each scenario
// (at most two) that a same-run A/B of containers fails, when flame graphs were asked for and perf
// can record them (src/workload/profile-window.ts). The judgement it picks them by is provisional:
// the report is judged again at assembly.
import { flameGraphs } from '../workload/profile-window';
import { judgementOf } from './assemble';
import type { RunState } from './state';

export async function profile(s: RunState): Promise<void> {
  const { opts, handles, ui } = s;
  if (!s.profiling || !opts.reference || handles.length !== 2 || s.trialSignal.aborted) return;
  const provisional = judgementOf(s);
  const failing = s.scenarios.filter((x) => provisional.comparisons.some((c) => c.scenario === x.id && c.gating && c.verdict === 'fail' && c.against === opts.reference!.id)).slice(0, 2);
  if (!failing.length) return;
  const made = await ui.group(`Flame graphs of ${failing.map((x) => x.id).join(', ')}`, () => flameGraphs(failing, handles[0], handles[1], s.focus!, s.runId, s.trialSignal));
  s.flames = made.flames;
  s.flameNote = made.note;
  if (made.note) ui.warn(made.note);
}
