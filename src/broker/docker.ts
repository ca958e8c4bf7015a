// Provider for `kind: docker` targets: starts one container per node from an image with the
// official rabbitmq image's interface, each with its own node name and AMQP, management,
// Prometheus, distribution and epmd ports (host networking shares the host's ports), copies the
// user's config files to /etc/rabbitmq, waits for AMQP + management, joins clusters, runs setup
// commands and records what the broker is. What the image declares stays in effect: its ENV and
// the files it ships in /etc/rabbitmq are read first, its enabled_plugins merged into the gate's,
// and the environment composed by src/broker/container-env.ts, with where each value came from
// (TargetInfo.declared). Whatever fails, the containers it started are removed.
// Node 1 restarts in place (src/broker/restart.ts) for `restart` scenarios: its RabbitMQ application
// on any target, its container on a single-node one.
import { createHash, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { GateError } from '../schema/errors';
import type { Declared, DockerTargetSpec, ValueSource } from '../schema/types';
import { defaultRunId, labelArgs, registerContainer, removeRegistered } from './cleanup';
import * as cli from './docker-cli';
import { composeEnv, DEFAULT_CONF_ENV_FILE, DEFAULT_PLUGINS_FILE, describeDeclared, type ImageDeclarations, inEffect, parseEnvConf } from './container-env';
import { NODE_RUNTIME_EXPR, parseNodeRuntime } from './effective';
import { cgroupFiles, type CgroupFiles, type EvidenceCapture, evidenceCapture, MSACC_ON_CALL, MSACC_ON_EXPR } from './evidence';
import { checkAmqp } from './existing';
import { ManagementClient } from './management';
import { allocatePorts, releasePorts } from './ports';
import type { BrokerHandle } from './provider';
import { restartApp, restartContainer } from './restart';
import { profileContainer } from './profile';
import { maskUrl } from './urls';
import { type Endpoints, PROTOCOL_PLUGIN, readEndpoints } from './endpoints';

/** The broker's endpoints once every enabled protocol plugin listens: a plugin's listener can
 *  come up after AMQP and the management API answer (seen on a throttled container). */
async function protocolListeners(mgmt: ManagementClient, amqpUrl: string, plugins: string[], timeoutMs: number): Promise<Endpoints> {
  const wanted = (Object.entries(PROTOCOL_PLUGIN) as Array<[keyof Endpoints, string]>).filter(([, plugin]) => plugins.includes(plugin)).map(([p]) => p);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const e = await readEndpoints(mgmt, amqpUrl);
    const missing = wanted.filter((p) => !e[p]);
    if (!missing.length) return e;
    if (Date.now() > deadline) {
      throw new GateError(
        `the broker enabled ${missing.map((p) => PROTOCOL_PLUGIN[p]).join(', ')} but no ${missing.join(', ')} listener came up within ${Math.round(timeoutMs / 1000)} s`,
        { field: 'image' },
        'see the container log: another process may hold the port, or the plugin failed to start',
      );
    }
    await sleep(500);
  }
}

/** Behind a bridge the listeners report the container's ports; the runner reaches the published ones. */
function bridgedEndpoints(e: Endpoints, bridge: boolean, n: Node): Endpoints {
  if (!bridge) return e;
  const host = (v: string) => v.slice(0, v.lastIndexOf(':'));
  return {
    ...(e.stream ? { stream: `${host(e.stream)}:${n.streamPort}` } : {}),
    ...(e.mqtt ? { mqtt: `${host(e.mqtt)}:${n.mqttPort}` } : {}),
    ...(e['amqp-1.0'] ? { 'amqp-1.0': `${host(e['amqp-1.0'])}:${n.amqpPort}` } : {}),
  };
}

