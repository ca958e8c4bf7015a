// The configuration a target really runs with, read back from the broker — never taken from the
// files that declared it: enabled feature flags and plugins (management API), what trial vhosts
// inherit (vhost-config.ts), the node's `rabbit` application environment and its online
// schedulers (so `+S 2:1` shows) (docker targets:
// `rabbitmqctl eval`, secrets masked, node names and gate-assigned ports normalised), and per
// scenario the queues as the broker ran them (type, version, the policy in effect, arguments),
// read in the first trial after its window. It owns the digest that says whether two targets are
// identical in effect, the list of differences when they are not, and the warning for a
// declared policy that matched no queue of the run.
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EffectiveConfig, QueueEffect, TrialResult } from '../schema/types';
import type { ManagementClient } from './management';
import type { VhostConfig } from './vhost-config';

/** rabbit application keys that differ between any two containers the gate starts (ports it
 *  assigned, per-node paths): shown, never compared. */
const PER_INSTANCE = new Set(['tcp_listeners', 'ssl_listeners', 'feature_flags_file', 'plugins_expand_dir', 'cluster_nodes']);
const SECRET = /pass|secret|cookie|password|token/i;

/** The `rabbitmqctl eval` expression printing `key=value` lines of the rabbit application env. */
export const NODE_ENV_EXPR = 'lists:foreach(fun({K,V}) -> io:format("~s=~s~n",[K, re:replace(io_lib:format("~0p",[V]),"\\\\s+"," ",[global,{return,list}])]) end, '
  + 'lists:sort(application:get_all_env(rabbit)) ++ [{vm_schedulers_online, erlang:system_info(schedulers_online)}, '
  + '{vm_dirty_cpu_schedulers_online, erlang:system_info(dirty_cpu_schedulers_online)}]).';

/** Parses NODE_ENV_EXPR's output: secrets masked, the node name replaced by <node>. */
export function parseNodeEnv(output: string, nodeName?: string): Record<string, string> {
  const out: Record<string, string> = {};
  const short = nodeName?.split('@')[0];
  for (const line of output.split('\n')) {
    const m = /^([a-z_][a-z0-9_]*)=(.*)$/.exec(line.trim());
    if (!m) continue;
    let v = m[2];
    if (SECRET.test(m[1])) v = '***';
    else if (short) v = v.split(nodeName!).join('<node>').split(short).join('<node>');
    out[m[1]] = v;
  }
  return out;
}

const policyLine = (kind: string, p: VhostConfig['policies'][number]) =>
  `${kind} ${p.name}: pattern ${p.pattern}, apply-to ${p['apply-to'] ?? 'all'}, priority ${p.priority ?? 0}, ${JSON.stringify(p.definition)}`;

/** What trial vhosts inherit, one line each (sorted). */
export function vhostLines(c: VhostConfig | undefined): string[] {
  if (!c) return ['(not readable: trials inherit nothing)'];
  return [
    ...c.policies.map((p) => policyLine('policy', p)),
    ...c.operatorPolicies.map((p) => policyLine('operator policy', p)),
    ...Object.entries(c.limits).map(([k, v]) => `limit ${k} = ${v}`),
    ...c.topicPermissions.map((t) => `topic permission ${t.user} on ${t.exchange}: write ${t.write}, read ${t.read}`),
    ...(c.defaultQueueType ? [`default queue type ${c.defaultQueueType}`] : []),
  ].sort();
}

/** Reads a target's node-level effective configuration (the per-scenario queues come later). */
export async function readEffective(mgmt: ManagementClient, identity: { rabbitmqVersion: string; erlangVersion: string; metadataStore?: string },
  inherited: VhostConfig | undefined, nodeEnv?: Record<string, string>): Promise<EffectiveConfig> {
  const flags = await mgmt.request<Array<{ name?: string; state?: string }>>('GET', '/api/feature-flags').catch(() => undefined);
  // A node's entry carries its plugins once the management agent has reported it (seconds after boot).
  let nodes: Array<{ enabled_plugins?: string[] }> | undefined;
  for (let i = 0; i < 20 && !Array.isArray(nodes?.[0]?.enabled_plugins); i++) {
    if (i) await sleep(500);
    nodes = await mgmt.request<Array<{ enabled_plugins?: string[] }>>('GET', '/api/nodes').catch(() => undefined);
  }
  const eff: EffectiveConfig = {
    rabbitmqVersion: identity.rabbitmqVersion,
    erlangVersion: identity.erlangVersion,
    metadataStore: identity.metadataStore,
    featureFlags: flags ? flags.filter((f) => f.state === 'enabled' && f.name).map((f) => f.name!).sort() : undefined,
    plugins: nodes?.[0]?.enabled_plugins ? [...nodes[0].enabled_plugins].sort() : undefined,
    vhost: vhostLines(inherited),
    node: nodeEnv,
    digest: '',
  };
  eff.digest = effectDigest(eff);
  return eff;
}

function comparable(e: EffectiveConfig): Record<string, unknown> {
  const node = e.node ? Object.fromEntries(Object.entries(e.node).filter(([k]) => !PER_INSTANCE.has(k))) : undefined;
  return { v: e.rabbitmqVersion, erl: e.erlangVersion, store: e.metadataStore, ff: e.featureFlags, plugins: e.plugins, vhost: e.vhost, node };
}

/** sha256 over everything that shapes what the broker runs (not ports or per-node paths). */
export function effectDigest(e: EffectiveConfig): string {
  return `sha256:${createHash('sha256').update(JSON.stringify(comparable(e))).digest('hex')}`;
}

