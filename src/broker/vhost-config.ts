// What a target declares for its own vhost, carried into every trial vhost. Trials run in fresh
// vhosts (src/workload/trial.ts), and RabbitMQ scopes policies, operator policies, vhost limits,
// topic permissions and the default queue type to a vhost: without this, a policy a target sets
// in `setup:` or loads from `definitions.json` would never reach the queues being measured. The
// source is the vhost of the target's AMQP URL ("/" by default), read through the management API
// before each trial (outside the measured window) and applied to the trial vhost as is.
// Node-wide settings (rabbitmq.conf, advanced.config, env, feature flags, plugins) need nothing.
import type { ManagementClient } from './management';

interface Policy {
  name: string;
  pattern: string;
  definition: Record<string, unknown>;
  'apply-to'?: string;
  priority?: number;
}
interface TopicPermission {
  user: string;
  exchange: string;
  write: string;
  read: string;
}

export interface VhostConfig {
  /** The vhost it was read from. */
  source: string;
  policies: Policy[];
  operatorPolicies: Policy[];
  /** e.g. { "max-queues": 100 } */
  limits: Record<string, number>;
  topicPermissions: TopicPermission[];
  /** The vhost's default queue type (RabbitMQ 3.11+), when set. */
  defaultQueueType?: string;
}

/** The vhost an AMQP URL names ("/" when its path is empty). */
export function vhostOfUrl(amqpUrl: string): string {
  const path = new URL(amqpUrl).pathname;
  return path && path !== '/' ? decodeURIComponent(path.slice(1)) : '/';
}

const pick = (p: Policy): Policy => ({ name: p.name, pattern: p.pattern, definition: p.definition, 'apply-to': p['apply-to'], priority: p.priority ?? 0 });

export async function readVhostConfig(mgmt: ManagementClient, vhost: string): Promise<VhostConfig> {
  const v = encodeURIComponent(vhost);
  const [policies, operatorPolicies, limits, topics, info] = await Promise.all([
    mgmt.request<Policy[]>('GET', `/api/policies/${v}`),
    mgmt.request<Policy[]>('GET', `/api/operator-policies/${v}`).catch(() => []), // not every user may read them
    mgmt.request<Array<{ value?: Record<string, number> }>>('GET', `/api/vhost-limits/${v}`),
    mgmt.request<TopicPermission[]>('GET', `/api/vhosts/${v}/topic-permissions`),
    mgmt.request<{ default_queue_type?: string; metadata?: { default_queue_type?: string } }>('GET', `/api/vhosts/${v}`),
  ]);
  const dqt = info?.default_queue_type ?? info?.metadata?.default_queue_type;
  return {
    source: vhost,
    policies: (policies ?? []).map(pick),
    operatorPolicies: (operatorPolicies ?? []).map(pick),
    limits: Object.assign({}, ...(limits ?? []).map((l) => l.value ?? {})),
    topicPermissions: (topics ?? []).map((t) => ({ user: t.user, exchange: t.exchange, write: t.write, read: t.read })),
    defaultQueueType: dqt && dqt !== 'undefined' ? dqt : undefined,
  };
}

/** True when there is nothing to carry over. */
export function isEmptyVhostConfig(c: VhostConfig): boolean {
  return !c.policies.length && !c.operatorPolicies.length && !Object.keys(c.limits).length && !c.topicPermissions.length && !c.defaultQueueType;
}

/** Applies a source vhost's configuration to a (fresh) trial vhost. */
export async function applyVhostConfig(mgmt: ManagementClient, c: VhostConfig, vhost: string): Promise<void> {
  const v = encodeURIComponent(vhost);
  const body = (p: Policy) => ({ pattern: p.pattern, definition: p.definition, 'apply-to': p['apply-to'], priority: p.priority });
  for (const p of c.policies) await mgmt.request('PUT', `/api/policies/${v}/${encodeURIComponent(p.name)}`, body(p));
  for (const p of c.operatorPolicies) await mgmt.request('PUT', `/api/operator-policies/${v}/${encodeURIComponent(p.name)}`, body(p));
  for (const [name, value] of Object.entries(c.limits)) await mgmt.request('PUT', `/api/vhost-limits/${v}/${encodeURIComponent(name)}`, { value });
  for (const t of c.topicPermissions) {
    await mgmt.request('PUT', `/api/topic-permissions/${v}/${encodeURIComponent(t.user)}`, { exchange: t.exchange, write: t.write, read: t.read });
  }
}

/** One line for the log: what a trial vhost inherits from its target. */
export function describeVhostConfig(c: VhostConfig): string {
  const parts = [
    c.policies.length && `policies ${c.policies.map((p) => p.name).join(', ')}`,
    c.operatorPolicies.length && `operator policies ${c.operatorPolicies.map((p) => p.name).join(', ')}`,
    Object.keys(c.limits).length &&
      `limits ${Object.entries(c.limits)
        .map(([k, n]) => `${k}=${n}`)
        .join(', ')}`,
    c.topicPermissions.length && `topic permissions of ${c.topicPermissions.map((t) => t.user).join(', ')}`,
    c.defaultQueueType && `default queue type ${c.defaultQueueType}`,
  ].filter(Boolean);
  return parts.length ? `trial vhosts inherit from vhost ${c.source}: ${parts.join('; ')}` : `vhost ${c.source} declares nothing vhost-scoped`;
}
