// The machine around a run in one sentence (src/metrics/machine.ts measured it): quiet, or busy
// with what — other containers and processes, CPU pressure, broker containers of other runs — so
// a reader can tell a noisy run from a regression. Every report format and the terminal show it.
import type { LoadUser, MachineSummary, RunReport } from '../schema/types';

const cores = (x: number) => (x >= 10 ? x.toFixed(0) : x >= 1 ? x.toFixed(1) : x.toFixed(2));
const pct = (x: number) => `${Math.round(x * 100)} %`;

function users(us: LoadUser[] | undefined): string {
  return (us ?? [])
    .slice(0, 4)
    .map((u) => `${u.kind === 'container' ? 'container ' : ''}${u.name}${u.count && u.count > 1 ? ` ×${u.count}` : ''} ${cores(u.cores)}`)
    .join(', ');
}

/** "The machine was busy: …" or "Machine load: quiet …"; undefined when nothing was measured. */
export function machineText(r: Pick<RunReport, 'machine'>): string | undefined {
  const m: MachineSummary | undefined = r.machine;
  if (!m || (!m.start && !m.trials)) return undefined;
  const parts: string[] = [];
  if (m.start) parts.push(`${cores(m.start.otherCores)} of ${m.cores} cores at the start`);
  if (m.trials) parts.push(`${cores(m.trials.median)} in the median trial (up to ${cores(m.trials.max)}; ${m.trials.busy} of ${m.trials.of} trials at ${cores(m.busyAbove)} or more)`);
  const load = `other containers and processes than this run's used ${parts.join(' and ')}`;
  const who = users(m.trials?.top?.length ? m.trials.top : m.start?.top);
  const pressure = m.start?.cpuPressure !== undefined && m.start.cpuPressure >= 0.05 ? `; tasks waited for a CPU ${pct(m.start.cpuPressure)} of the start sample` : '';
  const steal = m.start && m.start.steal >= 0.02 ? `; steal ${pct(m.start.steal)}` : '';
  const runs = m.otherRuns?.length ? `; ${m.otherRuns.length} broker container(s) of other runs were running` : '';
  const removed = m.removed?.length ? `; ${m.removed.length} container(s) left by ended runs were removed first` : '';
  if (!m.busy) return `Machine load: quiet — ${load}${removed}.`;
  return `The machine was busy: ${load}${who ? ` — most by ${who}` : ''}${pressure}${steal}${runs}${removed}. Differences in this run may be the machine's noise rather than the broker's.`;
}
