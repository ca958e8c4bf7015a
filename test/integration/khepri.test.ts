// Issue #10's Mnesia-vs-Khepri check through the bundled CLI (dist/cli.js) on real containers:
// two target files on the same offline 4.0.5 image, one opting into Khepri with a `setup:`
// command, A/B'd with the metadata preset's import scenarios — their files at a twentieth of
// their import scale (a few dozen queues and bindings): this test asserts the A/B's shape,
// not the stores' speed, which docs/seeds.md measures at full size. Both targets must report
// 4.0.5 and their metadata store; the import metrics' comparisons must carry n per side, the
// ratio and its CI against the Mnesia target, and the Markdown summary must show them; no
// container may be left. A missing target file is exit 2 and one error line naming the file and
// the option. It runs 4 pairs per scenario so that one pair the shared machine disturbs (dropped
// whole, test/support/trials.ts) still leaves the 3 a CI needs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { RunReport } from '../../src/schema/types';
import { removeRunContainers } from '../../src/broker/cleanup';
import { scenarioCopies, scenarioNumber } from '../support/scenario-copies';
import { expectValidUnlessDisturbed } from '../support/trials';

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = join(ROOT, 'dist/cli.js');
const IMAGE = 'rabbitmq-perf-gate/rabbitmq:4.0.5';
const SCENARIOS = ['import_classic_queues', 'import_queues_bindings'];
const METRICS = ['import_seconds', 'reimport_seconds'];
const REPS = 4;
const RUN_ID = `khepri-test-${process.pid}-${Date.now().toString(36)}`;
const tmp = mkdtempSync(join(tmpdir(), 'perf-gate-khepri-'));