export interface DockerProviderOptions {
  /** Labels every container (rabbitmq-perf-gate.run=<runId>) for the post-step net. */
  runId?: string;
  /** How long each node may take to accept AMQP and answer the management API; default 120 s. */
  readyTimeoutMs?: number;
  log?: (line: string) => void;
  /** A declaration the gate could not honour as written (default: `log`). */
  warn?: (line: string) => void;
  /** Start the nodes with `+JPperf true` and offer `profile()` (src/broker/profile.ts). */
  profile?: boolean;
  /** Plugins the run's scenarios need besides the target's own (rabbitmq_stream, rabbitmq_mqtt:
   *  src/broker/endpoints.ts); each gets its own listener port on every node. */
  plugins?: string[];
}

/** A broker that did not come up; `logs` holds its container's last lines for a collapsed group. */
export class BrokerBootError extends GateError {
  constructor(
    message: string,
    readonly logs: string[],
    fix?: string,
  ) {
    super(message, { field: 'image' }, fix);
  }
}

/** The container log lines attached to an error, if it carries any. */
export function containerLogsOf(err: unknown): string[] | undefined {
  return err instanceof BrokerBootError ? err.logs : undefined;
}

export interface ConfigFile {
  path: string;
  content: Buffer;
}

/** sha256 over the image reference and each config file's name and content, in order. */
export function configDigest(image: string, files: ConfigFile[]): string {
  const h = createHash('sha256').update(image).update('\0');
  for (const f of files) h.update(basename(f.path)).update('\0').update(f.content).update('\0');
  return 'sha256:' + h.digest('hex');
}

const REQUIRED_PLUGINS = ['rabbitmq_management', 'rabbitmq_prometheus'];

function parsePlugins(file: ConfigFile): string[] {
  const text = file.content.toString('utf8').replace(/%.*$/gm, '');
  const m = /^\s*\[([^\]]*)\]\s*\.\s*$/.exec(text);
  const names = m?.[1]
    .split(',')
    .map((s) => s.trim().replace(/^'(.*)'$/, '$1'))
    .filter(Boolean);
  if (!names || names.some((n) => !/^[a-z0-9_]+$/.test(n))) {
    throw new GateError('enabled_plugins is not an Erlang list of plugin names', { file: file.path }, 'write it as [rabbitmq_management,rabbitmq_shovel].');
  }
  return names;
}

/** What an image ships for its broker's configuration (read from it before the nodes start). */
export interface ImageConfig {
  /** The plugins of its enabled_plugins file; undefined when it ships none. */
  plugins?: string[];
  /** The files it ships in /etc/rabbitmq, relative paths ("conf.d/10-defaults.conf"). */
  files?: string[];
}

export interface ConfigLayout {
  /** What the gate copies into /etc/rabbitmq (relative paths). */
  files: Map<string, Buffer>;
  confLines: string[];
  plugins: string[];
  /** Each enabled plugin with where it came from. */
  pluginSources: Array<{ name: string; from: ValueSource }>;
  /** Every file in /etc/rabbitmq once the gate's are copied: the image's kept, the target's, the gate's. */
  fileSources: Array<{ path: string; from: ValueSource; replaces?: boolean }>;
}

/** Maps the user's config files to their place under /etc/rabbitmq (relative paths). The enabled
 *  plugins are the target file's enabled_plugins (which replaces the image's, on purpose) or else
 *  the image's, then this tool's own and those the run's scenarios need. */