/** Where two targets differ in effect, one line each ("" when identical; capped at `max`). */
export function effectDiff(a: EffectiveConfig, b: EffectiveConfig, labels: [string, string], max = 30): string[] {
  const out: string[] = [];
  const [la, lb] = labels;
  const scalar = (what: string, x: unknown, y: unknown) => { if (x !== y) out.push(`${what}: ${la} ${x ?? '?'} · ${lb} ${y ?? '?'}`); };
  scalar('RabbitMQ', a.rabbitmqVersion, b.rabbitmqVersion);
  scalar('Erlang', a.erlangVersion, b.erlangVersion);
  scalar('metadata store', a.metadataStore, b.metadataStore);
  const sets = (what: string, x?: string[], y?: string[]) => {
    if (!x || !y) return;
    for (const v of x.filter((i) => !y.includes(i))) out.push(`${what} ${v}: ${la} only`);
    for (const v of y.filter((i) => !x.includes(i))) out.push(`${what} ${v}: ${lb} only`);
  };
  sets('feature flag', a.featureFlags, b.featureFlags);
  sets('plugin', a.plugins, b.plugins);
  sets('trial vhosts inherit', a.vhost, b.vhost);
  if (a.node && b.node) {
    for (const k of [...new Set([...Object.keys(a.node), ...Object.keys(b.node)])].sort()) {
      if (PER_INSTANCE.has(k) || a.node[k] === b.node[k]) continue;
      out.push(`node setting ${k}: ${la} ${a.node[k] ?? '(unset)'} · ${lb} ${b.node[k] ?? '(unset)'}`);
    }
  }
  return out.length > max ? [...out.slice(0, max), `… and ${out.length - max} more`] : out;
}

interface QueueInfo {
  name: string; type?: string; arguments?: Record<string, unknown>; policy?: string | null; operator_policy?: string | null;
  effective_policy_definition?: Record<string, unknown> | unknown[]; backing_queue_status?: { version?: number };
}

/** The queues of a trial vhost as the broker runs them (outside the measured window): the listing
 *  carries type, arguments and the policies at once; each queue's own page (the first 10) its
 *  effective policy definition and, once the broker has emitted its stats, the classic version. */
export async function readQueues(mgmt: ManagementClient, vhost: string, timeoutMs = 5_000): Promise<QueueEffect[]> {
  const v = encodeURIComponent(vhost);
  type Named = { name: string; definition?: Record<string, unknown> };
  const [listed, policies, operatorPolicies] = await Promise.all([
    mgmt.request<QueueInfo[]>('GET', `/api/queues/${v}?disable_stats=true&enable_queue_totals=true`, undefined, timeoutMs).then((x) => x ?? []),
    mgmt.request<Named[]>('GET', `/api/policies/${v}`, undefined, timeoutMs).catch(() => [] as Named[]),
    mgmt.request<Named[]>('GET', `/api/operator-policies/${v}`, undefined, timeoutMs).catch(() => [] as Named[]),
  ]);
  const defOf = (list: Named[] | undefined, name?: string | null) => (name ? list?.find((p) => p.name === name)?.definition ?? {} : {});
  const detail = await Promise.all(listed.slice(0, 10).map((q) =>
    mgmt.request<QueueInfo>('GET', `/api/queues/${v}/${encodeURIComponent(q.name)}`, undefined, timeoutMs).catch(() => undefined)));
  return listed.slice(0, 50).map((q, i) => {
    const d = detail[i];
    // The queue's own page has its effective definition once the broker has emitted its stats
    // (every 5 s by default); until then, the definitions of the policies the listing names, as
    // the broker holds them in this vhost (an operator policy's keys over the policy's).
    const raw = d?.effective_policy_definition;
    const def = raw && !Array.isArray(raw) && Object.keys(raw).length ? raw
      : { ...defOf(policies, q.policy), ...defOf(operatorPolicies, q.operator_policy) };
    const type = q.type ?? 'classic';
    const version = d?.backing_queue_status?.version ?? Number(q.arguments?.['x-queue-version'] ?? def['queue-version']);
    const policy = q.policy ?? d?.policy;
    const operatorPolicy = q.operator_policy ?? d?.operator_policy;
    return {
      name: q.name, type,
      ...(Number.isFinite(version) && type === 'classic' ? { version } : {}),
      ...(policy ? { policy } : {}),
      ...(operatorPolicy ? { operatorPolicy } : {}),
      ...(Object.keys(def).length ? { definition: def } : {}),
      arguments: q.arguments ?? {},
    };
  });
}

/**
 * Declared policies (inherited by the trial vhosts) that matched no queue of any scenario in the
 * run: each is a warning naming it. Only policies that apply to queues, and only when queues were
 * read back.
 */
export function unmatchedPolicies(inherited: VhostConfig | undefined, trials: TrialResult[]): string[] {
  const read = trials.filter((t) => t.queues);
  if (!inherited || !read.length) return [];
  const used = new Set(read.flatMap((t) => t.queues!.flatMap((q) => [q.policy, q.operatorPolicy])));
  const applies = (p: VhostConfig['policies'][number]) => !p['apply-to'] || /queues|all/.test(p['apply-to']);
  return [
    ...inherited.policies.filter((p) => applies(p) && !used.has(p.name)).map((p) => `policy ${p.name} (pattern ${p.pattern})`),
    ...inherited.operatorPolicies.filter((p) => applies(p) && !used.has(p.name)).map((p) => `operator policy ${p.name} (pattern ${p.pattern})`),
  ];
}
