// Owns: running a job of a workflow file the way the Actions runner does, for the tests of the
// documented workflows. Expressions (`${{ }}`, `if:`) are evaluated by GitHub's own expression
// library (@actions/expressions) over the github, env, inputs, matrix, runner, steps and needs
// contexts; a job's `if:` and matrix are honoured, its `permissions:` decide whether its token may
// write; `run:` steps run in bash -eo pipefail; our action's steps run the bundled dist/ (with
// action.yml's defaults, then its post step) against the local GitHub server; actions/checkout is
// the test's prepared workspace, upload-/download-artifact copy folders through a local store
// (v4 semantics: a name is uploaded once). Any other `uses:` is an error, so a new step in a
// template cannot go untested. Two things stand in for the hosted runner, stated in the world:
// `images` (the tags a template names → the offline images this machine has, like a registry
// mirror) and `size` (inputs added to every measuring step so a test runs in seconds, not the
// preset's minutes); a `services:` RabbitMQ is the machine's local broker on localhost:5672.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { Evaluator, Lexer, Parser, data } from '@actions/expressions';
import { truthy } from '@actions/expressions/result';
import { parse } from 'yaml';
import { ROOT, parseOutputs, runAction, type ActionRun } from './action-runner';
import type { GitHubServer } from './github-server';

export interface World {
  gh: GitHubServer;
  /** Token for a job whose permissions include a write, and one for a read-only job or a fork's PR. */
  token: string;
  readOnlyToken: string;
  /** Artifact store of the workflow run (one folder per uploaded artifact name); a job can name
   *  another run's (JobRun.artifacts), as a new run or a `run-id:` download does. */
  artifacts: string;
  /** Image a template names → the offline image that stands in for it. */
  images: Record<string, string>;
  /** Inputs added to every check and refresh step of our action (the test's size). */
  size: Record<string, string>;
}

export interface JobRun {
  /** The job's checkout; a function gives each matrix combination its own, as separate runners do. */
  workspace: string | (() => string);
  event: any;
  eventName: string;
  /** GITHUB_REF (default refs/heads/main). */
  ref?: string;
  /** workflow_dispatch inputs given on the form (the rest take their defaults). */
  inputs?: Record<string, string>;
  needs?: Record<string, { result: string; outputs: Record<string, string> }>;
  /** A fork's pull request: the token is read-only whatever the permissions say. */
  fork?: boolean;
  /** This job's workflow run's artifact store, when not World.artifacts. */
  artifacts?: string;
}

export interface StepRecord {
  id?: string;
  label: string;
  outcome: 'success' | 'failure' | 'skipped';
  /** Our action's inputs as the runner passed them (evaluated, images mapped, size added). */
  inputs?: Record<string, string>;
  action?: ActionRun;
  log?: string;
}

export interface JobRecord {
  result: 'success' | 'failure' | 'skipped';
  /** The matrix combination, when the job has one. */
  matrix?: Record<string, unknown>;
  steps: StepRecord[];
  post: ActionRun[];
  /** The token the job ran with. */
  token: string;
}

const CONTEXTS = ['github', 'env', 'inputs', 'matrix', 'runner', 'steps', 'needs', 'secrets', 'vars', 'job', 'strategy'];
const STATUS = ['always', 'success', 'failure', 'cancelled'];
const ACTION = parse(readFileSync(join(ROOT, 'action.yml'), 'utf8'));
const OURS = /^(\.\/|rabbitmq-perf-gate\/rabbitmq-perf-gate@)/;

