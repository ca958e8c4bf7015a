// The docker provider against the real engine and the real offline images (built here with
// scripts/build-images.sh when missing): versions, config files and limits (on the 4.0.5 node of
// the side-by-side pair, one boot for both tests), messaging, freezing the idle target, boot
// failures, clustering, setup commands, a cluster's node 1 restarting its application, and container cleanup when the process ends, is SIGTERM'd or is SIGKILL'd.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import amqp from 'amqplib';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GateError } from '../../src/schema/errors';
import { removeRunContainers } from '../../src/broker/cleanup';
import { ManagementClient } from '../../src/broker/management';
import { focusOn } from '../../src/broker/focus';
import { BrokerBootError, configDigest, startDocker, type DockerBrokerHandle } from '../../src/broker/docker';
import type { DockerTargetSpec } from '../../src/schema/types';
import { resolveScenarios } from '../../src/config/catalogue';
import { runTrial } from '../../src/workload/trial';
import { ofKind } from '../support/kinds';

const ROOT = resolve(import.meta.dirname, '../..');
const IMAGE = { v3: 'rabbitmq-perf-gate/rabbitmq:3.10.8', v4: 'rabbitmq-perf-gate/rabbitmq:4.0.5' };
const RUN = `test-${process.pid}-${Date.now().toString(36)}`;
const usedRuns = [RUN];
const runOf = (suffix: string) => {
  usedRuns.push(`${RUN}-${suffix}`);
  return `${RUN}-${suffix}`;
};
const tmp = mkdtempSync(join(tmpdir(), 'rpg-docker-test-'));

function spec(over: Partial<DockerTargetSpec> = {}): DockerTargetSpec {
  return { id: 'b', label: 'broker', kind: 'docker', image: IMAGE.v4, configFiles: [], nodes: 1, env: {}, setup: [], network: 'host', ...over };
}

/** The containers of a run (`label`: only those with that label too, e.g. a target's nodes; `running`: only running ones). */
function containersOf(runId: string, label?: string, running = false): string[] {
  const filters = [`label=rabbitmq-perf-gate.run=${runId}`, ...(label ? [`label=${label}`] : []), ...(running ? ['status=running'] : [])];
  return execFileSync('docker', ['ps', '-a', '-q', ...filters.flatMap((f) => ['--filter', f])], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
}

const paused = (name: string) => execFileSync('docker', ['inspect', '--format', '{{.State.Paused}}', name], { encoding: 'utf8' }).trim() === 'true';

async function roundTrip(url: string): Promise<string> {
  const conn = await amqp.connect(url);
  try {
    const ch = await conn.createChannel();
    const q = (await ch.assertQueue('', { exclusive: true })).queue;
    ch.sendToQueue(q, Buffer.from('hello'));
    for (let i = 0; i < 50; i++) {
      const msg = await ch.get(q, { noAck: true });
      if (msg) return msg.content.toString();
      await new Promise((r) => setTimeout(r, 100));
    }
    return 'nothing';
  } finally {
    await conn.close();
  }
}

async function expectGateError(p: Promise<unknown>, re: RegExp): Promise<GateError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GateError);
  expect((err as GateError).message).toMatch(re);
  return err as GateError;
}

const run = { runId: RUN, readyTimeoutMs: 120_000 };

beforeAll(() => {
  for (const [version, ref] of [
    ['3.10.8', IMAGE.v3],
    ['4.0.5', IMAGE.v4],
  ]) {
    try {
      execFileSync('docker', ['image', 'inspect', ref], { stdio: 'ignore' });
    } catch {
      try {
        execFileSync(join(ROOT, 'scripts/build-images.sh'), [version], { stdio: 'inherit', timeout: 900_000 });
      } catch (err) {
        throw new Error(`image ${ref} is missing and scripts/build-images.sh ${version} failed: ${(err as Error).message}`);
      }
    }
  }
}, 1_800_000);

afterAll(async () => {
  rmSync(tmp, { recursive: true, force: true });
  for (const runId of usedRuns) {
    await removeRunContainers(runId);
    expect(containersOf(runId)).toEqual([]);
  }
});

