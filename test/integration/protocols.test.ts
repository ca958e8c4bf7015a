// Streams, MQTT and AMQP 1.0 on real containers (the offline 3.10.8 and 4.0.5 images, host
// networking): the `protocols` preset's scenario files at smoke scale (0.3 s warm-up, 1 s window;
// the consume-only ones 0.1 + 0.5 s on a backlog of 120,000 AMQP 1.0 / 600,000 stream messages,
// still twice what a reader takes in that time here) through the whole pipeline on each version —
// plugins enabled and listeners on their own ports, read back from the broker; every scenario a
// version can run valid with its metrics, its queues read back as the type declared, the idle MQTT
// connections counted by the broker; what a version lacks (AMQP 1.0 before 4.0, stream filtering
// and MQTT 5 before 3.13) skipped with a note that leaves the verdict alone. The memory per MQTT
// connection keeps the 3.12 post's direction (3.10.8 far above 4.0.5). A same-run A/B on a stream
// scenario fails a candidate whose streams roll a new segment file every 1,000 bytes (a policy its
// `setup:` sets, read back on the trial's stream): about −45 % published here. (A tenth of a core
// did that too, but a node at a tenth of a core took a minute to boot.)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeRunContainers } from '../../src/broker/cleanup';
import { resolveScenarios } from '../../src/config/catalogue';
import { runPipeline, type Ui } from '../../src/pipeline/run';
import type { DockerTargetSpec, RunReport } from '../../src/schema/types';
import { scenarioCopies } from '../support/scenario-copies';
import { expectValidUnlessDisturbed } from '../support/trials';

const ROOT = resolve(import.meta.dirname, '../..');
const RUN = `protocols-${process.pid}-${Date.now().toString(36)}`;
const target = (version: string, extra: Partial<DockerTargetSpec> = {}): DockerTargetSpec => ({
  id: `v${version.replace(/\./g, '')}`,
  label: `RabbitMQ ${version}`,
  kind: 'docker',
  image: `rabbitmq-perf-gate/rabbitmq:${version}`,
  configFiles: [],
  nodes: 1,
  env: {},
  setup: [],
  network: 'host',
  evidence: false,
  ...extra,
});
const ui = () => {
  const warnings: string[] = [];
  const u: Ui = { info: () => undefined, warn: (m) => warnings.push(m), group: (_n, fn) => fn(), trialDone: () => undefined };
  return { u, warnings };
};
const PRESET = resolveScenarios('protocols').scenarios;
const PROTOCOL_IDS = PRESET.map((s) => s.id);
/** The preset's files at smoke scale. Filling a consume-only scenario's backlog is most of its
 *  trial (300,000 confirmed AMQP 1.0 messages took 80 s on a busy 2-core machine), so those read
 *  for 0.6 s from a smaller one. */
const SMOKE = { warmup: 0.3, duration: 1 };
const CONSUME_ONLY: Record<string, Record<string, unknown>> = {
  amqp10_consume_only: { warmup: 0.1, duration: 0.5, 'protocol.backlog': 120_000 },
  stream_consume_only: { warmup: 0.1, duration: 0.5, 'protocol.backlog': 600_000 },
};
const SCENARIOS = scenarioCopies(
  mkdtempSync(join(tmpdir(), 'perf-gate-protocols-')),
  Object.fromEntries([...new Set(PRESET.map((s) => s.file.replace(/^.*\/|\.yml$/g, '')))].map((f) => [f, CONSUME_ONLY[f] ?? SMOKE])),
);
/** What 3.10.8 cannot run: native AMQP 1.0 (4.0+), stream filtering and MQTT 5 (3.13+). */
const NOT_ON_310 = ['amqp10_consume_only', 'amqp10_one_fast', 'amqp10_one_one_one', 'amqp10_publish_only', 'mqtt5_pubsub', 'protocols_one_fast[protocol=amqp-1.0]', 'stream_filtering'];

beforeAll(() => {
  for (const v of ['3.10.8', '4.0.5']) {
    try {
      execFileSync('docker', ['image', 'inspect', `rabbitmq-perf-gate/rabbitmq:${v}`], { stdio: 'ignore' });
    } catch {
      execFileSync(join(ROOT, 'scripts/build-images.sh'), [v], { stdio: 'inherit', timeout: 900_000 });
    }
  }
}, 1_800_000);

afterAll(async () => {
  rmSync(SCENARIOS, { recursive: true, force: true });
  await removeRunContainers(RUN);
  expect(execFileSync('docker', ['ps', '-a', '-q', '--filter', `label=rabbitmq-perf-gate.run=${RUN}`], { encoding: 'utf8' }).trim()).toBe('');
}, 60_000);

const reports: Record<string, RunReport> = {};