export function layoutConfig(files: ConfigFile[], needed: string[] = [], image: ImageConfig = {}): ConfigLayout {
  const out = new Map<string, Buffer>();
  const confLines: string[] = [];
  let base: Array<{ name: string; from: ValueSource }> = (image.plugins ?? []).map((name) => ({ name, from: 'image' }));
  const targetFiles: string[] = [];
  files.forEach((f, i) => {
    const name = basename(f.path);
    let dest: string;
    if (name === 'enabled_plugins') {
      base = parsePlugins(f).map((p) => ({ name: p, from: 'target' }));
      dest = 'enabled_plugins';
    } else if (name === 'rabbitmq.conf') dest = 'rabbitmq.conf';
    else if (name.endsWith('.conf')) dest = `conf.d/50-${String(i).padStart(2, '0')}-${name}`;
    else if (name.endsWith('.config')) dest = 'advanced.config';
    else if (name.endsWith('.json')) {
      dest = 'definitions.json';
      confLines.push('load_definitions = /etc/rabbitmq/definitions.json');
    } else {
      throw new GateError(
        `config file ${name} is not one of rabbitmq.conf, *.conf, advanced.config, definitions.json or enabled_plugins`,
        { file: f.path, field: 'config' },
        'rename it after what it is, or drop it from config',
      );
    }
    if (out.has(dest)) {
      throw new GateError(`two config files both become /etc/rabbitmq/${dest}`, { file: f.path, field: 'config' }, 'merge them into one file');
    }
    out.set(dest, f.content);
    targetFiles.push(dest);
  });
  const pluginSources = [...base];
  const add = (name: string, from: ValueSource) => {
    if (!pluginSources.some((p) => p.name === name)) pluginSources.push({ name, from });
  };
  for (const p of REQUIRED_PLUGINS) add(p, 'gate');
  for (const p of needed) add(p, 'scenario');
  const plugins = pluginSources.map((p) => p.name);
  out.set('enabled_plugins', Buffer.from(`[${plugins.join(',')}].\n`));
  // The gate always writes its conf.d file and enabled_plugins (the merged list above).
  const shipped = new Set(image.files ?? []);
  const gateFiles = [GATE_CONF, 'enabled_plugins'];
  const fileSources: ConfigLayout['fileSources'] = [
    ...[...shipped].filter((f) => !targetFiles.includes(f) && !gateFiles.includes(f)).map((path) => ({ path, from: 'image' as const })),
    ...targetFiles.filter((f) => !gateFiles.includes(f)).map((path) => ({ path, from: 'target' as const, ...(shipped.has(path) ? { replaces: true } : {}) })),
    ...gateFiles.map((path) => ({ path, from: 'gate' as const, ...(shipped.has(path) ? { replaces: true } : {}) })),
  ].sort((a, b) => a.path.localeCompare(b.path));
  return { files: out, confLines, plugins, pluginSources, fileSources };
}

/** The gate's own conf.d file: this node's listeners and ports. */
const GATE_CONF = 'conf.d/90-rabbitmq-perf-gate.conf';

export async function readConfigFiles(paths: string[]): Promise<ConfigFile[]> {
  return Promise.all(
    paths.map(async (path) => {
      try {
        return { path, content: await readFile(path) };
      } catch (err) {
        throw new GateError(`cannot read config file ${path} (${(err as NodeJS.ErrnoException).code})`, { file: path, field: 'config' }, 'check the path, relative to the working directory');
      }
    }),
  );
}

interface Node {
  name: string; // container name
  nodeName?: string; // Erlang node name (host networking only)
  amqpPort: number;
  mgmtPort: number;
  promPort: number;
  distPort: number;
  streamPort: number;
  mqttPort: number;
}

/** Ports per node: AMQP, management, Prometheus, distribution, stream, MQTT. */
const PORTS_PER_NODE = 6;

/** This tool's listener lines for a node: its own ports, and one for each protocol plugin enabled
 *  (a plugin left on its default port would collide with other brokers, e.g. MQTT's 1883). */
export function listenerLines(plugins: string[], inner: { amqp: number; mgmt: number; prom: number; stream: number; mqtt: number }, streamAdvertised: number): string[] {
  return [
    `listeners.tcp.default = ${inner.amqp}`,
    `management.tcp.port = ${inner.mgmt}`,
    `prometheus.tcp.port = ${inner.prom}`,
    // Stream clients connect to the host and port the broker advertises: this runner's view of it.
    ...(plugins.includes('rabbitmq_stream') ? [`stream.listeners.tcp.default = ${inner.stream}`, 'stream.advertised_host = 127.0.0.1', `stream.advertised_port = ${streamAdvertised}`] : []),
    ...(plugins.includes('rabbitmq_mqtt') ? [`mqtt.listeners.tcp.default = ${inner.mqtt}`] : []),
  ];
}

