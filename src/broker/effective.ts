// The configuration a target really runs with, read back from the broker — never taken from the
// files that declared it: enabled feature flags and plugins (management API), what trial vhosts
// inherit (vhost-config.ts), and on docker targets (`rabbitmqctl eval`, one call) the node's
// `rabbit` application environment (secrets masked, node names and gate-assigned ports
// normalised), the Erlang VM as it runs — the emulator flags as started (the node's own command
// line), schedulers online and their bind type, busy wait, async threads, limits, allocator
// strategies, OTP release — and the plugins actually running; and per scenario the queues as the
// broker ran them (type, version, the policy in effect, arguments), read in the first trial after
// its window. It owns the digest that says whether two targets are identical in effect, the list
// of differences when they are not, the warning for a declaration the broker does not have in
// effect (a plugin not running, an emulator flag overridden: undelivered), and the warning for a
// declared policy that matched no queue of the run.
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Declared, DeclaredPart, EffectiveConfig, QueueEffect, TrialResult, VmEffect } from '../schema/types';
import { describeSource } from './container-env';
import type { ManagementClient } from './management';
import type { VhostConfig } from './vhost-config';

/** rabbit application keys that differ between any two containers the gate starts (ports it
 *  assigned, per-node paths): shown, never compared. */
const PER_INSTANCE = new Set(['tcp_listeners', 'ssl_listeners', 'feature_flags_file', 'plugins_expand_dir', 'cluster_nodes']);
const SECRET = /pass|secret|cookie|password|token/i;
/** The allocators whose strategy (`as`) is read back. */
const ALLOCATORS = ['binary_alloc', 'eheap_alloc', 'ets_alloc', 'driver_alloc', 'std_alloc', 'll_alloc', 'sl_alloc', 'temp_alloc', 'fix_alloc'];
/** Init arguments that differ between any two nodes the gate starts, or are secret, or are the
 *  installation's paths: left out of what is read back and compared. */
const PER_INSTANCE_INIT = /^-(root|bindir|progname|home|epmd_port|setcookie|sname|name|kernel inet_dist_listen_(min|max))( |$)/;
/** Flags erl itself consumes: never seen by the node, so never checked against it. */
const ERLEXEC_ONLY = /^-(env|args_file|extra|detached|emu_args|emu_type|emu_flavor)( |$)/;

/** `key=value` lines of the rabbit application env (an expression of NODE_RUNTIME_EXPR). */
const RABBIT_ENV_EXPR =
  'lists:foreach(fun({K,V}) -> io:format("~s=~s~n",[K, re:replace(io_lib:format("~0p",[V]),"\\\\s+"," ",[global,{return,list}])]) end, ' + 'lists:sort(application:get_all_env(rabbit)))';

/** `vm:…` lines of the Erlang VM as it runs: its own command line (the emulator flags as started,
 *  tab-separated), its init arguments, what erlang:system_info says about schedulers, limits and
 *  allocator strategies, the plugins running and those enabled. */
const VM_EXPR =
  '{ok, VmCmd} = file:read_file("/proc/self/cmdline"), ' +
  'io:format("vm:cmdline=~s~n", [binary:replace(VmCmd, <<0>>, <<"\\t">>, [global])]), ' +
  'lists:foreach(fun({VmK, VmV}) -> io:format("vm:init=~ts~n", [lists:join("\\t", [atom_to_list(VmK) | VmV])]) end, init:get_arguments()), ' +
  'lists:foreach(fun(VmK) -> io:format("vm:info:~s=~0p~n", [VmK, erlang:system_info(VmK)]) end, [otp_release, schedulers, schedulers_online, ' +
  'dirty_cpu_schedulers, dirty_cpu_schedulers_online, dirty_io_schedulers, scheduler_bind_type, thread_pool_size, process_limit, port_limit, atom_limit, kernel_poll]), ' +
  'lists:foreach(fun(VmA) -> case catch erlang:system_info({allocator, VmA}) of VmL when is_list(VmL) -> ' +
  'case [VmS || {instance, _, VmI} <- VmL, {options, VmO} <- [lists:keyfind(options, 1, VmI)], {as, VmS} <- [lists:keyfind(as, 1, VmO)]] of ' +
  '[VmS1 | _] -> io:format("vm:alloc:~s=~s~n", [VmA, VmS1]); _ -> ok end; _ -> ok end end, ' +
  `[${ALLOCATORS.join(', ')}]), ` +
  'lists:foreach(fun(VmP) -> io:format("vm:plugin=~s~n", [VmP]) end, lists:sort(rabbit_plugins:active())), ' +
  // The enabled_plugins file as the node reads it (what /api/nodes reports, seconds later).
  'case application:get_env(rabbit, enabled_plugins_file) of {ok, VmEf} -> ' +
  'lists:foreach(fun(VmP) -> io:format("vm:enabled=~s~n", [VmP]) end, lists:sort(rabbit_plugins:read_enabled(VmEf))); _ -> ok end';