describe.each(['4.0.5', '3.10.8'])('the protocols preset on RabbitMQ %s', (version) => {
  it('runs every scenario the version has, reads back what it ran, and skips the rest with a note', async () => {
    const { u, warnings } = ui();
    const report = await runPipeline({ scenarios: SCENARIOS, candidate: target(version), repetitions: 1, mode: 'run', runId: RUN }, u);
    reports[version] = report;
    const info = report.targets[0];
    expect(info.rabbitmqVersion).toBe(version);
    // The plugins the scenarios need were enabled, each listener on its own port.
    expect(info.effective?.plugins).toEqual(expect.arrayContaining(['rabbitmq_stream', 'rabbitmq_mqtt']));
    const ports = Object.values(info.endpoints ?? {}).map((e) => Number(e.split(':')[1]));
    expect(Object.keys(info.endpoints ?? {}).sort()).toEqual(['amqp-1.0', 'mqtt', 'stream']);
    expect(ports.every((p) => p >= 25_000 && p < 30_000)).toBe(true);

    const skipped = version === '3.10.8' ? NOT_ON_310 : [];
    expect(
      report.errors
        .filter((e) => e.scope !== 'run')
        .map((e) => e.scope)
        .sort(),
    ).toEqual([...skipped].sort());
    for (const e of report.errors) expect(e.message).toMatch(/^Skipped: this scenario needs (native AMQP 1.0|stream filtering|MQTT 5), from RabbitMQ (4\.0|3\.13) on/);
    if (skipped.length) expect(warnings.filter((w) => w.startsWith('Skipping'))).toHaveLength(3);
    expect(report.verdict).not.toBe('fail');

    const ran = PROTOCOL_IDS.filter((id) => !skipped.includes(id));
    expect(report.trials.map((t) => t.scenario).sort()).toEqual([...ran].sort());
    for (const t of report.trials) {
      expect(t.valid, `${t.scenario}: ${t.invalidReason}`).toBe(true);
      const spec = report.scenarios.find((s) => s.id === t.scenario)!;
      for (const m of spec.gate) expect(t.metrics[m], `${t.scenario} ${m}`).toBeGreaterThan(0);
      if (spec.kind === 'protocol') expect(t.generator?.client).toMatch(/^(rabbitmq-stream-js-client|mqtt|rhea) \d+\.\d+\.\d+$/);
    }
    // Read back from the broker: the stream scenarios' queues are streams, AMQP 1.0's a classic queue.
    const queueType = (id: string) => report.trials.find((t) => t.scenario === id)?.queues?.map((q) => q.type);
    expect(queueType('stream_one_fast[subEntry=100]')).toEqual(['stream']);
    expect(queueType('stream_consume_only')).toEqual(['stream']);
    if (version === '4.0.5') expect(queueType('amqp10_one_fast')).toEqual(['classic']);
    // The broker counted every idle MQTT connection, in the trial's vhost.
    expect(report.trials.find((t) => t.scenario === 'mqtt_idle_connections')?.metrics.idle_connections).toBe(2000);
    // A filtered stream consumer asked for one value of four: it gets a part of the stream.
    const filtering = report.trials.find((t) => t.scenario === 'stream_filtering');
    if (filtering) expect(filtering.metrics.consumed_rate).toBeLessThan(filtering.metrics.published_rate);
  }, 600_000);
});

describe('memory per idle MQTT connection', () => {
  it('keeps the 3.12 native-MQTT direction: 3.10.8 carries several times what 4.0.5 does', () => {
    const kib = (v: string) => reports[v]?.trials.find((t) => t.scenario === 'mqtt_idle_connections')?.metrics.memory_per_connection_kib ?? Number.NaN;
    // Measured here: about 190 KiB on 3.10.8 and 9–14 KiB on 4.0.5 (the post: 94 % less on 3.12).
    expect(kib('3.10.8')).toBeGreaterThan(4 * kib('4.0.5'));
    expect(kib('4.0.5')).toBeGreaterThan(0);
  });
});

describe('a same-run A/B on a stream scenario', () => {
  it('fails a candidate whose streams roll a segment every 1,000 bytes against the same image as it ships', async () => {
    const { u } = ui();
    const policy = { 'stream-max-segment-size-bytes': 1000 };
    const report = await runPipeline(
      {
        scenarios: 'stream_one_fast[subEntry=1]',
        candidate: target('4.0.5', { id: 'slow', label: 'tiny segments', setup: [`rabbitmqctl set_policy --apply-to queues tiny-segments '.*' '${JSON.stringify(policy)}'`] }),
        reference: target('4.0.5', { id: 'full', label: 'as shipped' }),
        repetitions: 8, // a pair the machine disturbs is dropped whole; seven still reach p < 0.05
        freezeIdle: false, // about −45 %: the idle broker need not be paused around each trial to see it
        warmup: 0.3,
        duration: 1,
        mode: 'run',
        runId: RUN,
      },
      u,
    );
    // Read back from the broker (each target's first round records its queues as they ran): the
    // candidate's stream ran under the policy, the reference's under none.
    const firstQueue = (id: string) => report.trials.find((t) => t.target === id && t.trial === 0)?.queues?.[0];
    expect(firstQueue('slow')).toMatchObject({ type: 'stream', policy: 'tiny-segments', definition: policy });
    expect(firstQueue('full')?.type).toBe('stream');
    expect(firstQueue('full')?.policy).toBeUndefined();
    const c = report.comparisons.find((x) => x.gating && x.metric === 'published_rate')!;
    expect(c.paired).toBe(true);
    expect(c.nCandidate).toBe(expectValidUnlessDisturbed(report.trials, 16) / 2);
    const rates = (id: string) =>
      report.trials
        .filter((t) => t.target === id)
        .map((t) => Math.round(t.metrics.published_rate ?? 0))
        .join(' ');
    // Measured here: about 95–135k msg/s with tiny segments against 135–225k as shipped (−46 %
    // [−52, −37] over 8 pairs; −36 % at 4,096 bytes).
    expect(c.ciHigh!, `published msg/s tiny segments ${rates('slow')}, as shipped ${rates('full')}`).toBeLessThan(0.8);
    expect(c.verdict).toBe('fail');
    expect(report.verdict).toBe('fail');
  }, 300_000);
});