/** Long outputs keep their head (where CLIs say what is wrong) and tail (where scripts do). */
function excerpt(output: string, keep = 6): string {
  const lines = output.split('\n').filter((l) => l.trim() !== '');
  return (lines.length <= keep * 2 ? lines : [...lines.slice(0, keep), '…', ...lines.slice(-keep)]).join('\n');
}

/** A boot failure with the container's log from its first error on (or its last lines), and the
 *  broker's own one-line reason when it printed one. */
async function bootError(what: string, node: Node, fix: string): Promise<BrokerBootError> {
  const all = await cli.containerLogs(node.name, 400);
  const first = all.findIndex((l) => /\[error\]|BOOT FAILED/.test(l));
  const logs = first >= 0 && first < all.length - 40 ? all.slice(first, first + 40) : all.slice(-40);
  const reason = [/Syntax error/i, /Error (parsing|preparing)/i, /Error during startup/i].map((re) => all.find((l) => re.test(l))).find(Boolean);
  const why = reason
    ? `: ${reason
        .replace(/^\S+ \S+ \[\w+\] <[\d.]+> /, '')
        .replace(/^\s*-\s*/, '')
        .trim()}`
    : '';
  return new BrokerBootError(`${what}${why}`, logs, fix);
}
const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 30) || 'broker';

/** A node may refuse the default user for a moment while it boots (seen on a 3-node cluster under
 *  load: its listener answered before the user was there); refused this long, the credentials are wrong. */
const AUTH_REFUSED_MS = 10_000;

/** Polls until the node accepts AMQP and its management API answers; fails fast if it exits. */
async function waitReady(node: Node, amqpUrl: string, mgmt: ManagementClient, timeoutMs: number, image: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'not started';
  let refusedSince: number | undefined;
  for (;;) {
    const state = await cli.containerState(node.name);
    if (!state?.running) {
      throw await bootError(
        `container ${node.name} (${image}) exited with code ${state?.exitCode ?? '?'} while RabbitMQ was booting`,
        node,
        'see the container log; a config file with a syntax error is the usual cause',
      );
    }
    try {
      await checkAmqp(amqpUrl, 'image', 5_000);
      await mgmt.request('GET', '/api/overview', undefined, 5_000);
      return;
    } catch (err) {
      last = (err as Error).message;
      // Another process's broker may answer on this port while ours is still failing to boot
      // (ports are checked free, not reserved, across processes), and a booting node may refuse
      // the user for a moment: only a refusal that lasts, from a container still running, is ours.
      if (/wrong user name or password|401/.test(last)) {
        refusedSince ??= Date.now();
        if (Date.now() - refusedSince >= AUTH_REFUSED_MS) {
          throw await bootError(
            `RabbitMQ in container ${node.name} (${image}) rejected the target's credentials`,
            node,
            'set RABBITMQ_DEFAULT_USER/RABBITMQ_DEFAULT_PASS in env; a definitions.json loaded at boot must itself define that user with permissions',
          );
        }
      } else refusedSince = undefined;
    }
    if (Date.now() > deadline) {
      throw await bootError(
        `RabbitMQ in container ${node.name} (${image}) was not ready within ${Math.round(timeoutMs / 1000)} s (last check: ${last})`,
        node,
        'see the container log, or raise the readiness timeout on a slow runner',
      );
    }
    await sleep(500);
  }
}

/** Node `name`'s runtime output (NODE_RUNTIME_EXPR), read with its own CLI call. */
async function evalRuntime(name: string): Promise<string> {
  const r = await cli.exec(name, ['rabbitmqctl', 'eval', NODE_RUNTIME_EXPR], 30_000);
  if (r.code !== 0) throw new Error(`rabbitmqctl eval exited with code ${r.code}`);
  return r.output;
}