/** The `rabbitmqctl eval` expression reading a node's runtime: parseNodeRuntime reads its output. */
export const NODE_RUNTIME_EXPR = `${RABBIT_ENV_EXPR}, ${VM_EXPR}.`;

/** Parses the rabbit application env lines: secrets masked, the node name replaced by <node>. */
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

/** What NODE_RUNTIME_EXPR reads from a node. */
export interface NodeRuntime {
  env: Record<string, string>;
  vm?: VmEffect;
  activePlugins?: string[];
  /** The plugins its enabled_plugins file names. */
  enabledPlugins?: string[];
}

/** Flags and their values, in order, from command-line tokens: a token starting with `-` or `+`
 *  opens a flag, the tokens after it are its values. Emulator flags are written `+X` (as for erl). */
export function flagGroups(tokens: string[], emulator = false): Array<{ flag: string; value: string }> {
  const out: Array<{ flag: string; value: string }> = [];
  for (const t of tokens) {
    if (t === '') continue;
    if (/^[-+]/.test(t) && !/^-\d/.test(t)) out.push({ flag: emulator ? `+${t.slice(1)}` : t, value: '' });
    else if (out.length) out.at(-1)!.value = out.at(-1)!.value ? `${out.at(-1)!.value} ${t}` : t;
  }
  return out;
}

/** Each flag's value in effect: a later occurrence overrides an earlier one. */
export function flagsInEffect(groups: Array<{ flag: string; value: string }>): Record<string, string> {
  return Object.fromEntries(groups.map((g) => [g.flag, g.value]));
}

const BUSY_WAIT = ['+sbwt', '+sbwtdcpu', '+sbwtdio'];

/** Parses NODE_RUNTIME_EXPR's output. */
export function parseNodeRuntime(output: string, nodeName?: string): NodeRuntime {
  const env = parseNodeEnv(output, nodeName);
  let cmdline: string[] | undefined;
  const init: string[] = [];
  const raw: Record<string, string> = {};
  const alloc: Record<string, string> = {};
  const plugins: string[] = [];
  const enabled: string[] = [];
  for (const line of output.split('\n')) {
    const m = /^vm:([a-z]+)(?::([a-z_]+))?=(.*)$/.exec(line.replace(/\r$/, ''));
    if (!m) continue;
    const [, kind, key, value] = m;
    if (kind === 'cmdline') cmdline = value.split('\t');
    else if (kind === 'init') {
      const [k, ...vals] = value.split('\t');
      const arg = [`-${k}`, ...vals].join(' ').trim();
      if (!PER_INSTANCE_INIT.test(arg)) init.push(arg);
    } else if (kind === 'info' && key) raw[key] = value.replace(/^"(.*)"$/, '$1');
    else if (kind === 'alloc' && key) alloc[key] = value;
    else if (kind === 'plugin') plugins.push(value.trim());
    else if (kind === 'enabled') enabled.push(value.trim());
  }
  if (!cmdline) return { env };
  const end = cmdline.indexOf('--');
  const groups = flagGroups(cmdline.slice(1, end < 0 ? undefined : end), true);
  const flags = flagsInEffect(groups);
  const ofTotal = (online: string | undefined, total: string | undefined) => (online === undefined ? undefined : `${online} of ${total ?? '?'}`);
  const info: Record<string, string | undefined> = {
    'OTP release': raw.otp_release,
    'schedulers online': ofTotal(raw.schedulers_online, raw.schedulers),
    'scheduler bind type': raw.scheduler_bind_type,
    'dirty CPU schedulers online': ofTotal(raw.dirty_cpu_schedulers_online, raw.dirty_cpu_schedulers),
    'dirty IO schedulers': raw.dirty_io_schedulers,
    'busy wait': BUSY_WAIT.map((f) => `${f} ${flags[f] ?? 'medium (default)'}`).join(', '),
    'async threads': raw.thread_pool_size,
    'process limit': raw.process_limit,
    'port limit': raw.port_limit,
    'atom limit': raw.atom_limit,
    'kernel poll': raw.kernel_poll,
    ...Object.fromEntries(Object.entries(alloc).map(([a, as]) => [`${a} strategy`, as])),
  };
  return {
    env,
    vm: {
      emulatorFlags: groups.map((g) => `${g.flag}${g.value ? ` ${g.value}` : ''}`),
      flags,
      initArgs: init,
      info: Object.fromEntries(Object.entries(info).filter((e): e is [string, string] => e[1] !== undefined)),
    },
    ...(plugins.length ? { activePlugins: plugins.sort() } : {}),
    ...(enabled.length ? { enabledPlugins: enabled.sort() } : {}),
  };
}