function cli(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: tmp,
    encoding: 'utf8',
    timeout: 420_000,
    env: { PATH: process.env.PATH ?? '', HOME: tmp, ...env },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function containersOf(runId: string): string[] {
  return execFileSync('docker', ['ps', '-a', '-q', '--filter', `label=rabbitmq-perf-gate.run=${runId}`], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
}

let run: ReturnType<typeof cli>;
let report: RunReport;
let summary: string;
/** Valid pairs per scenario (each at least 3, so each comparison has a CI). */
const pairs: Record<string, number> = {};

beforeAll(() => {
  expect(existsSync(CLI), 'run `npm run bundle` first').toBe(true);
  execFileSync('docker', ['image', 'inspect', IMAGE], { stdio: 'ignore' }); // offline image: scripts/build-images.sh 4.0.5
  writeFileSync(join(tmp, 'mnesia.yml'), `label: mnesia\nimage: ${IMAGE}\n`);
  writeFileSync(join(tmp, 'khepri.yml'), `label: khepri\nimage: ${IMAGE}\nsetup:\n  - rabbitmqctl enable_feature_flag --opt-in khepri_db\n`);
  const smaller = scenarioCopies(join(tmp, 'scenarios'), Object.fromEntries(SCENARIOS.map((id) => [id, { scale: scenarioNumber(id, 'scale') / 20 }])));
  run = cli(
    ['run', '--scenarios', smaller, '--target', 'khepri.yml', '--baseline-target', 'mnesia.yml', '--repetitions', String(REPS), '--baseline-file', join(tmp, 'none.json'), '--out', join(tmp, 'out')],
    {
      RABBITMQ_PERF_GATE_RUN_ID: RUN_ID,
    },
  );
  report = JSON.parse(readFileSync(join(tmp, 'out/report.json'), 'utf8'));
  summary = readFileSync(join(tmp, 'out/summary.md'), 'utf8');
  for (const scenario of SCENARIOS) pairs[scenario] = report.trials.filter((t) => t.scenario === scenario && t.valid).length / 2;
}, 450_000);

afterAll(async () => {
  await removeRunContainers(RUN_ID).catch(() => undefined);
  rmSync(tmp, { recursive: true, force: true });
});

describe('Mnesia vs Khepri on 4.0.5 with the metadata import scenarios (CLI, target files)', () => {
  it('runs to completion: every trial valid (but a pair the machine disturbed), the Markdown summary on stdout', () => {
    expect([0, 1], run.stderr).toContain(run.code);
    expect(report.trials).toHaveLength(SCENARIOS.length * 2 * REPS);
    for (const scenario of SCENARIOS) {
      expect(
        expectValidUnlessDisturbed(
          report.trials.filter((t) => t.scenario === scenario),
          2 * REPS,
        ) / 2,
      ).toBe(pairs[scenario]);
      expect(pairs[scenario], scenario).toBeGreaterThanOrEqual(3);
    }
    expect(run.stdout).toBe(summary);
  });

  it('both targets report RabbitMQ 4.0.5, one on Mnesia and one on Khepri', () => {
    const byId = Object.fromEntries(report.targets.map((t) => [t.id, t]));
    expect(report.candidate).toBe('candidate');
    expect(byId.candidate).toMatchObject({ label: 'khepri', kind: 'docker', image: IMAGE, rabbitmqVersion: '4.0.5', metadataStore: 'khepri' });
    expect(byId.baseline).toMatchObject({ label: 'mnesia', kind: 'docker', image: IMAGE, rabbitmqVersion: '4.0.5', metadataStore: 'mnesia' });
    // Read back from the brokers: the effective configuration says so too, and names the flag.
    expect(byId.candidate.effective).toMatchObject({ metadataStore: 'khepri', rabbitmqVersion: '4.0.5' });
    expect(byId.candidate.effective?.featureFlags).toContain('khepri_db');
    expect(byId.baseline.effective?.featureFlags).not.toContain('khepri_db');
    expect(report.effectDiff).toEqual(expect.arrayContaining(['metadata store: khepri khepri · mnesia mnesia', 'feature flag khepri_db: khepri only']));
    expect(report.targetNote).toBe('khepri.yml against mnesia.yml');
    expect(report.targetDiff).toContain('+   - rabbitmqctl enable_feature_flag --opt-in khepri_db');
  });

  it('each import metric is compared with the Mnesia target: n per side, ratio inside its 95 % CI', () => {
    for (const scenario of SCENARIOS) {
      for (const metric of METRICS) {
        const c = report.comparisons.find((x) => x.scenario === scenario && x.metric === metric);
        expect(c, `${scenario}/${metric}`).toBeDefined();
        expect(c).toMatchObject({ against: 'baseline', baselineLabel: 'mnesia', candidateLabel: 'khepri', nBaseline: pairs[scenario], nCandidate: pairs[scenario], unit: 's', direction: 'lower' });
        expect(c!.ratio).toBeGreaterThan(0);
        expect(Number.isFinite(c!.ratio)).toBe(true);
        expect(c!.ciLow).not.toBeNull();
        expect(c!.ciHigh).not.toBeNull();
        expect(c!.ciLow!).toBeLessThanOrEqual(c!.ratio!);
        expect(c!.ratio!).toBeLessThanOrEqual(c!.ciHigh!);
        expect(c!.baselineMedian).toBeGreaterThan(0);
        expect(c!.candidateMedian).toBeGreaterThan(0);
      }
    }
    expect(report.decidedBy).toMatch(/same-run A\/B against mnesia/);
  });

  it('the Markdown summary shows each import delta with its CI, and both metadata stores', () => {
    for (const scenario of SCENARIOS) {
      const name = scenario.replace(/_/g, '\\_');
      for (const label of ['definitions import', 'definitions re-import']) {
        const row = summary.split('\n').find((l) => l.startsWith(`| ${name} vs mnesia | ${label} |`));
        expect(row, `${scenario} ${label}`).toBeDefined();
        // | scenario | metric | baseline | now | Δ [95 % CI] | n | verdict |
        expect(row).toMatch(/\| [\d.,]+ s \| [\d.,]+ s \| [+−-]?[\d.,]+ % \[[−-]?[\d.,]+, [−-]?[\d.,]+\] \| (\d+) pairs \|/);
        expect(Number(row!.match(/\| (\d+) pairs \|/)![1])).toBe(pairs[scenario]);
      }
    }
    expect(summary).toContain('**khepri**: RabbitMQ 4.0.5');
    expect(summary).toContain('metadata store khepri');
    expect(summary).toContain('metadata store mnesia');
  });

  it('removes every container it started', () => {
    expect(containersOf(RUN_ID)).toEqual([]);
  });

  it('a missing target file: exit 2, one error line naming the file and the option, nothing started', () => {
    for (const [option, other] of [
      ['--target', '--baseline-target'],
      ['--baseline-target', '--target'],
    ]) {
      const runId = `${RUN_ID}-missing`;
      const r = cli(['run', '--scenarios', 'import_classic_queues', option, 'no-such-target.yml', other, 'mnesia.yml'], { RABBITMQ_PERF_GATE_RUN_ID: runId });
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(new RegExp(`^error: no-such-target\\.yml: ${option}: target file not found`));
      expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
      expect(containersOf(runId)).toEqual([]);
    }
  });
});
