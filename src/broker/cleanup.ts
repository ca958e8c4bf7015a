// Owns removing the containers this tool starts, on every exit path: a process-level registry
// emptied by stop(), by a synchronous 'exit' hook (normal end, uncaught errors, process.exit)
// and by SIGINT/SIGTERM handlers (then exit 130/143); plus removeRunContainers(), the by-label
// net the action's post: step calls for anything a SIGKILL'd process left behind.
import { listContainers, removeContainers, removeContainersSync } from './docker-cli';

export const LABEL = 'rabbitmq-perf-gate';
export const RUN_LABEL = 'rabbitmq-perf-gate.run';

const registered = new Set<string>();
const runIds = new Set<string>();
let installed = false;
/** Set once SIGINT/SIGTERM arrived: the exit code the process ends with, whatever else fails. */
let signalExitCode: number | undefined;
/** What a signal exit waits for after removing the containers (e.g. the action writing its partial report). */
let drain: { done: Promise<unknown>; ms: number } | undefined;

/** On SIGINT/SIGTERM, once the containers are removed, wait for `done` (at most `ms`) before
 *  exiting, so the caller can write what it has. A second signal still exits at once. */
export function drainBeforeSignalExit(done: Promise<unknown>, ms = 7_000): void {
  drain = { done, ms };
}

/** A run id shared by the action's main and post steps (same job, same attempt), or set
 *  explicitly with RABBITMQ_PERF_GATE_RUN_ID; otherwise unique to this process. */
export function defaultRunId(env: NodeJS.ProcessEnv = process.env): string {
  if (env.RABBITMQ_PERF_GATE_RUN_ID) return env.RABBITMQ_PERF_GATE_RUN_ID;
  if (env.GITHUB_RUN_ID) return `gh-${env.GITHUB_RUN_ID}-${env.GITHUB_RUN_ATTEMPT ?? '1'}-${env.GITHUB_JOB ?? 'job'}`;
  return `local-${process.pid}-${Date.now().toString(36)}`;
}

/** The `docker run/create` flags that label a container as ours and as part of `runId`. */
export function labelArgs(runId: string): string[] {
  return ['--label', `${LABEL}=1`, '--label', `${RUN_LABEL}=${runId}`];
}

/** Remembers a container (by name or id) to remove on exit. Call before creating it. */
export function registerContainer(ref: string, runId: string): void {
  installCleanupHandlers();
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
    // Names stay registered so that the exit hook tries once more: a `docker create` in flight
    // when the signal came may finish after this first pass.
    await removeContainers([...registered]);
    for (const run of runIds) await removeRunContainers(run);
  } catch {
    // Best effort; the post step removes leftovers by label.
  }
  if (drain) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([drain.done.catch(() => undefined), new Promise((r) => { timer = setTimeout(r, drain!.ms); })]);
    clearTimeout(timer);
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
