// Resuming a run that stopped early (`run --resume DIR`): what its report records to go on
// (resumeRecord: the targets as given, secrets masked, and the options that shape its plan and
// trials), the targets to start again from that record (resumedTargets), the check that the
// restarted brokers are the ones it measured (brokerChanges: image ID, config files, version,
// nodes, and the effective configuration read back from the brokers — src/broker/anchor.ts and
// effective.ts identify a recorded broker the same way), and the trials it keeps (keptTrials:
// each at its place in the same plan; the trial the stop cut short runs again).
import type { ResumeRecord, RunReport, TargetInfo, TargetSpec, TrialResult } from '../schema/types';
import { GateError } from '../schema/errors';
import type { PlannedTrial } from '../plan/plan';
import { short, unmaskEnv } from './anchor';
import { maskValue } from './container-env';
import { effectDiff } from './effective';
import { credentials, maskUrl } from './urls';

/** A URL as a report may keep it: its password masked unless it is RabbitMQ's default. */
function keepUrl(url: string): string {
  try {
    return credentials(url).pass === 'guest' ? url : maskUrl(url);
  } catch {
    return maskUrl(url);
  }
}

function maskTarget(t: TargetSpec): TargetSpec {
  return t.kind === 'docker'
    ? { ...t, env: Object.fromEntries(Object.entries(t.env ?? {}).map(([k, v]) => [k, maskValue(k, v)])) }
    : { ...t, amqpUrl: keepUrl(t.amqpUrl), managementUrl: keepUrl(t.managementUrl) };
}

/** What a report that stopped early records for a resume. */
export function resumeRecord(o: Omit<ResumeRecord, 'candidate' | 'reference'> & { candidate: TargetSpec; reference?: TargetSpec }): ResumeRecord {
  return { ...o, candidate: maskTarget(o.candidate), ...(o.reference ? { reference: maskTarget(o.reference) } : {}) };
}

/** The recorded targets, ready to start: masked env values replaced by fresh random ones; a URL
 *  whose password was masked cannot be used again (the user gives it). */
export function resumedTargets(r: ResumeRecord, file: string): { candidate: TargetSpec; reference?: TargetSpec } {
  const open = (t: TargetSpec): TargetSpec => {
    if (t.kind === 'docker') return { ...t, env: unmaskEnv(t.env ?? {}) };
    if (/:\*\*\*@/.test(t.amqpUrl) || /:\*\*\*@/.test(t.managementUrl)) {
      throw new GateError(
        `the interrupted run's broker URL (${t.amqpUrl}) had a password, which reports never keep`,
        { file, field: '--resume' },
        'give --broker-url (and --management-url) again together with --resume',
      );
    }
    return t;
  };
  return { candidate: open(r.candidate), ...(r.reference ? { reference: open(r.reference) } : {}) };
}

/** How a restarted broker differs from the one the interrupted run measured; empty when it is the same. */
export function brokerChanges(before: TargetInfo, now: TargetInfo): string[] {
  const out: string[] = [];
  if (before.kind !== now.kind) out.push(`${before.kind === 'docker' ? 'a container' : 'a broker by URL'} then, ${now.kind === 'docker' ? 'a container' : 'a broker by URL'} now`);
  if (before.imageId && now.imageId && before.imageId !== now.imageId) out.push(`image ${before.image} (${short(before.imageId)}) then, ${now.image} (${short(now.imageId)}) now`);
  else if (before.image === now.image && before.configDigest && now.configDigest && before.configDigest !== now.configDigest) out.push('its config files changed');
  if (before.rabbitmqVersion !== now.rabbitmqVersion) out.push(`RabbitMQ ${before.rabbitmqVersion} then, ${now.rabbitmqVersion} now`);
  if (before.nodes.length !== now.nodes.length) out.push(`${before.nodes.length} node(s) then, ${now.nodes.length} now`);
  if (before.effective && now.effective && before.effective.digest !== now.effective.digest) {
    const d = effectDiff(before.effective, now.effective, ['then', 'now'], 8).filter((l) => !/^RabbitMQ:/.test(l) || !out.some((o) => o.startsWith('RabbitMQ')));
    out.push(...(d.length ? d.map((l) => `effective configuration: ${l}`) : ['its effective configuration differs (digest)']));
  }
  return out;
}

/** Throws unless the restarted targets are the brokers the interrupted run measured, target by target. */
export function checkSameBrokers(prior: RunReport, now: TargetInfo[], file: string): void {
  const changes = now.flatMap((t) => {
    const before = prior.targets.find((x) => x.id === t.id);
    return before ? brokerChanges(before, t).map((c) => `${t.label}: ${c}`) : [`${t.label}: not a target of the interrupted run`];
  });
  if (prior.targets.length !== now.length) changes.unshift(`the interrupted run measured ${prior.targets.length} target(s), this one ${now.length}`);
  if (changes.length) {
    throw new GateError(
      `these are not the brokers the interrupted run measured: ${changes.join('; ')}`,
      { file, field: '--resume' },
      'resume with the same images, config files and settings (or none: the recorded ones are used), or start a new run',
    );
  }
}

/** The interrupted run's trials to keep, by their place in the plan: all but the one the stop cut
 *  short, each of which must sit where the same plan puts it. */
export function keptTrials(prior: RunReport, plan: PlannedTrial[], file: string): Map<number, TrialResult> {
  const kept = prior.trials.filter((t) => t.order !== prior.resume?.cut);
  for (const t of kept) {
    const p = plan[t.order];
    if (!p || p.scenario.id !== t.scenario || p.target !== t.target || p.trial !== t.trial) {
      throw new GateError(
        `its trial ${t.order + 1} (${t.scenario} on ${t.target}, #${t.trial + 1}) is not where the resumed run's plan puts it`,
        { file, field: '--resume' },
        'the report was edited or written by another version: start a new run',
      );
    }
  }
  return new Map(kept.map((t) => [t.order, t]));
}
