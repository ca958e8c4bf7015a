// The CLI as users install it: `npm pack` of this repository (what a release publishes), the
// tarball installed offline into an empty folder, and its `rabbitmq-perf-gate` binary run from
// there with Node 24 first on PATH (the bin's shebang runs `node`): --version, list, and a
// one-trial run against the local broker. The tarball holds dist/, scenarios/, schema/ and the
// package's documents, nothing else; the installed CLI reads its scenarios and schemas from the
// installed package, not from this checkout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../support/action-runner';
import { AMQP_URL, MANAGEMENT_URL } from '../support/broker';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const tmp = mkdtempSync(join(tmpdir(), 'perf-gate-pack-'));
const app = join(tmp, 'empty-folder');
/** A folder holding only `node` (Node 24), first on PATH; the machine's Node may be older. */
const nodeDir = join(tmp, 'node24');
const env = () => ({ PATH: `${nodeDir}:${process.env.PATH ?? ''}`, HOME: process.env.HOME ?? tmp, NO_COLOR: '1' });
let tarball = '';
let files: string[] = [];

function cli(args: string[]) {
  const r = spawnSync(join(app, 'node_modules/.bin/rabbitmq-perf-gate'), args, { cwd: app, env: env(), encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  mkdirSync(nodeDir);
  symlinkSync(realpathSync(join(ROOT, 'node_modules/.bin/node')), join(nodeDir, 'node'));
  const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, npm_config_loglevel: 'error' } }));
  tarball = join(tmp, packed[0].filename);
  files = packed[0].files.map((f: { path: string }) => f.path).sort();
  mkdirSync(app);
  // Offline: every dependency is in the npm cache since `npm ci` ran (where the cache was cleaned
  // since, the registry fills the gaps).
  const install = (mode: string) =>
    spawnSync('npm', ['install', mode, '--no-audit', '--no-fund', tarball], { cwd: app, encoding: 'utf8', env: { ...process.env, npm_config_loglevel: 'error' }, timeout: 180_000 });
  const r = install('--offline').status === 0 ? { status: 0, stderr: '' } : install('--prefer-offline');
  expect(r.status, r.stderr).toBe(0);
}, 240_000);
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

describe('the packed CLI', () => {
  it('ships dist/, scenarios/, schema/ and the package documents, nothing else', () => {
    expect(tarball).toMatch(new RegExp(`rabbitmq-perf-gate-${pkg.version.replace(/\./g, '\\.')}\\.tgz$`));
    for (const f of [
      'package.json',
      'README.md',
      'LICENSE',
      'CHANGELOG.md',
      'dist/cli.js',
      'dist/index.js',
      'dist/post.js',
      'scenarios/presets.yml',
      'scenarios/one_fast.yml',
      'schema/scenario.schema.json',
      'schema/presets.schema.json',
      'schema/target.schema.json',
    ]) {
      expect(files).toContain(f);
    }
    const outside = files.filter((f) => !/^(dist|scenarios|schema)\//.test(f) && !['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md'].includes(f));
    expect(outside).toEqual([]);
    // Whatever the bundle reads at run time through packagePath() is in the tarball.
    const read = [
      ...new Set([...execFileSync('grep', ['-rhoE', 'packagePath[0-9]*\\(["\'`][^"\'`$]+', join(ROOT, 'dist')], { encoding: 'utf8' }).matchAll(/packagePath\d*\(["'`]([^"'`$\n]+)/g)].map((m) => m[1])),
    ];
    expect(read.length).toBeGreaterThan(0);
    for (const rel of read)
      expect(
        files.some((f) => f === rel || f.startsWith(rel)),
        rel,
      ).toBe(true);
  });

  it('is installed as a command that runs on Node 24: --version and list', () => {
    expect(realpathSync(join(app, 'node_modules/.bin/rabbitmq-perf-gate'))).toBe(join(realpathSync(app), 'node_modules/rabbitmq-perf-gate/dist/cli.js'));
    const v = cli(['--version']);
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout).toBe(`${pkg.version}\n`);
    const list = cli(['list']);
    expect(list.code, list.stderr).toBe(0);
    for (const preset of ['smoke', 'pr', 'strict', 'standard']) expect(list.stdout).toContain(preset);
    expect(list.stdout).toContain('one_fast');
    const json = JSON.parse(cli(['list', '--json']).stdout);
    expect(JSON.stringify(json)).toContain('queue_churn_durable');
  });

  it('runs one trial against the local broker from the empty folder', () => {
    const out = join(app, 'out');
    const r = cli(['run', '--scenarios', 'one_fast', '--repetitions', '1', '--duration', '1', '--warmup', '1', '--broker-url', AMQP_URL, '--management-url', MANAGEMENT_URL, '--out', out, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.tool).toEqual({ name: 'rabbitmq-perf-gate', version: pkg.version });
    expect(report.trials).toHaveLength(1);
    expect(report.trials[0]).toMatchObject({ scenario: 'one_fast', valid: true });
    expect(report.trials[0].metrics.consumed_rate).toBeGreaterThan(0);
    expect(report.targets[0].rabbitmqVersion).toMatch(/^\d+\.\d+\.\d+/);
    expect(report.fingerprint.node).toMatch(/^v24\./);
    // The scenario came from the installed package, not from this checkout.
    const file = report.scenarios[0].file as string;
    expect(file.startsWith(join(realpathSync(app), 'node_modules/rabbitmq-perf-gate/scenarios/')) || file.startsWith(join(app, 'node_modules/rabbitmq-perf-gate/scenarios/')), file).toBe(true);
    expect(JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')).trials).toHaveLength(1);
  }, 120_000);
});