/** GitHub's expression evaluator over plain JSON contexts; `status` is the job's status so far. */
export function evaluate(expr: string, ctx: Record<string, unknown>, status: 'success' | 'failure' = 'success'): data.ExpressionData {
  const lexed = new Lexer(expr).lex();
  const parsed = new Parser(
    lexed.tokens,
    CONTEXTS,
    STATUS.map((name) => ({ name, minArgs: 0, maxArgs: 0 })),
  ).parse();
  const fn = (name: string, value: boolean) => ({ name, minArgs: 0, maxArgs: 0, call: () => new data.BooleanData(value) });
  const functions = new Map([
    ['always', fn('always', true)],
    ['success', fn('success', status === 'success')],
    ['failure', fn('failure', status === 'failure')],
    ['cancelled', fn('cancelled', false)],
  ]);
  const context = JSON.parse(JSON.stringify(Object.fromEntries(CONTEXTS.map((c) => [c, ctx[c] ?? {}]))), data.reviver) as data.Dictionary;
  return new Evaluator(parsed, context, functions).evaluate();
}

/** A string with `${{ … }}` parts replaced by their values. */
export function interpolate(text: string, ctx: Record<string, unknown>): string {
  return text.replace(/\$\{\{([\s\S]*?)\}\}/g, (_, e: string) => evaluate(e, ctx).coerceString());
}

/** An `if:` as the runner reads it: `${{ }}` optional, `success() &&` implied without a status function. */
export function condition(cond: unknown, ctx: Record<string, unknown>, status: 'success' | 'failure'): boolean {
  if (cond === undefined) return status === 'success';
  let expr = String(cond).trim();
  const wrapped = /^\$\{\{([\s\S]*)\}\}$/.exec(expr);
  if (wrapped) expr = wrapped[1];
  if (!STATUS.some((s) => new RegExp(`\\b${s}\\s*\\(`).test(expr))) expr = `success() && (${expr})`;
  return truthy(evaluate(expr, ctx, status));
}

const mapImages = (text: string, images: Record<string, string>) => Object.entries(images).reduce((t, [from, to]) => t.split(from).join(to), text);

function combinations(matrix: Record<string, unknown> | undefined): Array<Record<string, unknown> | undefined> {
  if (!matrix) return [undefined];
  if ('include' in matrix || 'exclude' in matrix) throw new Error('workflow-runner: matrix include/exclude is not supported');
  return Object.entries(matrix).reduce<Array<Record<string, unknown>>>((acc, [k, values]) => acc.flatMap((c) => (values as unknown[]).map((v) => ({ ...c, [k]: v }))), [{}]);
}

const writes = (perms: unknown) => perms === 'write-all' || (typeof perms === 'object' && perms !== null && Object.values(perms).includes('write'));

export function loadWorkflow(file: string): any {
  return parse(readFileSync(join(ROOT, file), 'utf8'));
}

/** Runs every matrix combination of `job` in `file` (in order) and returns one record each. */
export async function runJob(world: World, file: string, job: string, run: JobRun): Promise<JobRecord[]> {
  const wf = loadWorkflow(file);
  const spec = wf.jobs[job];
  if (!spec) throw new Error(`${file} has no job ${job}`);
  const records: JobRecord[] = [];
  for (const matrix of combinations(spec.strategy?.matrix)) {
    const workspace = typeof run.workspace === 'function' ? run.workspace() : run.workspace;
    records.push(await runOne(run.artifacts ? { ...world, artifacts: run.artifacts } : world, wf, spec, { ...run, workspace }, matrix));
  }
  return records;
}

