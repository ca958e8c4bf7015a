// What a target declares for its vhost reaches every trial vhost (src/broker/vhost-config.ts):
// policies, operator policies, vhost limits and topic permissions of the broker URL's vhost are
// read back from the broker *inside the trial vhosts while the trials run*, through the bundled
// CLI against the local RabbitMQ service; and a docker target whose `setup:` sets a policy, or
// whose definitions.json declares one, shows it reaching the trials.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ManagementClient } from '../../src/broker/management';
import { AMQP_URL, MANAGEMENT_URL } from '../support/broker';
import { expectValidUnlessDisturbed } from '../support/trials';

const ROOT = resolve(__dirname, '../..');
const CLI = join(ROOT, 'dist/cli.js');
const mgmt = new ManagementClient(MANAGEMENT_URL);
const SOURCE = `perf-gate-vc-src-${process.pid}`;
const S = encodeURIComponent(SOURCE);

function cli(args: string[], env: Record<string, string> = {}, cwd = mkdtempSync(join(tmpdir(), 'perf-gate-vc-'))): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env: { PATH: process.env.PATH ?? '', HOME: cwd, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

interface Seen {
  queues: any[];
  details: any[];
  operatorPolicies: any[];
  limits: any[];
  topics: any[];
}
/** Polls the broker for what the run's trial vhosts hold while `work` runs. */
async function watch<T>(runId: string, work: Promise<T>): Promise<{ result: T; seen: Seen }> {
  const seen: Seen = { queues: [], details: [], operatorPolicies: [], limits: [], topics: [] };
  let done = false;
  const poll = (async () => {
    while (!done) {
      const ours = (x: { vhost?: string }) => x.vhost?.startsWith(`perf-gate-${runId}-`);
      // The listing without stats carries the applied policy at once; the queue's own page carries
      // its effective definition and version once the broker has emitted its stats.
      const [q, o, l, t] = await Promise.all([
        mgmt.request<any[]>('GET', '/api/queues?disable_stats=true').catch(() => []),
        mgmt.request<any[]>('GET', '/api/operator-policies').catch(() => []),
        mgmt.request<any[]>('GET', '/api/vhost-limits').catch(() => []),
        mgmt.request<any[]>('GET', '/api/topic-permissions').catch(() => []),
      ]);
      seen.queues.push(...q.filter(ours));
      seen.operatorPolicies.push(...o.filter(ours));
      for (const x of q.filter(ours)) {
        const d = await mgmt.request<any>('GET', `/api/queues/${encodeURIComponent(x.vhost)}/${encodeURIComponent(x.name)}`).catch(() => undefined);
        if (d?.backing_queue_status) seen.details.push(d);
      }
      seen.limits.push(...l.filter(ours));
      seen.topics.push(...t.filter(ours));
      await new Promise((r) => setTimeout(r, 300));
    }
  })();
  const result = await work;
  done = true;
  await poll;
  return { result, seen };
}

beforeAll(async () => {
  await mgmt.createVhost(SOURCE, 'guest');
  await mgmt.request('PUT', `/api/policies/${S}/cqv2`, { pattern: '.*', definition: { 'queue-version': 2 }, 'apply-to': 'queues', priority: 0 });
  await mgmt.request('PUT', `/api/operator-policies/${S}/cap`, { pattern: '.*', definition: { 'max-length': 1000000 }, 'apply-to': 'queues', priority: 0 });
  await mgmt.request('PUT', `/api/vhost-limits/${S}/max-queues`, { value: 500 });
  await mgmt.request('PUT', `/api/topic-permissions/${S}/guest`, { exchange: 'amq.topic', write: '^perf', read: '.*' });
});
afterAll(async () => {
  await mgmt.deleteVhost(SOURCE).catch(() => undefined);
});

describe("a target vhost's configuration reaches the trial vhosts", () => {
  it('policies, operator policies, limits and topic permissions are in effect in every trial vhost', async () => {
    const runId = `vc${process.pid}`;
    const url = `${AMQP_URL}/${S}`;
    const { result: r, seen } = await watch(
      runId,
      cli(['run', '--scenarios', 'one_fast', '--broker-url', url, '--management-url', MANAGEMENT_URL, '--repetitions', '2', '--duration', '6', '--warmup', '1', '--baseline-file', 'none.json'], {
        RABBITMQ_PERF_GATE_RUN_ID: runId,
      }),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`trial vhosts inherit from vhost ${SOURCE}: policies cqv2; operator policies cap; limits max-queues=500; topic permissions of guest`);
    const vhosts = new Set(seen.queues.map((q) => q.vhost));
    expect(vhosts.size).toBe(2); // both trials were seen, each in its own vhost
    for (const q of seen.queues) expect(q.policy, `${q.vhost}/${q.name}`).toBe('cqv2');
    expect(seen.details.length, 'no queue stats were emitted during the trials').toBeGreaterThan(0);
    for (const d of seen.details) {
      expect(d.effective_policy_definition).toMatchObject({ 'queue-version': 2 });
      expect(d.backing_queue_status.version).toBe(2); // the queue really runs as classic queue v2
    }
    expect(new Set(seen.operatorPolicies.map((p) => p.vhost)).size).toBe(2);
    for (const p of seen.operatorPolicies) expect(p).toMatchObject({ name: 'cap', pattern: '.*', definition: { 'max-length': 1000000 } });
    expect(seen.limits.length).toBeGreaterThan(0);
    for (const l of seen.limits) expect(l.value).toEqual({ 'max-queues': 500 });
    expect(seen.topics.length).toBeGreaterThan(0);
    for (const t of seen.topics) expect(t).toMatchObject({ user: 'guest', exchange: 'amq.topic', write: '^perf', read: '.*' });
  }, 180_000);

  it('a vhost that declares nothing: the trials get nothing and the log says nothing', async () => {
    const runId = `vcplain${process.pid}`;
    const { result: r, seen } = await watch(
      runId,
      cli(
        ['run', '--scenarios', 'one_fast', '--repetitions', '1', '--duration', '1', '--warmup', '0.5', '--baseline-file', 'none.json', '--broker-url', AMQP_URL, '--management-url', MANAGEMENT_URL],
        { RABBITMQ_PERF_GATE_RUN_ID: runId },
      ),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('trial vhosts inherit');
    expect(seen.queues.length).toBeGreaterThan(0);
    for (const q of seen.queues) expect(q.policy ?? '').toBe('');
    expect(seen.operatorPolicies).toEqual([]);
  }, 180_000);
});

describe('docker targets: a policy from setup: or from definitions.json reaches the trials', () => {
  const dir = mkdtempSync(join(tmpdir(), 'perf-gate-vc-targets-'));
  writeFileSync(join(dir, 'setup.yml'), ['image: rabbitmq-perf-gate/rabbitmq:3.10.8', 'setup:', `  - rabbitmqctl set_policy cqv2 ".*" '{"queue-version":2}' --apply-to queues`, ''].join('\n'));
  writeFileSync(
    join(dir, 'definitions.json'),
    JSON.stringify({
      vhosts: [{ name: '/' }],
      users: [{ name: 'guest', password: 'guest', tags: 'administrator' }],
      permissions: [{ user: 'guest', vhost: '/', configure: '.*', write: '.*', read: '.*' }],
      policies: [{ vhost: '/', name: 'cqv2-defs', pattern: '.*', 'apply-to': 'queues', definition: { 'queue-version': 2 }, priority: 0 }],
    }),
  );
  writeFileSync(join(dir, 'defs.yml'), ['image: rabbitmq-perf-gate/rabbitmq:3.10.8', 'config:', '  - definitions.json', ''].join('\n'));

  // Both files in one same-run A/B: two brokers booted side by side, each trial vhost checked on its own target.
  it('setup.yml and defs.yml: the trial vhosts of each inherit its policy (cqv2, cqv2-defs)', async () => {
    const r = await cli(
      [
        'run',
        '--scenarios',
        'one_fast',
        '--target',
        'setup.yml',
        '--baseline-target',
        'defs.yml',
        '--repetitions',
        '1',
        '--duration',
        '1',
        '--warmup',
        '0.5',
        '--baseline-file',
        'none.json',
        '--json',
        '--out',
        'out-targets',
      ],
      {},
      dir,
    );
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expectValidUnlessDisturbed(report.trials, report.trials.length);
    const summary = readFileSync(join(dir, 'out-targets', 'summary.md'), 'utf8');
    for (const [id, policy] of [
      ['candidate', 'cqv2'],
      ['baseline', 'cqv2-defs'],
    ]) {
      expect(r.stderr).toMatch(new RegExp(`trial vhosts inherit from vhost /: policies ${policy}(;|$)`, 'm'));
      // Read back from the broker after the window: the trial's queue ran as a v2 classic queue
      // under that policy, and every report format says so.
      expect(report.trials.find((t: any) => t.target === id).queues).toEqual([expect.objectContaining({ type: 'classic', version: 2, policy, definition: { 'queue-version': 2 } })]);
      expect(report.targets.find((t: any) => t.id === id).effective.vhost).toEqual([expect.stringMatching(new RegExp(`^policy ${policy}: pattern \\.\\*, apply-to queues`))]);
      expect(summary).toContain(`queues of one\\_fast: 1 × classic v2, policy ${policy}, \\{"queue-version":2\\}`);
    }
    expect(r.stderr).not.toMatch(/is in effect on no queue/);
  }, 240_000);

  it('a policy whose pattern matches no queue of the scenarios: one warning naming it', async () => {
    writeFileSync(
      join(dir, 'nomatch.yml'),
      ['image: rabbitmq-perf-gate/rabbitmq:3.10.8', 'setup:', `  - rabbitmqctl set_policy nomatch "^nothing-here$" '{"max-length":10}' --apply-to queues`, ''].join('\n'),
    );
    const r = await cli(['run', '--scenarios', 'one_fast', '--target', 'nomatch.yml', '--repetitions', '2', '--duration', '1', '--warmup', '0.5', '--baseline-file', 'none.json', '--json'], {}, dir);
    expect(r.code, r.stderr).toBe(0);
    const warnings = r.stderr.split('\n').filter((l) => l.includes('is in effect on no queue'));
    expect(warnings).toEqual([expect.stringMatching(/^warning: [^:]+:[^:]+: policy nomatch \(pattern \^nothing-here\$\) is in effect on no queue of this run's scenarios/)]);
    expect(JSON.parse(r.stdout).errors).toEqual([expect.objectContaining({ scope: expect.stringMatching(/: configuration$/), message: expect.stringMatching(/^policy nomatch/) })]);
  }, 240_000);

  it('two targets that differ only by a comment in rabbitmq.conf: identical in effect, and the report says so', async () => {
    writeFileSync(join(dir, 'a.conf'), 'vm_memory_high_watermark.relative = 0.5\n');
    writeFileSync(join(dir, 'b.conf'), '# tuned for the runner\nvm_memory_high_watermark.relative = 0.5\n');
    writeFileSync(join(dir, 'a.yml'), 'image: rabbitmq-perf-gate/rabbitmq:3.10.8\nconfig:\n  - a.conf\n');
    writeFileSync(join(dir, 'b.yml'), 'image: rabbitmq-perf-gate/rabbitmq:3.10.8\nconfig:\n  - b.conf\n');
    const r = await cli(
      [
        'run',
        '--scenarios',
        'one_fast',
        '--target',
        'b.yml',
        '--baseline-target',
        'a.yml',
        '--repetitions',
        '1',
        '--duration',
        '1',
        '--warmup',
        '0.5',
        '--baseline-file',
        'none.json',
        '--json',
        '--out',
        'out-ab',
      ],
      {},
      dir,
    );
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.targets[0].configDigest).not.toBe(report.targets[1].configDigest);
    expect(report.targets[0].effective.digest).toBe(report.targets[1].effective.digest);
    expect(report.targets[0].effective.node.vm_memory_high_watermark).toBe('0.5');
    expect(report.effectNote).toMatch(/ are identical in effect: nothing the broker runs changed — their files differ/);
    expect(report.effectDiff).toBeUndefined();
    expect(readFileSync(join(dir, 'out-ab', 'summary.md'), 'utf8')).toMatch(/^> .* are identical in effect: nothing the broker runs changed/m);
  }, 300_000);
});