async function rabbitmqctl(node: Node, args: string[]): Promise<void> {
  const r = await cli.exec(node.name, ['rabbitmqctl', ...args]);
  if (r.code !== 0) {
    throw new BrokerBootError(`rabbitmqctl ${args.join(' ')} on ${node.name} failed with exit code ${r.code}`, r.output.split('\n').slice(-40), 'see the command output');
  }
}

async function joinCluster(nodes: Node[]): Promise<void> {
  const first = nodes[0].nodeName!;
  const others = nodes.slice(1);
  // stop_app takes seconds on 3.x, so stop and start the joiners together; join one at a time.
  await Promise.all(others.map((n) => rabbitmqctl(n, ['stop_app'])));
  for (const n of others) await rabbitmqctl(n, ['join_cluster', first]);
  await Promise.all(others.map((n) => rabbitmqctl(n, ['start_app'])));
  const r = await cli.exec(nodes[0].name, ['rabbitmqctl', 'cluster_status', '--formatter', 'json']);
  let running: string[] = [];
  try {
    running = JSON.parse(r.output.slice(r.output.indexOf('{'))).running_nodes ?? [];
  } catch {
    // reported below with the command's output
  }
  if (running.length !== nodes.length) {
    throw new BrokerBootError(`the cluster formed with ${running.length} of ${nodes.length} nodes running`, r.output.split('\n').slice(-40), 'see the cluster status output');
  }
}

async function runSetup(node: Node, lines: string[]): Promise<void> {
  for (const line of lines) {
    const r = await cli.exec(node.name, ['sh', '-c', line], 300_000);
    if (r.code !== 0) {
      throw new GateError(`setup command \`${line}\` failed with exit code ${r.code}: ${excerpt(r.output)}`, { field: 'setup' }, 'fix the command; it runs with `docker exec` in the first node');
    }
  }
}

/** Switches microstate accounting on in every node (outside any window; a CLI call each). With
 *  `runtime`, node 1's call also prints its runtime (NODE_RUNTIME_EXPR): each rabbitmqctl call
 *  boots an Erlang VM (1.5–2 s of a core here), so the boot reads it without a second one. */
async function msaccOn(names: string[], runtime = false): Promise<{ on: boolean; runtime?: string }> {
  const expr = (i: number) => (runtime && i === 0 ? `${MSACC_ON_CALL}, ${NODE_RUNTIME_EXPR}` : MSACC_ON_EXPR);
  const rs = await Promise.all(names.map((n, i) => cli.exec(n, ['rabbitmqctl', 'eval', expr(i)], 30_000))).catch(() => undefined);
  return { on: !!rs?.every((r) => r.code === 0), ...(runtime && rs?.[0]?.code === 0 ? { runtime: rs[0].output } : {}) };
}

/** A container's cgroup accounting files, from its main process as the host sees it. */
async function containerCgroup(name: string): Promise<CgroupFiles | undefined> {
  const pid = (await cli.docker(['inspect', '--format', '{{.State.Pid}}', name])).stdout.trim();
  return cgroupFiles(await readFile(`/proc/${pid}/cgroup`, 'utf8'));
}

/** The evidence a started target offers: its nodes' Prometheus endpoints (the plugin is always
 *  enabled here), microstate accounting switched on, and the containers' cgroup accounting; and
 *  node 1's runtime output, read by the same CLI call (msaccOn). */
async function dockerEvidence(names: string[], promUrls: string[]): Promise<{ capture: EvidenceCapture; runtime?: string }> {
  const [msacc, cgroups] = await Promise.all([
    msaccOn(names, true),
    Promise.all(names.map(containerCgroup)).then(
      (l) => (l.every(Boolean) ? (l as CgroupFiles[]) : undefined),
      () => undefined,
    ),
  ]);
  const missing: EvidenceCapture['missing'] = [];
  if (!msacc.on) missing.push({ source: 'msacc', why: '`rabbitmqctl eval` could not switch microstate accounting on' });
  if (!cgroups) missing.push({ source: 'cgroup', why: "the containers' cgroup accounting is not readable from this runner (/proc/<pid>/cgroup, /sys/fs/cgroup)" });
  return { capture: evidenceCapture({ prometheusUrls: promUrls, cgroups, msacc: msacc.on, missing }), runtime: msacc.runtime };
}