async function runOne(world: World, wf: any, spec: any, run: JobRun & { workspace: string }, matrix: Record<string, unknown> | undefined): Promise<JobRecord> {
  const ref = run.ref ?? 'refs/heads/main';
  const token = !run.fork && writes(spec.permissions ?? wf.permissions) ? world.token : world.readOnlyToken;
  const temp = mkdtempSync(join(tmpdir(), 'perf-gate-job-'));
  const formDefaults = Object.fromEntries(Object.entries(wf.on?.workflow_dispatch?.inputs ?? {}).map(([k, v]: [string, any]) => [k, v?.default === undefined ? '' : String(v.default)]));
  const ctx: Record<string, any> = {
    github: {
      event: run.event,
      event_name: run.eventName,
      repository: 'Codertocat/Hello-World',
      repository_owner: 'Codertocat',
      ref,
      ref_name: ref.replace(/^refs\/(heads|tags)\//, ''),
      sha: 'ec26c3e57ca3a959ca5aad62de7213c562f8c821',
      run_id: '1234',
      token,
      workspace: run.workspace,
      server_url: 'https://github.com',
      api_url: world.gh.url,
    },
    inputs: run.eventName === 'workflow_dispatch' ? { ...formDefaults, ...run.inputs } : {},
    matrix: matrix ?? {},
    needs: run.needs ?? {},
    runner: { temp, os: 'Linux' },
    steps: {},
    env: {},
    vars: {},
    secrets: {},
    strategy: {},
  };
  const record: JobRecord = { result: 'success', matrix, steps: [], post: [], token };
  if (!condition(spec.if, ctx, 'success')) return { ...record, result: 'skipped' };
  for (const scope of [wf.env, spec.env]) for (const [k, v] of Object.entries(scope ?? {})) ctx.env[k] = mapImages(interpolate(String(v), ctx), world.images);

  let status: 'success' | 'failure' = 'success';
  const posts: Array<{ state: Record<string, string>; inputs: Record<string, string>; env: Record<string, string> }> = [];
  for (const [i, step] of (spec.steps as any[]).entries()) {
    const env: Record<string, string> = { ...ctx.env };
    for (const [k, v] of Object.entries(step.env ?? {})) env[k] = mapImages(interpolate(String(v), { ...ctx, env }), world.images);
    const sctx = { ...ctx, env };
    const label = step.name ?? step.uses ?? `run #${i + 1}`;
    if (!condition(step.if, sctx, status)) {
      record.steps.push({ id: step.id, label, outcome: 'skipped' });
      if (step.id) ctx.steps[step.id] = { outcome: 'skipped', conclusion: 'skipped', outputs: {} };
      continue;
    }
    const w: Record<string, string> = Object.fromEntries(Object.entries(step.with ?? {}).map(([k, v]) => [k, mapImages(interpolate(String(v), sctx), world.images)]));
    let rec: StepRecord;
    let outputs: Record<string, string> = {};
    if (step.run !== undefined) {
      const outFile = join(temp, `output-${i}`);
      writeFileSync(outFile, '');
      const r = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', mapImages(interpolate(step.run, sctx), world.images)], {
        cwd: run.workspace,
        encoding: 'utf8',
        timeout: 300_000,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '/root',
          GITHUB_ACTIONS: 'true',
          GITHUB_WORKSPACE: run.workspace,
          GITHUB_OUTPUT: outFile,
          RUNNER_TEMP: temp,
          GITHUB_EVENT_NAME: run.eventName,
          GITHUB_REF: ref,
          ...env,
        },
      });
      outputs = simpleOutputs(readFileSync(outFile, 'utf8'));
      rec = { id: step.id, label, outcome: r.status === 0 ? 'success' : 'failure', log: `${r.stdout}${r.stderr}` };
    } else if (OURS.test(step.uses ?? '')) {
      const inputs = ourInputs(w, sctx, world);
      const action = await runAction({
        workspace: run.workspace,
        apiUrl: world.gh.url,
        event: run.event,
        eventName: run.eventName,
        inputs,
        timeoutMs: 300_000,
        env: { GITHUB_REF: ref, GITHUB_REF_NAME: ctx.github.ref_name, RUNNER_TEMP: temp, ...env },
      });
      posts.push({ state: Object.fromEntries([...action.stdout.matchAll(/^::save-state name=([^:]+)::(.*)$/gm)].map((m) => [m[1], m[2]])), inputs, env });
      outputs = action.outputs;
      rec = { id: step.id, label, outcome: action.code === 0 ? 'success' : 'failure', inputs, action };
    } else if (/^actions\/checkout@/.test(step.uses)) {
      rec = { id: step.id, label, outcome: 'success', log: 'the test prepared the workspace' };
    } else if (/^actions\/upload-artifact@/.test(step.uses)) {
      rec = { id: step.id, label, ...upload(world, run.workspace, w) };
    } else if (/^actions\/download-artifact@/.test(step.uses)) {
      rec = { id: step.id, label, ...download(world, run.workspace, w) };
    } else {
      throw new Error(`workflow-runner: no stand-in for "${step.uses}" (step ${label})`);
    }
    record.steps.push(rec);
    if (step.id) ctx.steps[step.id] = { outcome: rec.outcome, conclusion: rec.outcome, outputs };
    if (rec.outcome === 'failure' && !step['continue-on-error']) status = 'failure';
  }
  // Post steps, last first, as the runner does: our action's clean-up net.
  for (const p of posts.reverse()) {
    record.post.push(
      await runAction({
        workspace: run.workspace,
        apiUrl: world.gh.url,
        event: run.event,
        eventName: run.eventName,
        entry: 'post',
        inputs: p.inputs,
        state: p.state,
        env: { GITHUB_REF: ref, RUNNER_TEMP: temp, ...p.env },
      }),
    );
  }
  record.result = status;
  return record;
}

