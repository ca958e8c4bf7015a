// The CLI's brokers: which target(s) `run` and `refresh` measure, from --image/--baseline-image,
// --target/--baseline-target files (docs/targets.md) or --broker-url; the options that exclude
// each other; labels that tell two targets on one image apart; and the run id taken from
// RABBITMQ_PERF_GATE_RUN_ID (container labels and vhost names).
import { DEFAULTS } from './defaults';
import { existsSync, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import type { TargetSpec } from '../schema/types';
import { lineDiff } from './diff';
import { GateError } from '../schema/errors';
import { workingTree } from './file-source';
import { loadTarget, type LoadedTarget } from './target-file';

/** The CLI options these read (node:util parseArgs values). */
export interface TargetOptions {
  'broker-url'?: string;
  'management-url'?: string;
  'broker-label'?: string;
  image?: string;
  'baseline-image'?: string;
  target?: string;
  'baseline-target'?: string;
}

/** A target file from the working tree; config paths in it are relative to the current directory. */
async function targetFile(option: 'target' | 'baseline-target', file: string, id: string): Promise<LoadedTarget> {
  if (!existsSync(file) || !statSync(file).isFile()) {
    throw new GateError('target file not found', { file, field: `--${option}` }, 'give the path of a target file (see docs/targets.md), relative to the current directory');
  }
  const t = await loadTarget(workingTree(process.cwd()), file, id);
  // Credentials in env (RABBITMQ_DEFAULT_PASS, …) never reach the report's diff of the two files.
  const secrets = Object.entries(t.spec.env ?? {})
    .filter(([k, x]) => /PASS|SECRET|TOKEN|COOKIE|KEY/i.test(k) && x && x !== 'guest')
    .map(([, x]) => x);
  const text = secrets.reduce((acc, x) => acc.split(x).join('***'), t.text);
  return { ...t, text, spec: { ...t.spec, configFiles: t.spec.configFiles.map((f) => resolve(f)) } };
}

export interface CliTargets {
  candidate: TargetSpec;
  reference?: TargetSpec;
  note?: string;
  diff?: string;
}

export async function cliTargets(mode: 'check' | 'refresh', v: TargetOptions): Promise<CliTargets> {
  const url = v['broker-url'] ? '--broker-url' : v['management-url'] ? '--management-url' : undefined;
  if (v.image && v.target) throw new GateError('cannot be combined with --image: both describe the broker to measure', { field: '--target' }, 'keep one of them');
  if (v['baseline-image'] && v['baseline-target'])
    throw new GateError('cannot be combined with --baseline-image: both describe the reference broker', { field: '--baseline-target' }, 'keep one of them');
  for (const opt of ['image', 'target'] as const) {
    if (v[opt] && url) throw new GateError(`starts its own broker, so it cannot be combined with ${url}`, { field: `--${opt}` }, `drop ${url}, or drop --${opt} to measure the broker at the URL`);
  }
  const docker = (id: string, image: string): TargetSpec => ({ id, label: image, kind: 'docker', image, configFiles: [], nodes: 1, env: {}, setup: [], network: 'host' });
  const candFile = v.target ? await targetFile('target', v.target, 'candidate') : undefined;
  const refFile = mode === 'check' && v['baseline-target'] ? await targetFile('baseline-target', v['baseline-target'], 'baseline') : undefined;
  const candidate: TargetSpec = candFile
    ? candFile.spec
    : v.image
      ? docker('candidate', v.image)
      : {
          id: 'candidate',
          label: v['broker-label'] ?? DEFAULTS.brokerLabel,
          kind: 'url',
          amqpUrl: v['broker-url'] ?? DEFAULTS.cli.amqpUrl,
          managementUrl: v['management-url'] ?? DEFAULTS.cli.managementUrl,
        };
  if ((v.image || v.target) && v['broker-label']) candidate.label = v['broker-label'];
  const reference: TargetSpec | undefined = refFile ? refFile.spec : mode === 'check' && v['baseline-image'] ? docker('baseline', v['baseline-image']) : undefined;
  // Two targets on the same image get the same default label: tell them apart by file name, or role.
  if (reference && reference.label === candidate.label) {
    reference.label = `${reference.label} (${refFile ? basename(v['baseline-target']!) : 'baseline'})`;
    candidate.label = `${candidate.label} (${candFile ? basename(v.target!) : 'candidate'})`;
  }
  if (!candFile && !refFile) return { candidate, reference };
  const describe = (file: string | undefined, t: TargetSpec) => file ?? (t.kind === 'docker' ? `image ${t.image}` : `the broker at --broker-url (${t.label})`);
  const note = reference
    ? `${describe(v.target, candidate)} against ${describe(v['baseline-target'], reference)}${candFile && refFile && candFile.digest === refFile.digest ? ' — identical descriptions: an A/A run' : ''}`
    : `${v.target} against the stored baseline`;
  const diff = candFile && refFile && candFile.digest !== refFile.digest ? lineDiff(refFile.text, candFile.text) : undefined;
  return { candidate, reference, note, diff };
}

/** RABBITMQ_PERF_GATE_RUN_ID labels the containers (rabbitmq-perf-gate.run=…) and names the trial vhosts. */
export function runIdFromEnv(): string | undefined {
  const id = process.env.RABBITMQ_PERF_GATE_RUN_ID;
  if (!id) return undefined;
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw new GateError(`is "${id}"`, { field: 'RABBITMQ_PERF_GATE_RUN_ID' }, 'use up to 64 letters, digits, - or _');
  return id;
}