/** What the image declares for its broker: its ENV, the plugins of its enabled_plugins and the
 *  Erlang flags of its rabbitmq-env.conf (both where the image's or target's env says they are),
 *  and the files it ships in /etc/rabbitmq; copied out of a container created from it (never
 *  started, removed at once). */
async function readImageConfig(
  ref: string,
  probe: string,
  runId: string,
  imageEnv: Record<string, string>,
  targetEnv: Record<string, string>,
): Promise<{ decl: ImageDeclarations; config: ImageConfig }> {
  const pluginsFile = inEffect('RABBITMQ_ENABLED_PLUGINS_FILE', imageEnv, targetEnv) ?? DEFAULT_PLUGINS_FILE;
  const confEnvFile = inEffect('RABBITMQ_CONF_ENV_FILE', imageEnv, targetEnv) ?? DEFAULT_CONF_ENV_FILE;
  const etc = '/etc/rabbitmq/';
  registerContainer(probe, runId);
  let shipped: Map<string, Buffer>;
  try {
    shipped = await cli.imageFiles(ref, probe, ['/etc/rabbitmq', ...[pluginsFile, confEnvFile].filter((f) => !f.startsWith(etc))], labelArgs(runId));
  } finally {
    await removeRegistered([probe]);
  }
  const plugins = shipped.get(pluginsFile);
  const conf = shipped.get(confEnvFile);
  const parsed = conf ? parseEnvConf(conf.toString('utf8')) : undefined;
  return {
    decl: { env: imageEnv, ...(parsed ? { envConf: parsed.values, envConfUnevaluated: parsed.unevaluated } : {}) },
    config: {
      ...(plugins ? { plugins: parsePlugins({ path: `${pluginsFile} in image ${ref}`, content: plugins }) } : {}),
      files: [...shipped.keys()]
        .filter((k) => k.startsWith(etc))
        .map((k) => k.slice(etc.length))
        .sort(),
    },
  };
}

/** A started docker target; `containers` and `prometheusUrls` are per node, node 1 first. */
export interface DockerBrokerHandle extends BrokerHandle {
  containers: string[];
  prometheusUrls: string[];
}

