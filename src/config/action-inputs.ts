// The action's inputs (action.yml), read and validated into the pipeline's RunOptions plus the
// settings only the action needs. Every bad value is one GateError naming the input and the fix.
import { DEFAULTS } from './defaults';
import * as core from '@actions/core';
import type { TargetSpec } from '../schema/types';
import { parseShard, type Shard } from '../plan/shard';
import { GateError } from '../schema/errors';
import { parseLooks } from './looks';
import type { BisectInput } from './bisect-range';

/** check/refresh run the matrix; comment posts a finished report (workflow_run); merge combines
 *  shards; bisect searches an image list or git range for the first regression; nightly A/Bs
 *  tonight's image against the baseline's broker and appends to the history file. */
export const ACTION_MODES = ['check', 'refresh', 'comment', 'merge', 'bisect', 'nightly'] as const;
export type ActionMode = (typeof ACTION_MODES)[number];
export type RefreshCommit = 'pr' | 'direct' | 'none';

/** When the pull-request comment is posted (src/github/comment.ts). */
export type CommentMode = 'always' | 'on-change' | 'never';

export interface ActionSettings {
  scenarios: string;
  candidate: TargetSpec;
  /** Absent: the pipeline's default for the selection (src/compare/compare.ts defaultRepetitions). */
  repetitions?: number;
  mode: ActionMode;
  baselineFile: string;
  failOnRegression: boolean;
  /** check without a reference: start the stored baseline's recorded broker and A/B against it. */
  anchoredBaseline: boolean;
  /** Same-run A/B: group-sequential where the preset (or `looks`) has looks; false: fixed design. */
  sequential: boolean;
  /** Sequential A/B: a scenario's fail at a look ends the run (the others stop at that look). */
  failFast: boolean;
  /** Same-run A/B on containers: a differential flame graph of each failing scenario (perf). */
  flameGraph: boolean;
  looks?: number[];
  comment: CommentMode;
  token: string;
  name: string;
  reportDir: string;
  duration?: number;
  warmup?: number;
  seed?: number;
  /** Per-run time limit in minutes (input time-limit; 0 = none): no trial starts after it, the one running is cut short. */
  timeLimitMinutes: number;
  // --- GitHub integration (issue 6): fork-safe comments, refresh commits, shards, trend ---
  /** mode: comment — the report.json to post (pr.json must sit next to it). */
  report?: string;
  /** mode: merge — glob(s) or folder(s) holding the shards' report.json files. */
  reports?: string;
  refreshCommit: RefreshCommit;
  shard?: Shard;
  /** "scenario/metric" for the trend chart; empty = automatic. */
  trendMetric?: string;
  // --- Targets (issues 3 and 10): images, target files, base vs head ---
  targets: TargetInputs;
  // --- Bisect and nightly history (issue 34) ---
  bisect: BisectInputs;
  /** mode: nightly — the history file (in the repository) each night is appended to. */
  historyFile: string;
  /** mode: nightly — the source commit of broker-image (else its org.opencontainers.image.revision label). */
  revision?: string;
}

export interface BisectInputs extends BisectInput {
  /** The checkout the range is read from (relative to the workspace). */
  repo?: string;
  /** The state file (relative to the workspace); default: report-dir/bisect-state.json. */
  state?: string;
  attempts?: number;
  /** An issue or pull request to post the result to. */
  commentOn?: number;
}

export interface TargetInputs {
  brokerImage?: string;
  baselineImage?: string;
  brokerConfig: string[];
  baselineConfig?: string[];
  nodes: number;
  /** Path of the repository's target file, or 'none'. */
  targetFile: string;
  /** Named targets (workflow_dispatch): `path` or `ref:path`. */
  target?: string;
  baselineTarget?: string;
}

function list(name: string): string[] | undefined {
  const raw = core.getInput(name);
  return raw
    ? raw
        .split(/[\n,]/)
        .map((x) => x.trim())
        .filter(Boolean)
    : undefined;
}

function targetInputs(): TargetInputs {
  const nodes = number('broker-nodes', 1, true) ?? DEFAULTS.brokerNodes;
  if (nodes > 5) throw new GateError(`input broker-nodes is ${nodes}`, { field: 'broker-nodes' }, 'use 1 (single node) or 3 (a cluster)');
  const baselineImage = core.getInput('baseline-image') || undefined;
  const brokerImage = core.getInput('broker-image') || undefined;
  if (baselineImage && !brokerImage) throw new GateError('baseline-image needs broker-image', { field: 'baseline-image' }, 'set broker-image to the candidate image');
  return {
    brokerImage,
    baselineImage,
    nodes,
    brokerConfig: list('broker-config') ?? [],
    baselineConfig: list('baseline-config'),
    targetFile: core.getInput('target-file') || DEFAULTS.targetFile,
    target: core.getInput('target') || undefined,
    baselineTarget: core.getInput('baseline-target') || undefined,
  };
}