/** action.yml's defaults (evaluated) under the step's `with:`, plus the test's size for measuring modes. */
function ourInputs(w: Record<string, string>, ctx: Record<string, unknown>, world: World): Record<string, string> {
  for (const k of Object.keys(w)) if (!(k in ACTION.inputs)) throw new Error(`workflow-runner: action.yml declares no input "${k}"`);
  const defaults = Object.fromEntries(
    Object.entries(ACTION.inputs as Record<string, { default?: string }>)
      .filter(([, v]) => v.default !== undefined)
      .map(([k, v]) => [k, interpolate(String(v.default), ctx)]),
  );
  const inputs = { ...defaults, ...w };
  return ['check', 'refresh'].includes(inputs.mode) ? { ...inputs, ...world.size } : inputs;
}

function simpleOutputs(text: string): Record<string, string> {
  const out = parseOutputs(text);
  for (const line of text.split('\n')) {
    const m = /^([^=<\s]+)=(.*)$/.exec(line);
    if (m) out[m[1]] = m[2];
  }
  return out;
}

function upload(world: World, workspace: string, w: Record<string, string>): Pick<StepRecord, 'outcome' | 'log'> {
  const name = w.name || 'artifact';
  const path = join(workspace, w.path);
  const store = join(world.artifacts, name);
  if (existsSync(store)) return { outcome: 'failure', log: `an artifact named ${name} was already uploaded (409 Conflict)` };
  if (!existsSync(path) || readdirSync(path).length === 0) {
    const mode = w['if-no-files-found'] || 'warn';
    return { outcome: mode === 'error' ? 'failure' : 'success', log: `no files at ${w.path} (${mode})` };
  }
  cpSync(path, store, { recursive: true });
  return { outcome: 'success', log: `uploaded ${w.path} as ${name}` };
}

function download(world: World, workspace: string, w: Record<string, string>): Pick<StepRecord, 'outcome' | 'log'> {
  const dest = w.path ? (isAbsolute(w.path) ? w.path : join(workspace, w.path)) : workspace;
  if (w.name) {
    const store = join(world.artifacts, w.name);
    if (!existsSync(store)) return { outcome: 'failure', log: `artifact ${w.name} not found` };
    cpSync(store, dest, { recursive: true });
    return { outcome: 'success', log: `downloaded ${w.name} to ${dest}` };
  }
  const pattern = new RegExp(
    `^${(w.pattern || '*')
      .split('*')
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
  const names = existsSync(world.artifacts) ? readdirSync(world.artifacts).filter((n) => pattern.test(n)) : [];
  mkdirSync(dest, { recursive: true });
  for (const n of names) cpSync(join(world.artifacts, n), w['merge-multiple'] === 'true' ? dest : join(dest, n), { recursive: true });
  return { outcome: 'success', log: `downloaded ${names.join(', ') || 'nothing'} to ${dest}` };
}
