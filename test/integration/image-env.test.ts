// The image is a declaration too (issue 33), on real containers: an image committed from the
// offline 3.10.8 image with `ENV RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="+S 2:1"` keeps its flag —
// read back from the running node as one scheduler online, and an A/B against the plain image
// (bundled CLI) lists the flag and the scheduler count among the differences in effect; a target
// file that sets the same variable wins, and the report says so; what a target declares but the
// broker does not have in effect (a plugin not installed, a flag a later one overrides) is a
// warning in the log and the report; a 3-node cluster from the image still joins, its nodes and
// rabbitmqctl sharing the gate's cookie next to the image's flags. One committed image for all
// cases, removed in afterAll with every container.
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeRunContainers } from '../../src/broker/cleanup';
import { startDocker } from '../../src/broker/docker';
import { readReport } from '../../src/compare/stored';
import type { RunReport } from '../../src/schema/types';

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = join(ROOT, 'dist/cli.js');
const PLAIN = 'rabbitmq-perf-gate/rabbitmq:3.10.8';
const IMAGE = `rabbitmq-perf-gate/image-env-test:${process.pid}`;
const RUN_ID = `image-env-test-${process.pid}-${Date.now().toString(36)}`;
const tmp = mkdtempSync(join(tmpdir(), 'perf-gate-image-env-'));
// No test here looks at a trial (what they check is read back from the brokers, or in the log and the
// report's files), so the runs' trials have no warm-up and the A/B one round.
const SHORT = ['--scenarios', 'one_fast', '--duration', '1', '--warmup', '0', '--seed', '7', '--baseline-file', join(tmp, 'none.json')];

const docker = (...args: string[]) => execFileSync('docker', args, { encoding: 'utf8' }).trim();
const dockerAsync = async (...args: string[]) => (await promisify(execFile)('docker', args, { encoding: 'utf8' })).stdout.trim();
const containersOf = (runId: string) => docker('ps', '-a', '-q', '--filter', `label=rabbitmq-perf-gate.run=${runId}`).split('\n').filter(Boolean);

function cli(args: string[], out: string) {
  const r = spawnSync(process.execPath, [CLI, 'run', ...SHORT, '--out', join(tmp, out), ...args], {
    cwd: tmp,
    encoding: 'utf8',
    timeout: 400_000,
    env: { PATH: process.env.PATH ?? '', HOME: tmp, RABBITMQ_PERF_GATE_RUN_ID: RUN_ID },
  });
  // Read as mode: comment and merge read a report they did not write: checked against its shape.
  const report: RunReport = readReport(join(tmp, out, 'report.json'));
  // The Markdown summary with its escapes undone, to look for the lines the report renders.
  const summary = readFileSync(join(tmp, out, 'summary.md'), 'utf8').replace(/\\(.)/g, '$1');
  return { code: r.status, stderr: r.stderr, report, summary };
}

beforeAll(() => {
  expect(existsSync(CLI), 'run `npm run bundle` first').toBe(true);
  docker('image', 'inspect', PLAIN); // the offline image: scripts/build-images.sh 3.10.8
  const c = docker('create', '--label', `rabbitmq-perf-gate.run=${RUN_ID}`, PLAIN);
  try {
    docker('commit', '--change', 'ENV RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="+S 2:1"', c, IMAGE);
  } finally {
    docker('rm', '-f', c);
  }
  expect(docker('image', 'inspect', '--format', '{{json .Config.Env}}', IMAGE)).toContain('"RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=+S 2:1"');
});

afterAll(async () => {
  await removeRunContainers(RUN_ID).catch(() => undefined);
  spawnSync('docker', ['rmi', IMAGE], { stdio: 'ignore' });
  rmSync(tmp, { recursive: true, force: true });
});

