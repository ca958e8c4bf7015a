// Owns removing the containers this tool starts, on every exit path: a process-level registry
// emptied by stop(), by a synchronous 'exit' hook (normal end, uncaught errors, process.exit)
// and by SIGINT/SIGTERM handlers (then exit 130/143); the one cancel contract of the action and
// the CLI (interruptible: containers removed first, then the caller writes what ran, bounded; a
// second signal exits at once); removeRunContainers(), the by-label net the action's post: step
// calls for anything a SIGKILL'd process left behind; and, for the CLI and self-hosted runners
// that have no post: step, the orphan sweep at the start of every run (sweepOrphans): every
// container carries its owner (host, pid and the pid's start time), and those whose owner is
// gone are removed, while those of live runs are left alone and reported.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { docker, listContainers, removeContainers, removeContainersSync, settleCreates } from './docker-cli';

export const LABEL = 'rabbitmq-perf-gate';
export const RUN_LABEL = 'rabbitmq-perf-gate.run';
/** The owning process: host name, pid, the pid's start time (clock ticks after boot) and the boot id. */
export const OWNER_LABELS = { host: 'rabbitmq-perf-gate.owner-host', pid: 'rabbitmq-perf-gate.owner-pid', start: 'rabbitmq-perf-gate.owner-start', boot: 'rabbitmq-perf-gate.owner-boot' } as const;

const registered = new Set<string>();
const runIds = new Set<string>();
let installed = false;
/** Set once SIGINT/SIGTERM arrived: the exit code the process ends with, whatever else fails. */
let signalExitCode: number | undefined;
/** What a signal exit waits for after removing the containers (e.g. the action writing its partial report). */
let drain: { done: Promise<unknown>; ms: number; onTimeout?: () => void } | undefined;

/** On SIGINT/SIGTERM, once the containers are removed, wait for `done` (at most `ms`) before
 *  exiting, so the caller can write what it has. A second signal still exits at once. */
export function drainBeforeSignalExit(done: Promise<unknown>, ms = 7_000, onTimeout?: () => void): void {
  drain = { done, ms, onTimeout };
}

/**
 * The cancel contract of the action and the CLI, in one place. The first SIGINT or SIGTERM aborts
 * `work`'s signal (its reason: `reason(signal)`, e.g. "the run was interrupted"), while the
 * signal handler removes every container of this process at once; `work` then stops its trial,
 * writes what ran and resolves, and the process exits 130 (SIGINT) or 143 (SIGTERM) — or after
 * `drainMs` if the writing takes longer (`onTimeout` says so). A second signal exits at once.
 */
