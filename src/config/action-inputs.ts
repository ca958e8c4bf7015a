// The action's inputs (action.yml), read and validated into the pipeline's RunOptions plus the
// settings only the action needs. Every bad value is one GateError naming the input and the fix.
import * as core from '@actions/core';
import type { TargetSpec } from '../schema/types';
import type { CommentMode } from '../github/comment';
import { GateError } from './errors';

export interface ActionSettings {
  scenarios: string;
  candidate: TargetSpec;
  repetitions: number;
  mode: 'check' | 'refresh';
  baselineFile: string;
  failOnRegression: boolean;
  comment: CommentMode;
  token: string;
  name: string;
  reportDir: string;
  duration?: number;
  warmup?: number;
  seed?: number;
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
  const amqpUrl = url('broker-url', 'amqp://guest:guest@localhost:5672', ['amqp:', 'amqps:']);
  const managementUrl = url('management-url', 'http://localhost:15672', ['http:', 'https:']);
  return {
    scenarios: core.getInput('scenarios') || 'pr',
    candidate: { id: 'candidate', label: core.getInput('broker-label') || 'broker', kind: 'url', amqpUrl, managementUrl },
    repetitions: number('repetitions', 1, true) ?? 5,
    mode: oneOf('mode', core.getInput('mode') || 'check', ['check', 'refresh'] as const),
    baselineFile: core.getInput('baseline-file') || '.github/rabbitmq-perf/baseline.json',
    failOnRegression: bool('fail-on-regression', true),
    comment: oneOf('comment', core.getInput('comment') || 'always', ['always', 'on-change', 'never'] as const),
    token,
    name: core.getInput('name') || 'rabbitmq-perf-gate',
    reportDir: core.getInput('report-dir') || 'rabbitmq-perf-gate-report',
    duration: number('duration', 1, false),
    warmup: number('warmup', 0, false),
    seed: number('seed', 0, true),
  };
}
