// Starting a run's targets side by side: every target (candidate and same-run reference) boots at
// once, and each then reads back what its trials will run on — the vhost configuration they
// inherit, the node's runtime settings, the effective configuration (src/broker/effective.ts). An
// A/B waits for the slower boot instead of the sum of both. Each target's log lines are held and
// handed back in order, so that the run log shows one group per target, never interleaved.
import { describeError } from '../schema/errors';
import type { TargetSpec } from '../schema/types';
import { readEffective, undelivered, vmSummary } from './effective';
import { ManagementClient } from './management';
import type { BrokerHandle } from './provider';
import type { DockerProviderOptions } from './docker';
import { startTarget } from './start';
import { describeVhostConfig, isEmptyVhostConfig, readVhostConfig, vhostOfUrl, type VhostConfig } from './vhost-config';

export interface LogLine {
  warn: boolean;
  text: string;
}

export interface Booted {
  spec: TargetSpec;
  /** The running broker, or undefined when it could not be started (`error`). */
  handle?: BrokerHandle;
  error?: unknown;
  /** The start's own lines (shown in the target's group), then what was read back from it. */
  startLines: LogLine[];
  readLines: LogLine[];
  /** The vhost-scoped configuration its trial vhosts inherit; undefined when unreadable. */
  inherited?: VhostConfig;
  /** What the target declared that the gate could not honour or the broker does not have in
   *  effect: a warning each, for the log and the report. */
  configWarnings: string[];
}

/** Starts every target at once and reads each one back; never rejects: a failure is `error` (with
 *  `handle` set when the broker did start, for the caller to stop), and the other targets go on. */
export function bootTargets(specs: TargetSpec[], opts: Omit<DockerProviderOptions, 'log'>): Promise<Booted[]> {
  return Promise.all(specs.map((spec) => bootOne(spec, opts)));
}

async function bootOne(spec: TargetSpec, opts: Omit<DockerProviderOptions, 'log'>): Promise<Booted> {
  const b: Booted = { spec, startLines: [], readLines: [], configWarnings: [] };
  try {
    b.handle = await startTarget(spec, {
      ...opts,
      log: (text) => b.startLines.push({ warn: false, text }),
      warn: (text) => {
        b.startLines.push({ warn: true, text });
        b.configWarnings.push(text.replace(`${spec.label}: `, ''));
      },
    });
  } catch (error) {
    b.error = error;
    return b;
  }
  try {
    await readBack(b, b.handle);
  } catch (error) {
    b.error = error; // the handle stays: the caller stops it
  }
  return b;
}

async function readBack(b: Booted, h: BrokerHandle): Promise<void> {
  const { spec } = b;
  const info = (text: string) => b.readLines.push({ warn: false, text });
  const warn = (text: string) => b.readLines.push({ warn: true, text });
  info(`${spec.label}: RabbitMQ ${h.info.rabbitmqVersion} on Erlang ${h.info.erlangVersion} (${h.info.amqpUrl})`);
  const source = vhostOfUrl(h.amqpUrl);
  const mgmt = new ManagementClient(h.managementUrl);
  const inherited = await readVhostConfig(mgmt, source).catch((e: unknown) => {
    warn(
      `${spec.label}: could not read the policies, limits and permissions of vhost ${source} (${describeError(e)}); trials will not inherit them. Give the management user the policymaker or administrator tag.`,
    );
  });
  if (inherited && !isEmptyVhostConfig(inherited)) info(`${spec.label}: ${describeVhostConfig(inherited)}`);
  b.inherited = inherited ?? undefined;
  const runtime = h.nodeRuntime
    ? await h.nodeRuntime().catch((e: unknown) => {
        warn(`${spec.label}: could not read the node's runtime settings (${describeError(e)}); the report shows what the management API says`);
        return undefined;
      })
    : undefined;
  h.info.effective = await readEffective(mgmt, h.info, b.inherited, runtime);
  const vm = h.info.effective.vm;
  if (vm) info(`${spec.label}: Erlang VM read back: ${vmSummary(vm)}`);
  // What the target (or the image, or a scenario) declared but the broker does not have in effect.
  for (const w of undelivered(h.info.declared, h.info.effective)) {
    warn(`${spec.label}: declared but not in effect: ${w}`);
    b.configWarnings.push(`declared but not in effect: ${w}`);
  }
}
