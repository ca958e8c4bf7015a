// Helpers for the broker fault tests (faults-broker.test.ts, faults-hang.test.ts): run the bundled
// action against a broker container it starts itself (a target file with a non-default password,
// host networking, the offline image) and inject a fault into that container once N trials are
// done. The container is found by the run id the action saves for its post step.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { expect } from 'vitest';
import { join } from 'node:path';
import { runAction, newWorkspace, type ActionRun } from './action-runner';

export const IMAGE = 'rabbitmq-perf-gate/rabbitmq:3.10.8';
export const PASSWORD = 'p3rf-gate-s3cret-pw';
export const BASELINE = '.github/rabbitmq-perf/baseline.json';

export function docker(...args: string[]): string {
  return execFileSync('docker', args, { encoding: 'utf8', timeout: 60_000 }).trim();
}

export function containersOfRun(runId: string): string[] {
  return docker('ps', '-aq', '--filter', `label=rabbitmq-perf-gate.run=${runId}`).split('\n').filter(Boolean);
}

export function runIdOf(stdout: string): string | undefined {
  return /::save-state name=run-id::(\S+)/.exec(stdout)?.[1];
}

/** A stored baseline (one_fast, 5 trials) from another machine: it must stay byte-for-byte. */
export function baselineText(): string {
  const fp = { tool: 'rabbitmq-perf-gate', toolVersion: '0.1.0', node: 'v24', os: 'Linux', kernel: 'k', cpuModel: 'elsewhere', cores: 64, memoryBytes: 1 };
  const target = { id: 'candidate', label: 'broker', kind: 'docker', amqpUrl: 'amqp://u:***@h', managementUrl: 'http://h', rabbitmqVersion: '3.10.8', erlangVersion: '25', nodes: [] };
  const values = (v: number) => [v, v * 1.01, v * 0.99, v * 1.02, v * 0.98];
  return (
    JSON.stringify(
      {
        schemaVersion: 1,
        createdAt: '2026-01-01T00:00:00.000Z',
        fingerprint: fp,
        target,
        repetitions: 5,
        scenarios: { one_fast: { metrics: { published_rate: values(5000), consumed_rate: values(5000), latency_p99_ms: values(500) } } },
        history: [],
      },
      null,
      1,
    ) + '\n'
  );
}

/** A workspace with a target file (image, host networking, a password to mask) and a stored baseline. */
export function faultWorkspace(): string {
  const ws = newWorkspace();
  mkdirSync(join(ws, '.github/rabbitmq-perf'), { recursive: true });
  writeFileSync(join(ws, BASELINE), baselineText());
  writeFileSync(
    join(ws, 'fault-target.yml'),
    [`image: ${IMAGE}`, 'label: faulty', 'network: host', 'env:', '  RABBITMQ_DEFAULT_USER: perfgate', `  RABBITMQ_DEFAULT_PASS: ${PASSWORD}`, ''].join('\n'),
  );
  return ws;
}

export interface FaultRun extends ActionRun {
  runId: string;
  seconds: number;
  /** When the fault was injected, in seconds since the action started. */
  injectedAt?: number;
  injectError?: string;
}

/**
 * Runs the action on its own broker container and, `delayMs` after the `afterTrials`-th trial
 * is reported, calls `inject` with the container name ('' when it started none) and the action's pid.
 */
export async function runWithFault(opts: {
  inputs: Record<string, string>;
  workspace?: string;
  apiUrl?: string;
  afterTrials: number;
  delayMs: number;
  inject: (container: string, pid: number) => void;
  timeoutMs?: number;
}): Promise<FaultRun> {
  const workspace = opts.workspace ?? faultWorkspace();
  const started = Date.now();
  let pid = 0;
  let seen = '';
  let runId = '';
  let injectedAt: number | undefined;
  let injectError: string | undefined;
  let armed = true;
  const r = await runAction({
    workspace,
    apiUrl: opts.apiUrl,
    timeoutMs: opts.timeoutMs ?? 240_000,
    inputs: { target: 'fault-target.yml', 'target-file': 'none', comment: 'never', ...opts.inputs },
    onSpawn: (p) => {
      pid = p;
    },
    onStdout: (chunk) => {
      seen += chunk;
      runId ||= runIdOf(seen) ?? '';
      if (armed && new RegExp(`^\\[${opts.afterTrials}/\\d+\\]`, 'm').test(seen)) {
        armed = false;
        setTimeout(() => {
          try {
            const [container] = containersOfRun(runId); // none for a broker-url target
            opts.inject(container ?? '', pid);
            injectedAt = (Date.now() - started) / 1000;
          } catch (e) {
            injectError = (e as Error).message;
          }
        }, opts.delayMs);
      }
    },
  });
  return { ...r, runId: runIdOf(r.stdout) ?? runId, seconds: (Date.now() - started) / 1000, injectedAt, injectError };
}

/** The password never leaves the mask: not in the log (but the ::add-mask:: line), reports or summary. */
export function expectNoSecret(r: ActionRun, files: string[]): void {
  expect(r.stdout, 'the password is masked').toContain(`::add-mask::${PASSWORD}`);
  expect(r.stdout.replace(/^::add-mask::.*$/gm, '') + r.stderr + r.summary, 'log and job summary').not.toContain(PASSWORD);
  for (const f of files) expect(readFileSync(f, 'utf8'), f).not.toContain(PASSWORD);
}