function githubInputs(mode: ActionMode): Pick<ActionSettings, 'report' | 'reports' | 'refreshCommit' | 'shard' | 'trendMetric'> {
  const report = core.getInput('report') || undefined;
  const reports = core.getInput('reports') || undefined;
  if (mode === 'comment' && !report) throw new GateError('mode: comment needs the report input', { field: 'report' }, 'give the path of the downloaded report.json (pr.json must be next to it)');
  if (mode === 'merge' && !reports) throw new GateError('mode: merge needs the reports input', { field: 'reports' }, "give a folder or glob of the shards' report.json files");
  const shard = core.getInput('shard');
  return {
    report,
    reports,
    refreshCommit: oneOf('refresh-commit', core.getInput('refresh-commit') || DEFAULTS.refreshCommit, ['pr', 'direct', 'none'] as const),
    shard: shard ? parseShard(shard) : undefined,
    trendMetric: core.getInput('trend-metric') || undefined,
  };
}

function bisectInputs(mode: ActionMode): BisectInputs {
  const opt = (name: string) => (core.getInput(name) === '' ? undefined : core.getInput(name));
  const b: BisectInputs = {
    images: opt('bisect-images'),
    template: opt('bisect-template'),
    range: opt('bisect-range'),
    repo: opt('bisect-repo'),
    good: opt('bisect-good'),
    bad: opt('bisect-bad'),
    state: opt('bisect-state'),
    attempts: number('bisect-attempts', 1, true),
    commentOn: number('comment-on', 1, true),
  };
  if (mode === 'bisect' && !b.images && !b.template && !b.range) {
    throw new GateError(
      'mode: bisect needs the images to search',
      { field: 'bisect-images' },
      'give bisect-images (oldest first: known good … known bad), or bisect-template with bisect-range GOOD..BAD',
    );
  }
  return b;
}

function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new GateError(`input ${name} is "${value}"`, { field: name }, `use one of: ${allowed.join(', ')}`);
}

function number(name: string, min: number, integer: boolean): number | undefined {
  const raw = core.getInput(name);
  if (!raw) return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) {
    throw new GateError(`input ${name} is "${raw}"`, { field: name }, `use ${integer ? 'a whole number' : 'a number'} of at least ${min}`);
  }
  return n;
}

function bool(name: string, fallback: boolean): boolean {
  const raw = core.getInput(name).toLowerCase();
  if (!raw) return fallback;
  if (['true', 'yes', '1'].includes(raw)) return true;
  if (['false', 'no', '0'].includes(raw)) return false;
  throw new GateError(`input ${name} is "${raw}"`, { field: name }, 'use true or false');
}

function url(name: string, fallback: string, protocols: string[]): string {
  const raw = core.getInput(name) || fallback;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new GateError(`input ${name} is not a URL`, { field: name }, `use e.g. ${fallback}`);
  }
  if (!protocols.includes(u.protocol)) throw new GateError(`input ${name} has protocol ${u.protocol}`, { field: name }, `use ${protocols.join(' or ')}`);
  // The well-known default password is not a secret; masking it would blank every 'guest' in logs.
  if (u.password && u.password !== 'guest') core.setSecret(decodeURIComponent(u.password));
  return raw;
}

export function readActionInputs(): ActionSettings {
  const token = core.getInput('github-token');
  if (token) core.setSecret(token);
  const amqpUrl = url('broker-url', DEFAULTS.action.amqpUrl, ['amqp:', 'amqps:']);
  const managementUrl = url('management-url', DEFAULTS.action.managementUrl, ['http:', 'https:']);
  const mode = oneOf('mode', core.getInput('mode') || DEFAULTS.mode, ACTION_MODES);
  return {
    scenarios: core.getInput('scenarios') || DEFAULTS.scenarios,
    candidate: { id: 'candidate', label: core.getInput('broker-label') || DEFAULTS.brokerLabel, kind: 'url', amqpUrl, managementUrl },
    repetitions: number('repetitions', 1, true),
    mode,
    baselineFile: core.getInput('baseline-file') || DEFAULTS.baselineFile,
    failOnRegression: bool('fail-on-regression', DEFAULTS.failOnRegression),
    anchoredBaseline: bool('anchored-baseline', DEFAULTS.anchoredBaseline),
    sequential: bool('sequential', DEFAULTS.sequential),
    failFast: bool('fail-fast', DEFAULTS.failFast),
    flameGraph: bool('flame-graph', DEFAULTS.flameGraph),
    looks: core.getInput('looks') ? parseLooks(core.getInput('looks'), 'looks') : undefined,
    comment: oneOf('comment', core.getInput('comment') || DEFAULTS.comment, ['always', 'on-change', 'never'] as const),
    token,
    name: core.getInput('name') || DEFAULTS.name,
    reportDir: core.getInput('report-dir') || DEFAULTS.reportDir,
    duration: number('duration', 1, false),
    warmup: number('warmup', 0, false),
    seed: number('seed', 0, true),
    timeLimitMinutes: number('time-limit', 0, false) ?? DEFAULTS.timeLimitMinutes,
    ...githubInputs(mode),
    targets: targetInputs(),
    bisect: bisectInputs(mode),
    historyFile: core.getInput('history-file') || DEFAULTS.historyFile,
    revision: core.getInput('revision') || undefined,
  };
}