/** The VM in one line: OTP release, schedulers, busy wait, async threads, process limit. */
export function vmSummary(vm: VmEffect): string {
  const i = vm.info;
  return [
    i['OTP release'] && `OTP ${i['OTP release']}`,
    i['schedulers online'] && `schedulers online ${i['schedulers online']}${i['scheduler bind type'] ? ` (bind type ${i['scheduler bind type']})` : ''}`,
    i['dirty CPU schedulers online'] && `dirty CPU schedulers online ${i['dirty CPU schedulers online']}`,
    i['busy wait'] && `busy wait ${i['busy wait']}`,
    i['async threads'] && `async threads ${i['async threads']}`,
    i['process limit'] && `process limit ${i['process limit']}`,
  ]
    .filter(Boolean)
    .join(', ');
}

/**
 * What a docker target declared but its broker does not have in effect, one sentence each: a
 * plugin of the enabled_plugins the gate wrote that is not running (not installed in the image,
 * failed to start), an emulator flag of RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS whose value in effect
 * is another (a later flag, RABBITMQ_SERVER_START_ARGS or ERL_ZFLAGS overrode it), an init flag
 * the node did not get. Empty when nothing could be read back to check against.
 */
export function undelivered(d: Declared | undefined, e: EffectiveConfig | undefined): string[] {
  if (!d || !e) return [];
  const out: string[] = [];
  if (e.activePlugins) {
    for (const p of d.plugins.filter((x) => !e.activePlugins!.includes(x.name))) {
      out.push(`plugin ${p.name} (${describeSource(p)}): in enabled_plugins, but not running in the broker; is it installed in the image (rabbitmq-plugins list)?`);
    }
  }
  const server = d.env.find((x) => x.name === 'RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS');
  if (e.vm && server) {
    const declared = new Map<string, { value: string; from: DeclaredPart }>();
    const init: Array<{ arg: string; from: DeclaredPart }> = [];
    for (const part of server.parts) {
      for (const g of flagGroups(part.value.split(/\s+/))) {
        if (g.flag.startsWith('+')) declared.set(g.flag, { value: g.value, from: part });
        else init.push({ arg: `${g.flag} ${g.value}`.trim(), from: part });
      }
    }
    for (const [flag, { value, from }] of declared) {
      const now = e.vm.flags[flag];
      if (now !== value) {
        out.push(`emulator flag ${flag} ${value} (${describeSource(from)}): the node runs ${now === undefined ? `without ${flag}` : `${flag} ${now}`}`);
      }
    }
    for (const { arg, from } of init) {
      if (PER_INSTANCE_INIT.test(arg) || ERLEXEC_ONLY.test(arg) || e.vm.initArgs.includes(arg)) continue;
      out.push(`init flag ${arg} (${describeSource(from)}): the node did not start with it`);
    }
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

/** The enabled plugins of node 1 as the management API reports them: its entry carries them once
 *  the management agent has reported (seconds after boot), so this waits up to 10 s for it. A node
 *  whose runtime was read (NODE_RUNTIME_EXPR) needs no wait. */
async function enabledByManagement(mgmt: ManagementClient): Promise<string[] | undefined> {
  let nodes: Array<{ enabled_plugins?: string[] }> | undefined;
  for (let i = 0; i < 20 && !Array.isArray(nodes?.[0]?.enabled_plugins); i++) {
    if (i) await sleep(500);
    nodes = await mgmt.request<Array<{ enabled_plugins?: string[] }>>('GET', '/api/nodes').catch(() => undefined);
  }
  return nodes?.[0]?.enabled_plugins;
}

/** Reads a target's node-level effective configuration (the per-scenario queues come later). */
export async function readEffective(
  mgmt: ManagementClient,
  identity: { rabbitmqVersion: string; erlangVersion: string; metadataStore?: string },
  inherited: VhostConfig | undefined,
  runtime?: NodeRuntime,
): Promise<EffectiveConfig> {
  const flags = await mgmt.request<Array<{ name?: string; state?: string }>>('GET', '/api/feature-flags').catch(() => undefined);
  const enabled = runtime?.enabledPlugins ?? (await enabledByManagement(mgmt));
  const eff: EffectiveConfig = {
    rabbitmqVersion: identity.rabbitmqVersion,
    erlangVersion: identity.erlangVersion,
    metadataStore: identity.metadataStore,
    featureFlags: flags
      ? flags
          .filter((f) => f.state === 'enabled' && f.name)
          .map((f) => f.name!)
          .sort()
      : undefined,
    plugins: enabled ? [...enabled].sort() : undefined,
    vhost: vhostLines(inherited),
    node: runtime?.env,
    ...(runtime?.vm ? { vm: runtime.vm } : {}),
    ...(runtime?.activePlugins ? { activePlugins: runtime.activePlugins } : {}),
    digest: '',
  };
  eff.digest = effectDigest(eff);
  return eff;
}

function comparable(e: EffectiveConfig): Record<string, unknown> {
  const node = e.node ? Object.fromEntries(Object.entries(e.node).filter(([k]) => !PER_INSTANCE.has(k))) : undefined;
  const vm = e.vm && { flags: e.vm.flags, init: e.vm.initArgs, info: e.vm.info };
  return { v: e.rabbitmqVersion, erl: e.erlangVersion, store: e.metadataStore, ff: e.featureFlags, plugins: e.plugins, vhost: e.vhost, node, vm, running: e.activePlugins };
}

/** sha256 over everything that shapes what the broker runs (not ports or per-node paths). */
export function effectDigest(e: EffectiveConfig): string {
  return `sha256:${createHash('sha256')
    .update(JSON.stringify(comparable(e)))
    .digest('hex')}`;
}

/** Where two targets differ in effect, one line each ("" when identical; capped at `max`). */
export function effectDiff(a: EffectiveConfig, b: EffectiveConfig, labels: [string, string], max = 30): string[] {
  const out: string[] = [];
  const [la, lb] = labels;
  const scalar = (what: string, x: unknown, y: unknown) => {
    if (x !== y) out.push(`${what}: ${la} ${x ?? '?'} · ${lb} ${y ?? '?'}`);
  };
  scalar('RabbitMQ', a.rabbitmqVersion, b.rabbitmqVersion);
  scalar('Erlang', a.erlangVersion, b.erlangVersion);
  scalar('metadata store', a.metadataStore, b.metadataStore);
  const sets = (what: string, x?: string[], y?: string[]) => {
    if (!x || !y) return;
    for (const v of x.filter((i) => !y.includes(i))) out.push(`${what} ${v}: ${la} only`);
    for (const v of y.filter((i) => !x.includes(i))) out.push(`${what} ${v}: ${lb} only`);
  };
  if (a.vm && b.vm) {
    const keyed = (what: string, x: Record<string, string>, y: Record<string, string>) => {
      for (const k of [...new Set([...Object.keys(x), ...Object.keys(y)])]) {
        if (x[k] !== y[k]) out.push(`${what}${k}: ${la} ${x[k] ?? '(unset)'} · ${lb} ${y[k] ?? '(unset)'}`);
      }
    };
    keyed('Erlang VM ', a.vm.info, b.vm.info);
    keyed('emulator flag ', a.vm.flags, b.vm.flags);
    sets('init flag', a.vm.initArgs, b.vm.initArgs);
  }
  sets('feature flag', a.featureFlags, b.featureFlags);
  sets('plugin', a.plugins, b.plugins);
  const enabledDiff = new Set([...(a.plugins ?? []), ...(b.plugins ?? [])].filter((p) => !a.plugins?.includes(p) || !b.plugins?.includes(p)));
  sets(
    'plugin running',
    a.activePlugins?.filter((p) => !enabledDiff.has(p)),
    b.activePlugins?.filter((p) => !enabledDiff.has(p)),
  );
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
  name: string;
  type?: string;
  arguments?: Record<string, unknown>;
  policy?: string | null;
  operator_policy?: string | null;
  effective_policy_definition?: Record<string, unknown> | unknown[];
  backing_queue_status?: { version?: number };
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
  const defOf = (list: Named[] | undefined, name?: string | null) => (name ? (list?.find((p) => p.name === name)?.definition ?? {}) : {});
  const detail = await Promise.all(listed.slice(0, 10).map((q) => mgmt.request<QueueInfo>('GET', `/api/queues/${v}/${encodeURIComponent(q.name)}`, undefined, timeoutMs).catch(() => undefined)));
  return listed.slice(0, 50).map((q, i) => {
    const d = detail[i];
    // The queue's own page has its effective definition once the broker has emitted its stats
    // (every 5 s by default); until then, the definitions of the policies the listing names, as
    // the broker holds them in this vhost (an operator policy's keys over the policy's).
    const raw = d?.effective_policy_definition;
    const def = raw && !Array.isArray(raw) && Object.keys(raw).length ? raw : { ...defOf(policies, q.policy), ...defOf(operatorPolicies, q.operator_policy) };
    const type = q.type ?? 'classic';
    const version = d?.backing_queue_status?.version ?? Number(q.arguments?.['x-queue-version'] ?? def['queue-version']);
    const policy = q.policy ?? d?.policy;
    const operatorPolicy = q.operator_policy ?? d?.operator_policy;
    return {
      name: q.name,
      type,
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