export async function interruptible<T>(
  work: (signal: AbortSignal) => Promise<T>,
  o: { reason: (signal: NodeJS.Signals) => string; drainMs: number; onSignal?: (signal: NodeJS.Signals) => void; onTimeout?: () => void },
): Promise<T> {
  installCleanupHandlers();
  const controller = new AbortController();
  const abort = (sig: NodeJS.Signals) => {
    if (controller.signal.aborted) return;
    o.onSignal?.(sig);
    controller.abort(new Error(o.reason(sig)));
  };
  const onInt = () => abort('SIGINT');
  const onTerm = () => abort('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  const done = work(controller.signal);
  drainBeforeSignalExit(done, o.drainMs, o.onTimeout);
  try {
    return await done;
  } finally {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
  }
}

/** A run id shared by the action's main and post steps (same job, same attempt), or set
 *  explicitly with RABBITMQ_PERF_GATE_RUN_ID; otherwise unique to this process. */
export function defaultRunId(env: NodeJS.ProcessEnv = process.env): string {
  if (env.RABBITMQ_PERF_GATE_RUN_ID) return env.RABBITMQ_PERF_GATE_RUN_ID;
  if (env.GITHUB_RUN_ID) return `gh-${env.GITHUB_RUN_ID}-${env.GITHUB_RUN_ATTEMPT ?? '1'}-${env.GITHUB_JOB ?? 'job'}`;
  return `local-${process.pid}-${Date.now().toString(36)}`;
}

/** The `docker run/create` flags that label a container as ours, as part of `runId`, and as
 *  owned by this process on this host. */
export function labelArgs(runId: string): string[] {
  const me = selfOwner();
  return [
    '--label',
    `${LABEL}=1`,
    '--label',
    `${RUN_LABEL}=${runId}`,
    ...Object.entries(OWNER_LABELS).flatMap(([k, label]) => (me[k as keyof Owner] ? ['--label', `${label}=${me[k as keyof Owner]}`] : [])),
  ];
}

/** Who started a container: host name, pid, and where /proc tells them, the pid's start time and the boot id. */
export interface Owner {
  host: string;
  pid: string;
  start?: string;
  boot?: string;
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** A process's state letter and start time (clock ticks after boot) from /proc/<pid>/stat. */
function procStat(pid: string | number, proc: string): { state: string; start: string } | undefined {
  const text = readText(`${proc}/${pid}/stat`);
  const f = text
    ?.slice(text.lastIndexOf(')') + 2)
    .trim()
    .split(/\s+/);
  return f && f.length > 19 ? { state: f[0], start: f[19] } : undefined;
}

let me: Owner | undefined;
export function selfOwner(): Owner {
  me ??= { host: os.hostname(), pid: String(process.pid), start: procStat('self', '/proc')?.start, boot: readText('/proc/sys/kernel/random/boot_id')?.trim() };
  return me;
}

/**
 * Whether a container's owner still runs: 'alive', 'gone' (no such process, a zombie, another
 * process with the same pid but another start time, or the machine booted since), 'elsewhere'
 * (another host: nothing can be known) or 'unknown' (no owner labels: an older version started it).
 * Only 'gone' may be removed.
 */
export function ownerState(owner: Partial<Owner>, self: Owner = selfOwner(), proc = '/proc'): 'alive' | 'gone' | 'elsewhere' | 'unknown' {
  if (!owner.host || !owner.pid || !/^\d+$/.test(owner.pid)) return 'unknown';
  if (owner.host !== self.host) return 'elsewhere';
  if (owner.boot && self.boot && owner.boot !== self.boot) return 'gone';
  if (readText(`${proc}/self/stat`) === undefined) {
    // No /proc (not Linux): only "no such process" is certain.
    try {
      process.kill(Number(owner.pid), 0);
      return 'alive';
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'ESRCH' ? 'gone' : 'alive';
    }
  }
  const p = procStat(owner.pid, proc);
  if (!p || p.state === 'Z' || p.state === 'X') return 'gone';
  if (owner.start && p.start !== owner.start) return 'gone';
  return 'alive';
}

/** A container with this tool's label, as the orphan sweep sees it. */
export interface LabelledContainer {
  id: string;
  name: string;
  /** docker's state: running, paused, exited, created, … */
  state: string;
  runId?: string;
  owner: Partial<Owner>;
  created: string;
}

/** Every container carrying this tool's label, with its run and owner labels. */
export async function labelledContainers(): Promise<LabelledContainer[]> {
  const fields = ['{{.ID}}', '{{.Names}}', '{{.State}}', '{{.CreatedAt}}', `{{.Label "${RUN_LABEL}"}}`, ...Object.values(OWNER_LABELS).map((l) => `{{.Label "${l}"}}`)];
  const r = await docker(['ps', '-a', '--no-trunc', '--filter', `label=${LABEL}=1`, '--format', fields.join('\t')], { timeoutMs: 30_000 });
  return r.stdout
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => {
      const [id, name, state, created, runId, host, pid, start, boot] = l.split('\t');
      const owner = Object.fromEntries(Object.entries({ host, pid, start, boot }).filter(([, v]) => v && v !== '<no value>'));
      return { id, name, state, created, ...(runId && runId !== '<no value>' ? { runId } : {}), owner };
    });
}

/** One line for a container in a log: its name, run, owner and state. */
export function describeContainer(c: LabelledContainer): string {
  const who = c.owner.pid ? `pid ${c.owner.pid}${c.owner.host && c.owner.host !== os.hostname() ? ` on ${c.owner.host}` : ''}` : 'no owner label';
  return `${c.name} (${[c.runId ? `run ${c.runId}` : undefined, who, c.state].filter(Boolean).join(', ')})`;
}

export interface Sweep {
  /** Containers of runs whose process is gone: removed. */
  removed: LabelledContainer[];
  /** Containers of other runs still going on this host: left alone. */
  live: LabelledContainer[];
  /** Containers without owner labels (older versions) or owned by another host: left alone. */
  unknown: LabelledContainer[];
}

/**
 * The orphan sweep at the start of every run (and the CLI's `cleanup`): removes the containers of
 * runs whose owning process is gone from this host (ownerState 'gone'), and returns those of live
 * runs and of unknown owners, which it never touches. This process's own containers are skipped.
 */
export async function sweepOrphans(): Promise<Sweep> {
  const self = selfOwner();
  const all = (await labelledContainers()).filter((c) => !(c.owner.host === self.host && c.owner.pid === self.pid && (c.owner.start ?? '') === (self.start ?? '')));
  const sweep: Sweep = { removed: [], live: [], unknown: [] };
  for (const c of all) {
    const state = ownerState(c.owner, self);
    if (state === 'gone') sweep.removed.push(c);
    else if (state === 'alive') sweep.live.push(c);
    else sweep.unknown.push(c);
  }
  if (sweep.removed.length) await removeContainers(sweep.removed.map((c) => c.id));
  return sweep;
}

/** Remembers a container (by name or id) to remove on exit. Call before creating it. Once a
 *  signal came, nothing new is created: it throws instead (the cleanup is under way, and a
 *  container made now could outlive the process). */
export function registerContainer(ref: string, runId: string): void {
  installCleanupHandlers();
  if (signalExitCode !== undefined) throw new Error(`not creating ${ref}: the process is stopping on ${signalExitCode === 130 ? 'SIGINT' : 'SIGTERM'}`);
  registered.add(ref);
  runIds.add(runId);
}

/** Removes the given containers now and forgets them. */
export async function removeRegistered(refs: string[] = [...registered]): Promise<void> {
  await removeContainers(refs);
  for (const r of refs) registered.delete(r);
}

/** Removes every container labelled with `runId` (every rabbitmq-perf-gate container when no
 *  runId is given); returns the removed IDs. The post-step net. */
export async function removeRunContainers(runId?: string): Promise<string[]> {
  const ids = await listContainers(runId ? [`${RUN_LABEL}=${runId}`] : [`${LABEL}=1`]);
  await removeContainers(ids);
  return ids;
}

async function onSignal(signal: 'SIGINT' | 'SIGTERM'): Promise<void> {
  const code = signal === 'SIGINT' ? 130 : 143;
  if (signalExitCode !== undefined) process.exit(code); // second signal: give up waiting
  signalExitCode = code;
  try {
    // A `docker create` in flight when the signal came finishes first (its container would
    // otherwise appear after this pass); names stay registered so that the exit hook tries once more.
    await settleCreates();
    await removeContainers([...registered]);
    for (const run of runIds) await removeRunContainers(run);
  } catch {
    // Best effort; the post step removes leftovers by label.
  }
  if (drain) {
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      drain.done.then(
        () => true,
        () => true,
      ),
      new Promise<boolean>((r) => {
        timer = setTimeout(() => r(false), drain!.ms);
      }),
    ]);
    clearTimeout(timer);
    if (!finished) drain.onTimeout?.();
  }
  process.exit(code);
}

/** Installs the exit and signal hooks once per process (done by the first registerContainer). */
export function installCleanupHandlers(): void {
  if (installed) return;
  installed = true;
  process.on('exit', () => {
    removeContainersSync([...registered]);
    // A start interrupted by the signal may fail and exit first; still report the signal.
    if (signalExitCode !== undefined) process.exitCode = signalExitCode;
  });
  process.on('SIGINT', () => void onSignal('SIGINT'));
  process.on('SIGTERM', () => void onSignal('SIGTERM'));
}