export async function startDocker(spec: DockerTargetSpec, opts: DockerProviderOptions = {}): Promise<DockerBrokerHandle> {
  const runId = opts.runId ?? defaultRunId();
  const log = opts.log ?? (() => undefined);
  const warn = opts.warn ?? log;
  const bridge = spec.network === 'bridge';
  const count = spec.nodes ?? 1;
  if (!Number.isInteger(count) || count < 1) throw new GateError(`nodes must be a positive integer, got ${count}`, { field: 'nodes' });
  if (bridge && count > 1) {
    throw new GateError('a cluster needs host networking', { field: 'network' }, 'use network: host with nodes > 1');
  }
  const files = await readConfigFiles(spec.configFiles ?? []);
  layoutConfig(files, opts.plugins); // the target's own files are checked before Docker is asked anything
  await cli.assertDockerAvailable();
  await cli.ensureImage(spec.image);
  const [imageIdentity, imageEnv] = await Promise.all([cli.imageIdentity(spec.image), cli.imageEnv(spec.image)]);
  const tag = `${slug(spec.id)}-${randomBytes(3).toString('hex')}`;
  const targetEnv = spec.env ?? {};
  const image = await readImageConfig(spec.image, `rabbitmq-perf-gate-${tag}-image`, runId, imageEnv, targetEnv);
  const layout = layoutConfig(files, opts.plugins, image.config);
  const cookie = randomBytes(20).toString('hex');
  const envOf = (n?: { nodeName?: string; distPort: number }) =>
    composeEnv(image.decl, targetEnv, {
      cookie,
      profile: opts.profile,
      ...(n?.nodeName ? { node: { name: n.nodeName, epmdPort, distPort: n.distPort } } : {}),
    });
  envOf(); // an image whose rabbitmq-env.conf would override the cookie is refused before any port is taken
  const ports = await allocatePorts(count * PORTS_PER_NODE + 1);
  const epmdPort = ports[count * PORTS_PER_NODE];
  const nodes: Node[] = Array.from({ length: count }, (_, i) => {
    const [amqpPort, mgmtPort, promPort, distPort, streamPort, mqttPort] = ports.slice(i * PORTS_PER_NODE, (i + 1) * PORTS_PER_NODE);
    return { name: `rabbitmq-perf-gate-${tag}-${i + 1}`, nodeName: bridge ? undefined : `${tag}-${i + 1}@localhost`, amqpPort, mgmtPort, promPort, distPort, streamPort, mqttPort };
  });
  const names = nodes.map((n) => n.name);
  const first = envOf(nodes[0]);
  const user = first.effective.RABBITMQ_DEFAULT_USER ?? 'guest';
  const pass = first.effective.RABBITMQ_DEFAULT_PASS ?? 'guest';
  const declared: Declared = { env: first.declared, plugins: layout.pluginSources, files: layout.fileSources };
  const stage = await mkdtemp(join(tmpdir(), 'rabbitmq-perf-gate-'));
  const urls = (n: Node) => ({
    amqp: `amqp://${encodeURIComponent(user)}:${encodeURIComponent(pass)}@127.0.0.1:${n.amqpPort}`,
    mgmt: `http://${encodeURIComponent(user)}:${encodeURIComponent(pass)}@127.0.0.1:${n.mgmtPort}`,
  });
  try {
    log(`starting ${count} container(s) from ${spec.image} for ${spec.label}`);
    for (const line of describeDeclared(declared)) log(`${spec.label}: ${line}`);
    for (const w of first.warnings) warn(`${spec.label}: ${w}`);
    const created = await Promise.allSettled(
      nodes.map(async (n) => {
        const dir = join(stage, n.name);
        await mkdir(join(dir, 'conf.d'), { recursive: true, mode: 0o755 });
        for (const [dest, content] of layout.files) await writeFile(join(dir, dest), content, { mode: 0o644 });
        const inner = bridge ? { amqp: 5672, mgmt: 15672, prom: 15692, stream: 5552, mqtt: 1883 } : { amqp: n.amqpPort, mgmt: n.mgmtPort, prom: n.promPort, stream: n.streamPort, mqtt: n.mqttPort };
        await writeFile(
          join(dir, 'conf.d', '90-rabbitmq-perf-gate.conf'),
          ["## Written by rabbitmq-perf-gate: this node's ports.", ...listenerLines(layout.plugins, inner, n.streamPort), ...layout.confLines, ''].join('\n'),
          { mode: 0o644 },
        );
        const nodeEnv = envOf(n).pass;
        registerContainer(n.name, runId);
        await cli.docker([
          'create',
          '--name',
          n.name,
          ...labelArgs(runId),
          '--label',
          `rabbitmq-perf-gate.target=${spec.id}`,
          ...(bridge
            ? [
                '--hostname',
                n.name,
                '-p',
                `127.0.0.1:${n.amqpPort}:5672`,
                '-p',
                `127.0.0.1:${n.mgmtPort}:15672`,
                '-p',
                `127.0.0.1:${n.promPort}:15692`,
                '-p',
                `127.0.0.1:${n.streamPort}:5552`,
                '-p',
                `127.0.0.1:${n.mqttPort}:1883`,
              ]
            : ['--network', 'host']),
          ...(spec.cpus ? ['--cpus', String(spec.cpus)] : []),
          ...(spec.cpuset ? ['--cpuset-cpus', spec.cpuset] : []),
          ...(spec.memory ? ['--memory', spec.memory] : []),
          ...Object.entries(nodeEnv).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
          spec.image,
        ]);
        await cli.docker(['cp', `${dir}/.`, `${n.name}:/etc/rabbitmq/`]);
        await cli.docker(['start', n.name]);
      }),
    );
    const failed = created.find((c) => c.status === 'rejected');
    if (failed) throw failed.reason;
    const t0 = Date.now();
    await Promise.all(nodes.map((n) => waitReady(n, urls(n).amqp, new ManagementClient(urls(n).mgmt), opts.readyTimeoutMs ?? 120_000, spec.image)));
    log(`${spec.label}: ${count} node(s) ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    if (count > 1) await joinCluster(nodes);
    await runSetup(nodes[0], spec.setup ?? []);
    const { amqp: amqpUrl, mgmt: managementUrl } = urls(nodes[0]);
    const mgmt = new ManagementClient(managementUrl);
    const promUrls = nodes.map((n) => `http://127.0.0.1:${n.promPort}/metrics`);
    const [id, endpoints, started] = await Promise.all([
      mgmt.identity(),
      protocolListeners(mgmt, amqpUrl, layout.plugins, opts.readyTimeoutMs ?? 120_000),
      spec.evidence === false
        ? { capture: evidenceCapture({ prometheusUrls: [], msacc: false, missing: [{ source: 'all', why: 'evidence: false in the target file' }] }), runtime: undefined }
        : dockerEvidence(names, promUrls),
    ]);
    const evidence = started.capture;
    // Node 1's runtime as the boot read it (one CLI call less); a later read asks the node again.
    let bootRuntime = started.runtime;
    let stopped = false;
    let frozen = false;
    // A cluster's nodes share one epmd (host networking), living in whichever container started it
    // first: restarting that container would cut the others off, so only single nodes restart
    // their container; any node restarts its RabbitMQ application (the VM stays up).
    // A restarted container starts with microstate accounting off: switched on again before trials go on.
    const nodeReady = () => waitReady(nodes[0], amqpUrl, mgmt, opts.readyTimeoutMs ?? 120_000, spec.image);
    const restartNode = {
      app: () => restartApp(nodes[0].name, nodeReady),
      ...(count === 1
        ? {
            container: async () => {
              const timed = await restartContainer(nodes[0].name, nodeReady);
              if (evidence.sources.includes('msacc')) await msaccOn(names); // after the timing
              return timed;
            },
          }
        : {}),
    };
    return {
      containers: names,
      prometheusUrls: promUrls,
      amqpUrl,
      ...(evidence.sources.length ? { evidence } : {}),
      managementUrl,
      info: {
        id: spec.id,
        label: spec.label,
        kind: 'docker',
        amqpUrl: maskUrl(amqpUrl),
        managementUrl: mgmt.publicUrl,
        image: spec.image,
        ...(imageIdentity ? { imageId: imageIdentity.id, repoDigests: imageIdentity.repoDigests } : {}),
        configDigest: configDigest(spec.image, files),
        rabbitmqVersion: id.rabbitmqVersion,
        erlangVersion: id.erlangVersion,
        metadataStore: id.metadataStore,
        nodes: id.nodes,
        endpoints: bridgedEndpoints(endpoints, bridge, nodes[0]),
        evidence: { sources: evidence.sources, missing: evidence.missing },
        declared,
      },
      restartNode,
      ...(opts.profile ? { profile: () => profileContainer(names[0]) } : {}),
      nodeRuntime: async () => {
        const output = bootRuntime ?? (await evalRuntime(names[0]));
        bootRuntime = undefined;
        return parseNodeRuntime(output, nodes[0].nodeName ?? names[0]);
      },
      setFrozen: async (on: boolean) => {
        if (stopped || on === frozen) return;
        await cli.setPaused(names, on);
        frozen = on;
      },
      stop: async () => {
        if (stopped) return;
        stopped = true;
        await removeRegistered(names);
        releasePorts(ports);
      },
    };
  } catch (err) {
    await removeRegistered(names).catch(() => undefined);
    releasePorts(ports);
    throw err;
  } finally {
    await rm(stage, { recursive: true, force: true });
  }
}
