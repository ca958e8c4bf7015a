// Runs the bundled action (dist/index.js or dist/post.js) the way the Actions runner does: a
// child Node process with INPUT_* variables, GITHUB_EVENT_PATH, GITHUB_OUTPUT and
// GITHUB_STEP_SUMMARY files, and GITHUB_API_URL pointed at the local GitHub server.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import examples from '@octokit/webhooks-examples/api.github.com/index.json' with { type: 'json' };

export const ROOT = resolve(import.meta.dirname, '../..');

export interface ActionRun {
  code: number | null;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
  summary: string;
  workspace: string;
}

/** The `pull_request` "opened" payload from @octokit/webhooks-examples (Codertocat/Hello-World#2). */
export function pullRequestEvent(): any {
  const pr = (examples as any[]).find((e) => e.name === 'pull_request');
  return structuredClone(pr.examples.find((e: any) => e.action === 'opened'));
}

export function parseOutputs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /^(.+?)<<(\S+)\n([\s\S]*?)\n\2$/gm;
  for (const m of text.matchAll(re)) out[m[1]] = m[3];
  return out;
}

export function newWorkspace(): string {
  return mkdtempSync(join(tmpdir(), 'perf-gate-ws-'));
}

export async function runAction(opts: {
  inputs: Record<string, string>;
  workspace?: string;
  event?: unknown;
  eventName?: string;
  apiUrl?: string;
  entry?: 'index' | 'post';
  env?: Record<string, string>;
  state?: Record<string, string>;
  timeoutMs?: number;
  onSpawn?: (pid: number) => void;
  /** Called with each chunk of stdout as it arrives (e.g. to inject a fault mid-run). */
  onStdout?: (chunk: string) => void;
}): Promise<ActionRun> {
  const workspace = opts.workspace ?? newWorkspace();
  const files = mkdtempSync(join(tmpdir(), 'perf-gate-runner-'));
  const eventPath = join(files, 'event.json');
  writeFileSync(eventPath, JSON.stringify(opts.event ?? pullRequestEvent()));
  const output = join(files, 'output');
  const summary = join(files, 'summary');
  writeFileSync(output, '');
  writeFileSync(summary, '');
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/root',
    GITHUB_ACTIONS: 'true',
    GITHUB_WORKSPACE: workspace,
    GITHUB_EVENT_PATH: eventPath,
    GITHUB_EVENT_NAME: opts.eventName ?? 'pull_request',
    GITHUB_REPOSITORY: 'Codertocat/Hello-World',
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_RUN_ID: '1234',
    GITHUB_SHA: 'ec26c3e57ca3a959ca5aad62de7213c562f8c821',
    GITHUB_OUTPUT: output,
    GITHUB_STEP_SUMMARY: summary,
    RUNNER_TEMP: files,
    ...(opts.apiUrl ? { GITHUB_API_URL: opts.apiUrl } : {}),
    ...opts.env,
  };
  for (const [k, v] of Object.entries(opts.inputs)) env[`INPUT_${k.replace(/ /g, '_').toUpperCase()}`] = v;
  for (const [k, v] of Object.entries(opts.state ?? {})) env[`STATE_${k}`] = v;
  const child = spawn(process.execPath, [join(ROOT, 'dist', `${opts.entry ?? 'index'}.js`)], { cwd: workspace, env });
  opts.onSpawn?.(child.pid!);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
    opts.onStdout?.(String(d));
  });
  child.stderr.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 240_000);
  const code = await new Promise<number | null>((r) => child.on('close', r));
  clearTimeout(timer);
  return {
    code,
    stdout,
    stderr,
    workspace,
    outputs: parseOutputs(readFileSync(output, 'utf8')),
    summary: existsSync(summary) ? readFileSync(summary, 'utf8') : '',
  };
}