describe("an image's own Erlang flags (ENV) stay in effect", () => {
  it('reads back one scheduler online; an A/B against the plain image lists the flag and the scheduler count among the differences', () => {
    const { code, stderr, report, summary } = cli(['--image', IMAGE, '--broker-label', 's21', '--baseline-image', PLAIN, '--repetitions', '1'], 'ab');
    expect(code, stderr).not.toBe(2);
    const [s21, plain] = ['s21', PLAIN].map((l) => report.targets.find((t) => t.label === l)!);
    expect(s21.effective?.vm?.info['schedulers online']).toBe('1 of 2');
    expect(s21.effective?.vm?.flags['+S']).toBe('2:1');
    expect(s21.effective?.vm?.emulatorFlags).toContain('+S 2:1');
    const online = plain.effective?.vm?.info['schedulers online'];
    expect(online).toMatch(/^(\d+) of \1$/);
    expect(plain.effective?.vm?.flags['+S']).toBeUndefined();
    // Where the value came from: the image's ENV, then the gate's cookie.
    const server = s21.declared?.env.find((e) => e.name === 'RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS');
    expect(server?.parts).toEqual([
      { value: '+S 2:1', from: 'image', where: 'ENV' },
      { value: '-setcookie ***', from: 'gate' },
    ]);
    expect(stderr).toContain('s21: RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS = +S 2:1 (image ENV) -setcookie *** (the gate)');
    expect(report.effectDiff).toEqual(expect.arrayContaining([`Erlang VM schedulers online: s21 1 of 2 · ${PLAIN} ${online}`, `emulator flag +S: s21 2:1 · ${PLAIN} (unset)`]));
    expect(report.effectNote).toMatch(/^s21 and rabbitmq-perf-gate\/rabbitmq:3\.10\.8 differ in effect/);
    expect(summary).toContain('emulator flag +S: s21 2:1 · rabbitmq-perf-gate/rabbitmq:3.10.8 (unset)');
    expect(summary).toContain('started with: RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS = +S 2:1 (image ENV) -setcookie *** (the gate)');
    expect(report.errors.filter((e) => /configuration/.test(e.scope))).toEqual([]);
    expect(JSON.stringify(report)).not.toMatch(/-setcookie [0-9a-f]{20,}/);
    expect(containersOf(RUN_ID)).toEqual([]); // the nodes and the container the image's files were read from
  }, 420_000);

  it("a target file's value for the same variable wins, and the report says so; a declaration not in effect is a warning", () => {
    writeFileSync(join(tmp, 'enabled_plugins'), '[rabbitmq_shovel,rabbitmq_no_such_plugin].\n');
    writeFileSync(
      join(tmp, 'target.yml'),
      [
        'label: own-flags',
        `image: ${IMAGE}`,
        'config:',
        '  - enabled_plugins',
        'env:',
        '  RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: "+S 1:1 +sbwt short"',
        '  RABBITMQ_SERVER_START_ARGS: "+sbwt very_short"', // comes later on the command line: overrides +sbwt short
        '',
      ].join('\n'),
    );
    const { code, stderr, report, summary } = cli(['--target', 'target.yml', '--repetitions', '1'], 'target');
    expect(code, stderr).not.toBe(2);
    const [t] = report.targets;
    expect(t.effective?.vm?.info['schedulers online']).toBe('1 of 1');
    expect(t.effective?.vm?.flags).toMatchObject({ '+S': '1:1', '+sbwt': 'very_short' });
    const server = t.declared?.env.find((e) => e.name === 'RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS');
    expect(server).toEqual({
      name: 'RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS',
      parts: [
        { value: '+S 1:1 +sbwt short', from: 'target' },
        { value: '-setcookie ***', from: 'gate' },
      ],
      replaced: [{ value: '+S 2:1', from: 'image', where: 'ENV' }],
    });
    const line = 'RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS = +S 1:1 +sbwt short (target file) -setcookie *** (the gate); replaces +S 2:1 (image ENV)';
    expect(stderr).toContain(`own-flags: ${line}`);
    expect(summary).toContain(`started with: ${line}`);
    // Declared, read back, not in effect: each a warning in the log and the report.
    expect(t.effective?.activePlugins).toContain('rabbitmq_shovel');
    const warnings = report.errors.filter((e) => e.scope === 'own-flags: configuration').map((e) => e.message);
    expect(warnings).toEqual([
      'declared but not in effect: plugin rabbitmq_no_such_plugin (target file): in enabled_plugins, but not running in the broker; is it installed in the image (rabbitmq-plugins list)?',
      'declared but not in effect: emulator flag +sbwt short (target file): the node runs +sbwt very_short',
    ]);
    for (const w of warnings) expect(stderr).toContain(w);
    expect(containersOf(RUN_ID)).toEqual([]);
  }, 420_000);

  it("a 3-node cluster from the image joins: every node runs the image's +S 2:1 and answers rabbitmqctl with the gate's cookie", async () => {
    const h = await startDocker(
      // No broker evidence: nothing here reads it, and its boot would switch microstate accounting on in each node (a CLI call each).
      { id: 'cluster', label: 'cluster', kind: 'docker', image: IMAGE, configFiles: [], nodes: 3, env: {}, setup: [], network: 'host', evidence: false },
      { runId: RUN_ID, readyTimeoutMs: 180_000 },
    );
    try {
      expect(h.info.nodes).toHaveLength(3); // startDocker checked cluster_status: 3 of 3 running
      // Each node's rabbitmqctl call and node 1's runtime read at once (each boots an Erlang VM for seconds).
      const expr = 'io:format("~p ~p~n", [erlang:system_info(schedulers_online), length(nodes())]).';
      const [outs, rt] = await Promise.all([Promise.all(h.containers.map((name) => dockerAsync('exec', name, 'rabbitmqctl', 'eval', expr))), h.nodeRuntime!()]);
      for (const out of outs) expect(out.split('\n')[0]).toBe('1 2'); // one scheduler online, two other nodes connected
      expect(outs).toHaveLength(3);
      expect(rt.vm?.flags['+S']).toBe('2:1');
    } finally {
      await h.stop();
    }
  }, 300_000);
});
