// Watching the machine a run measures on (the pipeline's one handle on it): at the start, the
// orphan sweep (src/broker/cleanup.ts: containers of runs whose process is gone are removed and
// named; those of live runs are left alone and reported, since they load the machine) and a 1 s
// sample of what else uses the CPU; then a sample across each trial (src/metrics/machine.ts), this
// run's own broker containers and generator set apart; at the end the summary, other containers
// named. Where there is no /proc or no Docker, the parts that need them are left out silently.
import type { LoadUser, MachineLoad, MachineSummary } from '../schema/types';
import type { Ui } from '../schema/ui';
import { describeError } from '../schema/errors';
import { accumulate, type CpuSnapshot, cpuSnapshot, loadBetween, summariseMachine } from '../metrics/machine';
import { describeContainer, RUN_LABEL, sweepOrphans, type Sweep } from './cleanup';
import { listContainers, runningContainerNames } from './docker-cli';

const START_SAMPLE_MS = 1_000;

export class MachineWatch {
  private ours = new Set<string>();
  private names = new Map<string, string>();
  private users = new Map<string, LoadUser & { coreSeconds: number }>();
  private edge?: CpuSnapshot;
  private trialLoads: MachineLoad[] = [];

  private constructor(
    private readonly sweep: Sweep | undefined,
    private readonly start: MachineLoad | undefined,
  ) {}

  /** The sweep and the start sample (1 s, cut short by `signal`). */
  static async begin(ui: Pick<Ui, 'info' | 'warn'>, signal?: AbortSignal): Promise<MachineWatch> {
    const sweep = await sweepOrphans().catch((e: unknown) => {
      // No Docker (a URL target on a runner without it) is normal; a daemon that errs is worth a line.
      if (!/docker CLI was not found|daemon is not reachable/.test(describeError(e))) ui.info(`could not look for containers left by other runs: ${describeError(e)}`);
      return undefined;
    });
    if (sweep) reportSweep(sweep, ui);
    const a = cpuSnapshot();
    if (a && !signal?.aborted)
      await new Promise<void>((r) => {
        const t = setTimeout(r, START_SAMPLE_MS);
        signal?.addEventListener(
          'abort',
          () => {
            clearTimeout(t);
            r();
          },
          { once: true },
        );
      });
    const b = a && cpuSnapshot();
    const watch = new MachineWatch(sweep, a && b ? loadBetween(a, b) : undefined);
    if (watch.start) {
      await watch.learnNames(watch.start);
      const m = watch.summary();
      const who = m.start?.top
        ?.slice(0, 3)
        .map((u) => `${u.name} ${u.cores}`)
        .join(', ');
      ui.info(
        `Machine load at the start: other containers and processes used ${m.start!.otherCores} of ${m.cores} cores${who ? ` (${who})` : ''}${m.busy ? ': busy, measurements may be noisy' : ': quiet'}`,
      );
    }
    return watch;
  }

  /** This run's containers (by its run label): their CPU is the brokers', not other load. */
  async adopt(runId: string): Promise<void> {
    for (const id of await listContainers([`${RUN_LABEL}=${runId}`]).catch(() => [])) this.ours.add(id);
  }

  /** At a trial's start. */
  trialStarts(): void {
    this.edge = cpuSnapshot();
  }

  /** At a trial's end: the machine's load across it (its largest users kept for the summary). */
  async trialEnds(): Promise<MachineLoad | undefined> {
    const a = this.edge;
    const b = a && cpuSnapshot();
    this.edge = undefined;
    if (!a || !b) return undefined;
    const load = loadBetween(a, b, this.ours);
    this.trialLoads.push(load);
    accumulate(this.users, load);
    await this.learnNames(load);
    const { top: _, ...perTrial } = load;
    return perTrial;
  }

  /** The run's summary; `earlier`: the loads of trials kept from an interrupted run (resume). */
  summary(earlier: MachineLoad[] = []): MachineSummary {
    const named = (u: LoadUser): LoadUser => (u.kind === 'container' ? { ...u, name: this.names.get(u.name) ?? `container ${u.name}` } : u);
    const users = new Map([...this.users].map(([k, u]) => [k, { ...named(u), coreSeconds: u.coreSeconds }]));
    return summariseMachine({
      start: this.start && { ...this.start, ...(this.start.top ? { top: this.start.top.map(named) } : {}) },
      trials: [...earlier, ...this.trialLoads],
      users,
      otherRuns: this.sweep?.live.filter((c) => c.state === 'running').map(describeContainer),
      removed: this.sweep?.removed.map(describeContainer),
    });
  }

  /** Names the containers among a sample's users (one `docker ps` when one is new). */
  private async learnNames(l: MachineLoad): Promise<void> {
    if (!(l.top ?? []).some((u) => u.kind === 'container' && !this.names.has(u.name))) return;
    const all = await runningContainerNames().catch(() => new Map<string, string>());
    for (const [id, name] of all) this.names.set(id.slice(0, 12), name);
  }
}

/** The sweep in the log (info lines: the report's machine line says whether the machine was busy):
 *  what was removed, and what other runs' containers still load the machine. */
function reportSweep(s: Sweep, ui: Pick<Ui, 'info' | 'warn'>): void {
  const list = (cs: Sweep['removed']) => cs.map(describeContainer).join('; ');
  if (s.removed.length) ui.info(`Removed ${s.removed.length} broker container(s) left by runs whose process is gone: ${list(s.removed)}`);
  const running = s.live.filter((c) => c.state === 'running');
  if (running.length)
    ui.info(`${running.length} broker container(s) of other runs still going are running on this machine and take CPU and memory from this run's measurements (left alone): ${list(running)}`);
  const unknown = s.unknown.filter((c) => c.state === 'running' || c.state === 'paused');
  if (unknown.length)
    ui.info(
      `${unknown.length} rabbitmq-perf-gate container(s) without an owner on this host (started by an older version, or from another host) are running (left alone; remove them with docker rm -f once no run uses them): ${list(unknown)}`,
    );
}
