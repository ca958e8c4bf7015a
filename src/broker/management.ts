// A minimal RabbitMQ management HTTP API client: broker identity (versions, node memory),
// per-trial vhosts, queue depths and definitions import. Credentials come from the URL's userinfo
// and are sent as basic auth, never logged.
import { GateError } from '../schema/errors';
import type { MetadataStore, NodeInfo } from '../schema/types';

export interface BrokerIdentity {
  rabbitmqVersion: string;
  erlangVersion: string;
  /** undefined when the feature flags could not be read. */
  metadataStore?: MetadataStore;
  nodes: NodeInfo[];
}

/** Feature flag khepri_db enabled → khepri; disabled, changing or absent (before 3.13) → mnesia. */
export function metadataStoreOf(flags: Array<{ name?: string; state?: string }>): MetadataStore {
  return flags.some((f) => f.name === 'khepri_db' && f.state === 'enabled') ? 'khepri' : 'mnesia';
}

export class ManagementClient {
  private readonly base: string;
  private readonly auth: string;

  constructor(managementUrl: string, fallbackUser = 'guest', fallbackPass = 'guest') {
    const u = new URL(managementUrl);
    const user = decodeURIComponent(u.username) || fallbackUser;
    const pass = decodeURIComponent(u.password) || fallbackPass;
    this.auth = 'Basic ' + Buffer.from(`${user}:${pass}`).toString('base64');
    u.username = '';
    u.password = '';
    this.base = u.toString().replace(/\/+$/, '');
  }

  /** Base URL without credentials, safe to print. */
  get publicUrl(): string {
    return this.base;
  }

  async request<T>(method: string, path: string, body?: unknown, timeoutMs = 30_000): Promise<T> {
    let res: Response;
    try {
      res = await fetch(this.base + path, {
        method,
        headers: { authorization: this.auth, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      const c = (err as { cause?: { code?: string; message?: string } }).cause;
      const cause = (err as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : (c?.code ?? c?.message ?? (err as Error).message);
      throw new GateError(
        `management API at ${this.base} is unreachable (${cause})`,
        { field: 'management-url' },
        'enable the rabbitmq_management plugin and point management-url at its port (default 15672)',
      );
    }
    if (res.status === 401) {
      throw new GateError(
        `management API at ${this.base} rejected the credentials (401)`,
        { field: 'management-url' },
        'put a user with the administrator tag in the URL, e.g. http://user:pass@host:15672',
      );
    }
    if (!res.ok && !(method === 'DELETE' && res.status === 404)) {
      const text = (await res.text()).slice(0, 300);
      throw new GateError(`management API ${method} ${path} answered ${res.status}: ${text}`);
    }
    const text = await res.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  async identity(): Promise<BrokerIdentity> {
    const overview = await this.request<{ rabbitmq_version?: string; erlang_version?: string; product_version?: string }>('GET', '/api/overview');
    const nodes = await this.request<Array<{ name: string; mem_used?: number; mem_limit?: number; processors?: number }>>('GET', '/api/nodes');
    return {
      rabbitmqVersion: overview.rabbitmq_version ?? overview.product_version ?? 'unknown',
      erlangVersion: overview.erlang_version ?? 'unknown',
      metadataStore: await this.metadataStore(),
      nodes: nodes.map((n) => ({ name: n.name, memUsedBytes: n.mem_used, memLimitBytes: n.mem_limit, processors: n.processors })),
    };
  }

  /** Which metadata store the broker runs on (GET /api/feature-flags); undefined when it cannot be read. */
  async metadataStore(): Promise<MetadataStore | undefined> {
    try {
      const flags = await this.request<Array<{ name?: string; state?: string }>>('GET', '/api/feature-flags');
      return Array.isArray(flags) ? metadataStoreOf(flags) : undefined;
    } catch {
      return undefined; // a user without the administrator tag, an old broker: not a reason to stop the run
    }
  }

  /** The node this management API runs on (GET /api/overview). */
  async localNode(): Promise<string> {
    return (await this.request<{ node: string }>('GET', '/api/overview')).node;
  }

  /** A node's memory (GET /api/nodes/<node>/memory): the Erlang VM's total and the part of it that
   *  is binaries, and the OS process's resident memory. */
  async nodeMemory(node: string): Promise<{ erlang: number; binary: number; rss: number }> {
    const r = await this.request<{ memory?: { binary?: number; total?: { erlang?: number; rss?: number } } }>('GET', `/api/nodes/${encodeURIComponent(node)}/memory`);
    const m = r.memory;
    if (typeof m?.total?.erlang !== 'number' || typeof m.binary !== 'number' || typeof m.total.rss !== 'number') {
      throw new Error(`the management API gave no memory breakdown for node ${node}`);
    }
    return { erlang: m.total.erlang, binary: m.binary, rss: m.total.rss };
  }

  async createVhost(vhost: string, user: string, defaultQueueType?: string): Promise<void> {
    const v = encodeURIComponent(vhost);
    await this.request('PUT', `/api/vhosts/${v}`, defaultQueueType ? { default_queue_type: defaultQueueType } : {});
    await this.request('PUT', `/api/permissions/${v}/${encodeURIComponent(user)}`, { configure: '.*', write: '.*', read: '.*' });
  }

  async deleteVhost(vhost: string, timeoutMs?: number): Promise<void> {
    await this.request('DELETE', `/api/vhosts/${encodeURIComponent(vhost)}`, undefined, timeoutMs);
  }

  async listVhosts(): Promise<string[]> {
    const vs = await this.request<Array<{ name: string }>>('GET', '/api/vhosts');
    return vs.map((v) => v.name);
  }

  async queues(vhost: string): Promise<Array<{ name: string; messages?: number; messages_ready?: number }>> {
    return this.request('GET', `/api/queues/${encodeURIComponent(vhost)}?columns=name,messages,messages_ready`);
  }

  async setPolicy(vhost: string, name: string, policy: { pattern: string; definition: Record<string, unknown>; 'apply-to'?: string; priority?: number }): Promise<void> {
    await this.request('PUT', `/api/policies/${encodeURIComponent(vhost)}/${encodeURIComponent(name)}`, policy);
  }
}
