// Which brokers the action measures, from its inputs and the repository: an image (plus an
// optional same-run baseline image), named target files (`target`, `baseline-target`, each `path`
// or `ref:path`), the repository's target file — read at a pull request's base and head commits —
// or, when none of these applies, the existing broker at broker-url.
import * as core from '@actions/core';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { DockerTargetSpec, TargetSpec } from '../schema/types';
import type { ActionSettings } from '../config/action-inputs';
import { DEFAULTS } from '../config/defaults';
import { gitCommit, hasCommit, restContents, workingTree, type FileSource } from '../config/file-source';
import { baseVsHead, namedPair, type TargetPlan } from '../config/targets';
import type { RunContext } from './context';
import { client } from './client';

export interface ChosenTargets {
  candidate: TargetSpec;
  reference?: TargetSpec;
  note?: string;
  diff?: string;
}

function imageTarget(id: string, image: string, configFiles: string[], nodes: number, workspace: string): DockerTargetSpec {
  return {
    id,
    label: `${id === 'baseline' ? 'baseline: ' : ''}${image}`,
    kind: 'docker',
    image,
    configFiles: configFiles.map((f) => resolve(workspace, f)),
    nodes,
    env: {},
    setup: [],
    network: 'host',
  };
}

/** A git ref in the checkout when it has the history, else the REST contents API. */
/** A commit's files: from the checkout's git objects when it has them, else the REST contents API. */
export async function sourceAt(ref: string, workspace: string, ctx: RunContext, token: string): Promise<FileSource> {
  if (await hasCommit(workspace, ref)) return gitCommit(workspace, ref);
  if (!ctx.owner || !ctx.repo || !token) return gitCommit(workspace, ref);
  const octokit = client(token, ctx.apiUrl);
  return restContents((a) => octokit.rest.repos.getContent(a), ctx.owner, ctx.repo, ref);
}

/** `path` (working tree) or `ref:path` (a branch, tag or commit). */
async function named(value: string, workspace: string, ctx: RunContext, token: string): Promise<{ source: FileSource; path: string }> {
  const m = /^([^:]+):(.+)$/.exec(value);
  if (!m || existsSync(resolve(workspace, value))) return { source: workingTree(workspace), path: value };
  return { source: await sourceAt(m[1], workspace, ctx, token), path: m[2] };
}

/** Env values that look like credentials (RABBITMQ_DEFAULT_PASS, …) are masked in the log. */
function maskSecrets(t: DockerTargetSpec): void {
  for (const [k, v] of Object.entries(t.env ?? {})) if (/PASS|SECRET|TOKEN|COOKIE|KEY/i.test(k) && v && v !== 'guest') core.setSecret(v);
}

function fromPlan(p: TargetPlan, workspace: string): ChosenTargets {
  maskSecrets(p.candidate);
  if (p.reference) maskSecrets(p.reference);
  const abs = (t: DockerTargetSpec): DockerTargetSpec => ({ ...t, configFiles: t.configFiles.map((f) => resolve(workspace, f)) });
  return { candidate: abs(p.candidate), reference: p.reference && abs(p.reference), note: p.note, diff: p.diff };
}

export async function chooseTargets(s: ActionSettings, ctx: RunContext, workspace: string): Promise<ChosenTargets> {
  const t = s.targets;
  if (t.brokerImage) {
    const candidate = imageTarget('candidate', t.brokerImage, t.brokerConfig, t.nodes, workspace);
    // broker-label names the started broker too, as --broker-label does with --image on the CLI.
    if (s.candidate.label !== DEFAULTS.brokerLabel) candidate.label = s.candidate.label;
    const reference = t.baselineImage ? imageTarget('baseline', t.baselineImage, t.baselineConfig ?? t.brokerConfig, t.nodes, workspace) : undefined;
    return { candidate, reference, note: reference ? `${t.brokerImage} against ${t.baselineImage} on this runner` : undefined };
  }
  if (t.target || t.baselineTarget) {
    const cand = await named(t.target ?? t.targetFile, workspace, ctx, s.token);
    const ref = t.baselineTarget ? await named(t.baselineTarget, workspace, ctx, s.token) : undefined;
    const plan = await namedPair(cand, ref);
    core.info(`Targets: ${plan.note}`);
    return fromPlan(plan, workspace);
  }
  if (t.targetFile !== 'none' && existsSync(resolve(workspace, t.targetFile))) {
    if (ctx.pullNumber && ctx.baseSha) {
      const base = await sourceAt(ctx.baseSha, workspace, ctx, s.token);
      const head = ctx.headSha && (await hasCommit(workspace, ctx.headSha)) ? gitCommit(workspace, ctx.headSha) : workingTree(workspace);
      const plan = await baseVsHead(base, head, t.targetFile);
      core.info(`Targets: ${plan.note}`);
      return fromPlan(plan, workspace);
    }
    const plan = await namedPair({ source: workingTree(workspace), path: t.targetFile });
    return fromPlan(plan, workspace);
  }
  return { candidate: s.candidate };
}
