// Node start time with N queues on a real container (the offline 3.10.8 image, host networking):
// the catalogue's restart scenarios at small scale through runTrial, restarting the node in place
// with its queues (and persistent messages) coming back; and on the local broker attached by URL,
// which must never be restarted, the pipeline skips them with one warning and a report note that
// leaves the verdict alone. Timings are only checked for "> 0 and below a generous bound".
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import amqp from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeRunContainers } from '../../src/broker/cleanup';
import { startDocker, type DockerBrokerHandle } from '../../src/broker/docker';
import { attachExisting } from '../../src/broker/existing';
import { ManagementClient } from '../../src/broker/management';
import { resolveScenarios } from '../../src/config/catalogue';
import { fingerprint } from '../../src/metrics/fingerprint';
import { runPipeline, type Ui } from '../../src/pipeline/run';
import { skipUnrunnable } from '../../src/pipeline/boot';
import type { Baseline, RunError, TrialResult, UrlTargetSpec } from '../../src/schema/types';
import { SCHEMA_VERSION } from '../../src/schema/types';
import { runTrial } from '../../src/workload/trial';
import { AMQP_URL, MANAGEMENT_URL } from '../support/broker';
import { ofKind } from '../support/kinds';

const ROOT = resolve(import.meta.dirname, '../..');
const IMAGE = 'rabbitmq-perf-gate/rabbitmq:3.10.8';
const RUN = `nodestart-${process.pid}-${Date.now().toString(36)}`;
/** × the files' own scale: 1000 classic → 100, 100 quorum → 10. */
const SMALL = { scale: 0.1 };
const URL_TARGET: UrlTargetSpec = { id: 'local', label: 'local broker', kind: 'url', amqpUrl: AMQP_URL, managementUrl: MANAGEMENT_URL };

let handle: DockerBrokerHandle;

const containerExists = (name: string) => execFileSync('docker', ['ps', '-a', '-q', '--filter', `name=^${name}$`], { encoding: 'utf8' }).trim() !== '';

beforeAll(async () => {
  try {
    execFileSync('docker', ['image', 'inspect', IMAGE], { stdio: 'ignore' });
  } catch {
    execFileSync(join(ROOT, 'scripts/build-images.sh'), ['3.10.8'], { stdio: 'inherit', timeout: 900_000 });
  }
  // No broker evidence (nothing here reads it): no microstate accounting switched on at the boot and again after each restart, a CLI call each.
  handle = await startDocker({ id: 'node', label: 'node 3.10.8', kind: 'docker', image: IMAGE, configFiles: [], nodes: 1, env: {}, setup: [], network: 'host', evidence: false }, { runId: RUN });
}, 300_000);

afterAll(async () => {
  const name = handle?.containers[0];
  await handle?.stop();
  await removeRunContainers(RUN);
  if (name) expect(containerExists(name)).toBe(false);
}, 60_000);

