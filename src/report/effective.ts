// The "Effective configuration" section every report format shows: per target, what its broker
// was read back to run with (src/broker/effective.ts) — versions and metadata store, enabled
// feature flags and plugins, what trial vhosts inherited, node settings, the Erlang VM (emulator
// flags as started, schedulers, busy wait, limits, allocators), and each scenario's queues as they
// ran — then what a docker target was started with and where each value came from (image, target
// file, the gate; src/broker/container-env.ts); as plain lines, each format escapes and lays them out.
import type { QueueEffect, RunReport } from '../schema/types';
import { vmSummary } from '../broker/effective';
import { describeDeclared } from '../broker/container-env';

export function effectiveLines(r: RunReport): Array<{ target: string; lines: string[] }> {
  return r.targets
    .filter((t) => t.effective)
    .map((t) => {
      const e = t.effective!;
      const queues = r.scenarios.flatMap((s) => {
        const q = r.trials.find((x) => x.target === t.id && x.scenario === s.id && x.queues)?.queues;
        return q ? [`queues of ${s.id}: ${queueSummary(q)}`] : [];
      });
      const nodeKeys = e.node ? Object.keys(e.node).length : 0;
      return {
        target: t.label,
        lines: [
          `RabbitMQ ${e.rabbitmqVersion} on Erlang ${e.erlangVersion}${e.metadataStore ? `, metadata store ${e.metadataStore}` : ''}`,
          e.featureFlags ? `feature flags enabled (${e.featureFlags.length}): ${e.featureFlags.join(', ') || 'none'}` : 'feature flags: not readable',
          e.plugins ? `plugins enabled: ${e.plugins.join(', ') || 'none'}` : 'plugins: not readable',
          e.vhost.length ? `trial vhosts inherit: ${e.vhost.join('; ')}` : 'trial vhosts inherit nothing (the target declares nothing vhost-scoped)',
          ...(e.activePlugins ? [`plugins running: ${e.activePlugins.join(', ')}`] : []),
          e.node
            ? `node settings: ${nodeKeys} read back (rabbit application environment${e.node.tcp_listen_options ? `, tcp_listen_options ${e.node.tcp_listen_options}` : ''})`
            : 'node settings: not readable here (a broker attached by URL)',
          ...(e.vm
            ? [
                `Erlang VM: ${vmSummary(e.vm)}`,
                `allocator strategies: ${
                  Object.entries(e.vm.info)
                    .filter(([k]) => k.endsWith(' strategy'))
                    .map(([k, v]) => `${k.replace(/ strategy$/, '')} ${v}`)
                    .join(', ') || 'not read'
                }`,
                `emulator flags as started: ${e.vm.emulatorFlags.join(' ')}`,
                ...(e.vm.initArgs.length ? [`init flags (cookie, node name, ports and paths left out): ${e.vm.initArgs.join(' ')}`] : []),
              ]
            : []),
          ...queues,
          `effective digest ${e.digest.slice(0, 19)}`,
          ...(t.declared ? describeDeclared(t.declared).map((l) => `started with: ${l}`) : []),
        ],
      };
    });
}

/** Queues of one scenario as they ran, summarised: "classic v2, policy cqv2 {"queue-version":2}". */
export function queueSummary(qs: QueueEffect[]): string {
  const kinds = new Map<string, number>();
  for (const q of qs) {
    const k = [
      `${q.type}${q.version ? ` v${q.version}` : ''}`,
      q.policy ? `policy ${q.policy}` : '',
      q.operatorPolicy ? `operator policy ${q.operatorPolicy}` : '',
      q.definition ? JSON.stringify(q.definition) : '',
      Object.keys(q.arguments).length ? `arguments ${JSON.stringify(q.arguments)}` : '',
    ]
      .filter(Boolean)
      .join(', ');
    kinds.set(k, (kinds.get(k) ?? 0) + 1);
  }
  return [...kinds].map(([k, n]) => `${n} × ${k}`).join('; ') || 'no queues left at the end of the window';
}