describe('docker provider', () => {
  // One pair of brokers for two tests: 3.10.8 as shipped, and 4.0.5 with every kind of config file
  // and CPU/memory limits (a 4.0.5 node of their own for the config files was one boot more).
  describe('3.10.8 as shipped and 4.0.5 with config files and limits', () => {
    const f = (name: string, text: string) => {
      const p = join(tmp, 'conf', name); // apart from the broken rabbitmq.conf of the syntax-error test
      mkdirSync(join(tmp, 'conf'), { recursive: true });
      writeFileSync(p, text);
      return p;
    };
    let files: string[];
    let conf: DockerTargetSpec;
    let handles: DockerBrokerHandle[];

    beforeAll(async () => {
      files = [
        f('rabbitmq.conf', 'vm_memory_high_watermark.relative = 0.5\n'),
        f('tuning.conf', 'channel_max = 100\n'),
        f('advanced.config', '[{rabbit, [{handshake_timeout, 12345}]}].\n'),
        f(
          'definitions.json',
          JSON.stringify({
            users: [{ name: 'guest', password: 'guest', tags: 'administrator' }],
            permissions: [{ user: 'guest', vhost: '/', configure: '.*', write: '.*', read: '.*' }],
            vhosts: [{ name: '/' }],
            queues: [{ name: 'defq', vhost: '/', durable: true, auto_delete: false, arguments: {} }],
          }),
        ),
        f('enabled_plugins', '[rabbitmq_shovel].\n'),
      ];
      conf = spec({ id: 'new', image: IMAGE.v4, configFiles: files, cpus: 1, memory: '768m' });
      handles = await Promise.all([startDocker(spec({ id: 'old', image: IMAGE.v3 }), run), startDocker(conf, run)]);
    }, 300_000);

    afterAll(async () => {
      for (const h of handles ?? []) await h.stop(); // idempotent: the side-by-side test stops them itself
    });

    it('places every kind of config file, keeps management+prometheus enabled, applies limits', async () => {
      const h = handles[1];
      const c = h.containers[0];
      const ev = (expr: string) => execFileSync('docker', ['exec', c, 'rabbitmqctl', 'eval', expr], { encoding: 'utf8' }).trim();
      expect(ev('application:get_env(rabbit, channel_max).')).toBe('{ok,100}');
      expect(ev('application:get_env(rabbit, handshake_timeout).')).toBe('{ok,12345}');
      const plugins = execFileSync('docker', ['exec', c, 'rabbitmq-plugins', 'list', '-e', '-m'], { encoding: 'utf8' });
      for (const p of ['rabbitmq_management', 'rabbitmq_prometheus', 'rabbitmq_shovel']) expect(plugins).toContain(p);
      expect(await (await fetch(h.prometheusUrls[0])).text()).toContain('rabbitmq_');
      const queues = await new ManagementClient(h.managementUrl).queues('/');
      expect(queues.map((q) => q.name)).toContain('defq');
      const limits = execFileSync('docker', ['inspect', '-f', '{{.HostConfig.NanoCpus}} {{.HostConfig.Memory}}', c], { encoding: 'utf8' }).trim();
      expect(limits).toBe(`${1e9} ${768 * 1024 * 1024}`);
      expect(h.info.configDigest).toBe(
        configDigest(
          conf.image,
          files.map((p) => ({ path: p, content: readFileSync(p) })),
        ),
      );
      expect(h.info.configDigest).not.toBe(configDigest(conf.image, []));
    }, 300_000);

    it('runs 3.10.8 and 4.0.5 side by side with their real versions, passes a message through each, freezes the idle one', async () => {
      try {
        const [old, neu] = handles;
        expect(old.amqpUrl).not.toEqual(neu.amqpUrl);
        expect(old.info.rabbitmqVersion).toBe('3.10.8');
        expect(neu.info.rabbitmqVersion).toMatch(/^4\.0\./);
        for (const h of handles) {
          expect(h.info.erlangVersion).toMatch(/^\d+/);
          expect(h.info.configDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
          expect(h.info.amqpUrl).toContain('***');
          expect(h.info.nodes).toHaveLength(1);
          expect(await roundTrip(h.amqpUrl)).toBe('hello');
        }
        // One target at a time: the idle one is frozen (cgroup freezer), the measured one answers.
        const warnings: string[] = [];
        const focus = focusOn(handles, (m) => warnings.push(m));
        for (const [active, idle] of [
          [old, neu],
          [neu, old],
        ]) {
          await focus.on(active);
          expect(paused(idle.containers[0])).toBe(true);
          expect(paused(active.containers[0])).toBe(false);
          expect(await roundTrip(active.amqpUrl)).toBe('hello');
        }
        expect(focus.freezing).toBe(true);
        expect(warnings).toEqual([]);
      } finally {
        for (const h of handles) await h.stop(); // `old` is still frozen: removed all the same
      }
      for (const h of handles) {
        await h.stop(); // idempotent
        for (const c of h.containers) expect(execFileSync('docker', ['ps', '-a', '-q', '--filter', `name=^${c}$`], { encoding: 'utf8' })).toBe('');
      }
    }, 300_000);
  });

  it('reports a config syntax error with the container log and leaves no container', async () => {
    const conf = join(tmp, 'rabbitmq.conf');
    writeFileSync(conf, 'listeners.tcp.default = = 5672 ]]\nthis is not a setting\n');
    const runId = runOf('badconf');
    const err = await expectGateError(startDocker(spec({ image: IMAGE.v3, configFiles: [conf] }), { ...run, runId }), /exited with code/);
    expect(err).toBeInstanceOf(BrokerBootError);
    expect((err as BrokerBootError).logs.length).toBeGreaterThan(0);
    expect((err as BrokerBootError).logs.join('\n')).toMatch(/conf|syntax|parse|error/i);
    expect(containersOf(runId)).toEqual([]);
  }, 300_000);

  it('fails clearly on a missing image', async () => {
    // A loopback registry, so the pull attempt fails at once without leaving the machine.
    await expectGateError(startDocker(spec({ image: '127.0.0.1:1/rabbitmq-perf-gate/missing:0' }), run), /not found locally and could not be pulled/);
  }, 120_000);

  it('fails clearly when docker is absent or its daemon is unreachable', async () => {
    const saved = { PATH: process.env.PATH, DOCKER_HOST: process.env.DOCKER_HOST };
    try {
      process.env.PATH = '/nonexistent';
      await expectGateError(startDocker(spec(), run), /docker CLI was not found/);
      process.env.PATH = saved.PATH;
      process.env.DOCKER_HOST = 'tcp://127.0.0.1:1';
      await expectGateError(startDocker(spec(), run), /Docker daemon is not reachable/);
    } finally {
      process.env.PATH = saved.PATH;
      if (saved.DOCKER_HOST === undefined) delete process.env.DOCKER_HOST;
      else process.env.DOCKER_HOST = saved.DOCKER_HOST;
    }
  }, 120_000);

  it('forms a 3-node cluster and runs setup commands on node 1', async () => {
    const h = await startDocker(
      spec({
        id: 'cluster',
        nodes: 3,
        setup: [`rabbitmqctl set_policy --apply-to queues cap '^capped\\.' '{"max-length": 10}'`],
        evidence: false, // nothing here reads it: no microstate accounting switched on in each node (a CLI call each)
      }),
      run,
    );
    try {
      expect(h.containers).toHaveLength(3);
      const status = JSON.parse(execFileSync('docker', ['exec', h.containers[0], 'rabbitmqctl', 'cluster_status', '--formatter', 'json'], { encoding: 'utf8' }));
      expect(status.running_nodes).toHaveLength(3);
      expect(h.info.nodes).toHaveLength(3);
      const policies = execFileSync('docker', ['exec', h.containers[0], 'rabbitmqctl', 'list_policies', '--formatter', 'json'], { encoding: 'utf8' });
      expect(policies).toContain('capped');
      expect(await roundTrip(h.amqpUrl)).toBe('hello');

      // Node 1 restarts its RabbitMQ application (the Khepri roadmap's stop_app / start_app), never
      // its container, which holds the epmd the other nodes use.
      expect(h.restartNode?.container).toBeUndefined();
      const startedAt = () => execFileSync('docker', ['inspect', '--format', '{{.State.StartedAt}}', h.containers[0]], { encoding: 'utf8' }).trim();
      const before = startedAt();
      const scenario = ofKind(resolveScenarios('start_app_classic_queues', undefined, { scale: 0.1 }).scenarios[0], 'restart');
      const r = await runTrial({ scenario, target: 'cluster', trial: 0, order: 0 }, h, RUN);
      expect(r.valid, r.invalidReason).toBe(true);
      expect(r.metrics.recovered_queues).toBe(100);
      expect(r.metrics.node_stop_seconds).toBeGreaterThan(0);
      expect(r.metrics.node_start_seconds).toBeGreaterThan(0);
      expect(startedAt()).toBe(before);
      const after = JSON.parse(execFileSync('docker', ['exec', h.containers[1], 'rabbitmqctl', 'cluster_status', '--formatter', 'json'], { encoding: 'utf8' }));
      expect(after.running_nodes).toHaveLength(3);
      expect(await roundTrip(h.amqpUrl)).toBe('hello');
    } finally {
      await h.stop();
    }
  }, 300_000);

  it('names a failing setup command with its exit code and output, and removes the container', async () => {
    const runId = runOf('setup');
    const err = await expectGateError(
      startDocker(spec({ image: IMAGE.v3, setup: ['rabbitmqctl no_such_command'] }), { ...run, runId }),
      /setup command `rabbitmqctl no_such_command` failed with exit code \d+: .+/s,
    );
    expect(err.where.field).toBe('setup');
    expect(containersOf(runId)).toEqual([]);
  }, 300_000);
});

describe('cleanup when the process dies', () => {
  let child: string;

  beforeAll(async () => {
    child = join(tmp, 'child.cjs');
    await build({
      stdin: {
        resolveDir: ROOT,
        loader: 'ts',
        sourcefile: 'child.ts',
        contents: `import { startDocker } from './src/broker/docker';
          (async () => {
            await startDocker({ id: 'sig', label: 'sig', kind: 'docker', image: ${JSON.stringify(IMAGE.v4)}, configFiles: [],
              nodes: 1, env: {}, setup: [], network: 'host' }, { runId: process.env.RUN_ID });
            setInterval(() => undefined, 1000);
          })();`,
      },
      bundle: true,
      platform: 'node',
      format: 'cjs',
      outfile: child,
      logLevel: 'error',
    });
  }, 60_000);

  function startChild(runId: string) {
    const p = spawn(process.execPath, [child], { env: { ...process.env, RUN_ID: runId }, stdio: ['ignore', 'ignore', 'inherit'] });
    const exited = new Promise<{ code: number | null; signal: string | null }>((r) => p.on('exit', (code, signal) => r({ code, signal })));
    return { p, exited };
  }

  /** Waits until the run has a container (`label`: one with that label too; `running`: a running one); returns how many. */
  async function waitForContainer(runId: string, label?: string, running = false): Promise<number> {
    for (let i = 0; i < 600; i++) {
      // The count that ended the wait: the image probe's container is gone again a moment later.
      const n = containersOf(runId, label, running).length;
      if (n) return n;
      await new Promise((r) => setTimeout(r, 100));
    }
    return 0;
  }

  it('removes its containers on SIGTERM while the broker is booting, then exits 143', async () => {
    const runId = runOf('term');
    const c = startChild(runId);
    try {
      // The node's container (the target's label), not the short-lived one the image's files are read from.
      expect(await waitForContainer(runId, 'rabbitmq-perf-gate.target=sig')).toBe(1);
      c.p.kill('SIGTERM');
      expect(await c.exited).toEqual({ code: 143, signal: null });
      expect(containersOf(runId)).toEqual([]);
    } finally {
      c.p.kill('SIGKILL');
      await removeRunContainers(runId);
    }
  }, 120_000);

  it('SIGTERM as soon as the first container appears (the image probe): none is created after it, none is left, exit 143', async () => {
    const runId = runOf('probe');
    const c = startChild(runId);
    try {
      expect(await waitForContainer(runId)).toBeGreaterThan(0);
      c.p.kill('SIGTERM');
      expect(await c.exited).toEqual({ code: 143, signal: null });
      // A container whose create was in flight, or one the boot would have gone on to create, would show up now.
      await new Promise((r) => setTimeout(r, 3000));
      expect(containersOf(runId)).toEqual([]);
    } finally {
      c.p.kill('SIGKILL');
      await removeRunContainers(runId);
    }
  }, 120_000);

  it('leaves containers on SIGKILL for removeRunContainers(runId), the post-step net, to remove', async () => {
    const runId = runOf('kill');
    const c = startChild(runId);
    try {
      // Nothing runs in a SIGKILLed process, whatever it was doing: killed once its node's container
      // runs (RabbitMQ booting in it), not after the whole boot, and the probe's container is gone by then.
      expect(await waitForContainer(runId, 'rabbitmq-perf-gate.target=sig', true)).toBe(1);
      c.p.kill('SIGKILL');
      expect((await c.exited).signal).toBe('SIGKILL');
      expect(containersOf(runId)).toHaveLength(1);
      expect(await removeRunContainers(runId)).toHaveLength(1);
      expect(containersOf(runId)).toEqual([]);
    } finally {
      c.p.kill('SIGKILL');
      await removeRunContainers(runId);
    }
  }, 180_000);
});