describe('node start with N queues on a docker target', () => {
  it('restarts the node twice with its classic queues, then once with quorum queues and their messages', async () => {
    expect(handle.restartNode?.container).toBeTypeOf('function');
    expect(handle.restartNode?.app).toBeTypeOf('function');
    const classic = ofKind(resolveScenarios('node_start_classic_queues', undefined, SMALL).scenarios[0], 'restart');
    const quorum = ofKind(resolveScenarios('node_start_quorum_queues', undefined, SMALL).scenarios[0], 'restart');
    expect([classic.restart.queues, quorum.restart.queues]).toEqual([100, 10]);
    const withMessages = { ...quorum, restart: { ...quorum.restart, messagesPerQueue: 20 } };
    const results: TrialResult[] = [];
    const plan = [classic, classic, withMessages].map((scenario, i) => ({ scenario, target: 'node', trial: i, order: i }));
    for (const p of plan) {
      const r = await runTrial(p, handle, RUN);
      console.log(`${p.scenario.id} trial ${p.trial + 1}: ${JSON.stringify(r.metrics)}${r.valid ? '' : ` invalid: ${r.invalidReason}`}`);
      results.push(r);
    }
    for (const [i, r] of results.entries()) {
      expect(r.valid, r.invalidReason).toBe(true);
      expect(r.metrics.node_start_seconds).toBeGreaterThan(0);
      expect(r.metrics.node_start_seconds).toBeLessThan(150);
      expect(r.metrics.node_stop_seconds).toBeGreaterThan(0);
      expect(r.metrics.node_stop_seconds).toBeLessThan(60); // the grace period: never killed
      expect(r.metrics.recovered_queues).toBe(plan[i].scenario.restart.queues);
    }
    // Each trial's vhost, with its queues, is gone; the node serves clients on the same URLs.
    const mgmt = new ManagementClient(handle.managementUrl);
    expect((await mgmt.listVhosts()).filter((v) => v.startsWith(`perf-gate-${RUN}-`))).toEqual([]);
    const conn = await amqp.connect(handle.amqpUrl);
    await conn.close();
  }, 240_000);

  it('skips restart scenarios on both A/B targets when only one of them can restart', async () => {
    const url = await attachExisting(URL_TARGET);
    expect(url.restartNode).toBeUndefined();
    const scenarios = resolveScenarios('one_fast,node_start_classic_queues').scenarios;
    const errors: RunError[] = [];
    const warnings: string[] = [];
    const kept = skipUnrunnable(scenarios, [handle, url], errors, { warn: (m) => warnings.push(m) });
    expect(kept.map((s) => s.id)).toEqual(['one_fast']);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/Skipping node_start_classic_queues on both targets, to keep the A\/B paired: .*single-node docker target.*local broker \(an existing broker, attached by URL\)/);
    expect(errors).toEqual([{ scope: 'node_start_classic_queues', message: expect.stringMatching(/^Skipped on both targets.*docker target/) }]);
    // A target that can restart keeps them.
    expect(
      skipUnrunnable(scenarios, [handle], [], {
        warn: () => {
          throw new Error('no warning expected');
        },
      }),
    ).toEqual(scenarios);
  });
});

describe('restart scenarios on a broker attached by URL', () => {
  const ui = () => {
    const warnings: string[] = [];
    const u: Ui = { info: () => undefined, warn: (m) => warnings.push(m), group: (_n, fn) => fn(), trialDone: () => undefined };
    return { u, warnings };
  };

  it('are skipped with one warning and a report note, never run and never failed', async () => {
    const { u, warnings } = ui();
    const report = await runPipeline({ scenarios: 'node_start_classic_queues,node_start_quorum_queues', candidate: URL_TARGET, repetitions: 2, mode: 'run', runId: RUN }, u);
    expect(warnings).toEqual([
      expect.stringMatching(/^Skipping node_start_classic_queues, node_start_quorum_queues: each restarts the broker node's container, which needs a single-node docker target/),
    ]);
    expect(report.trials).toEqual([]);
    expect(report.scenarios).toEqual([]);
    expect(report.errors.map((e) => e.scope)).toEqual(['node_start_classic_queues', 'node_start_quorum_queues']);
    expect(report.errors[0].message).toMatch(/local broker \(an existing broker, attached by URL\) cannot be restarted/);
    expect(report.verdict).toBe('pass'); // a skip is not a run-level error

    // Checked against a stored baseline that has node start values: no comparison, so no verdict from it.
    const info = (await attachExisting(URL_TARGET)).info;
    const stored: Baseline = {
      schemaVersion: SCHEMA_VERSION,
      createdAt: new Date().toISOString(),
      fingerprint: fingerprint(),
      target: info,
      repetitions: 3,
      scenarios: { node_start_classic_queues: { metrics: { node_start_seconds: [5, 5.1, 5.2], recovered_queues: [1000, 1000, 1000] } } },
      history: [],
    };
    const checked = await runPipeline({ scenarios: 'node_start_classic_queues', candidate: URL_TARGET, repetitions: 3, mode: 'check', stored, runId: RUN }, ui().u);
    expect(checked.comparisons).toEqual([]);
    expect(checked.verdict).not.toBe('fail');
    expect(checked.errors).toHaveLength(1);
  }, 60_000);
});
