// A real bisect through the bundled CLI: eight local image tags made from the offline 3.10.8 image
// (test/support/bisect-images.ts), tag 5 onward carrying a broker-side regression someone could
// ship (an advanced.config with credit_flow_default_credit {2, 1}, read back from the brokers as
// the A/B's effect difference), tag 6 broken (its command exits at once). The search checks the
// ends first (tag 8 against tag 1: the step, which sizes the threshold later steps are judged at),
// is interrupted (SIGINT) after that step and resumed from its state file with the same command:
// it names tag 5 as the first bad image in at most ⌈log₂ 8⌉ + 1 = 4 verdicts (the ends check
// included), skips and names tag 6, and reports every step. One fast scenario (one_fast, 0.5+1 s trials, looks 8,12,
// a 25 % tolerance: the regression is −55 to −76 % here, an A/A stays inside 25 % on a busy
// machine). The images are removed afterwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { BisectReport, BisectState } from '../../src/schema/types';
import { buildImageSeries, type ImageSeries } from '../support/bisect-images';
import { expectValidUnlessDisturbed } from '../support/trials';

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = join(ROOT, 'dist/cli.js');
const tmp = mkdtempSync(join(tmpdir(), 'perf-gate-bisect-'));
const out = join(tmp, 'out');
const stateFile = join(out, 'bisect-state.json');
let series: ImageSeries;

beforeAll(() => {
  series = buildImageSeries({ repo: `rabbitmq-perf-gate/bisect-test-${process.pid}`, count: 8, regressFrom: 5, broken: [6], credit: [2, 1] });
  const scenario = readFileSync(join(ROOT, 'scenarios/one_fast.yml'), 'utf8').replace(/^tolerances:.*$/m, '');
  writeFileSync(join(tmp, 'one_fast.yml'), `${scenario.trimEnd()}\ntolerances: { consumed_rate: 0.25 }\n`);
});

afterAll(() => {
  series?.remove();
  rmSync(tmp, { recursive: true, force: true });
});

const args = () => [
  'bisect',
  '--images',
  series.images.join(','),
  '--scenarios',
  join(tmp, 'one_fast.yml'),
  '--duration',
  '1',
  '--warmup',
  '0.5',
  '--looks',
  '8,12',
  '--out',
  out,
  '--json',
  '--time-limit',
  '20',
];

/** Runs the CLI; `interrupt` sends SIGINT once the state file holds that many steps. */
function cli(interruptAfter?: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [CLI, ...args()], { cwd: tmp, env: { PATH: process.env.PATH ?? '', HOME: tmp } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const watch =
      interruptAfter === undefined
        ? undefined
        : setInterval(() => {
            try {
              const s = JSON.parse(readFileSync(stateFile, 'utf8')) as BisectState;
              if (s.steps.length >= interruptAfter) {
                clearInterval(watch);
                child.kill('SIGINT');
              }
            } catch {
              /* not written yet */
            }
          }, 500);
    child.on('close', (code) => {
      if (watch) clearInterval(watch);
      done({ code, stdout, stderr });
    });
  });
}

describe('bisect on real images', () => {
  it('interrupted after a step, resumed: names tag 5 in ≤ 4 verdicts, skips and names the broken tag 6, reports every step', async () => {
    const t0 = Date.now();
    const first = await cli(1);
    expect(first.code, first.stderr.slice(-3000)).toBe(130);
    const cut = JSON.parse(readFileSync(stateFile, 'utf8')) as BisectState;
    expect(cut.steps.length).toBeGreaterThanOrEqual(1);
    // The first step is the ends check: tag 8 against tag 1, a regression, which sizes the step.
    expect(cut.steps[0]).toMatchObject({ index: 7, image: series.images[7], ends: true, outcome: 'bad', verdict: 'fail' });
    // Ctrl-C removed the brokers it had started.
    for (const img of [series.images[7], series.images[3]]) {
      const left = spawnSync('docker', ['ps', '-aq', '--filter', `ancestor=${img}`], { encoding: 'utf8' }).stdout.trim();
      expect(left).toBe('');
    }

    const second = await cli();
    const wall = (Date.now() - t0) / 1000;
    expect(second.stderr).toMatch(/Resuming the bisect/);
    expect(second.code, second.stderr.slice(-3000)).toBe(0);
    const r = JSON.parse(second.stdout) as BisectReport;
    const steps = r.state.steps;
    const log = steps.map((x) => `${x.image.split(':')[1]} ${x.outcome} ${x.verdict ?? ''} ${x.ratio?.toFixed(3) ?? ''} ${x.pairs ?? ''} ${x.seconds}s`).join('; ');
    console.log(`bisect: ${log}; ${r.status.verdicts} verdicts, ${wall.toFixed(0)} s wall`);
    expect(r.status, log).toMatchObject({ state: 'found', culprit: 4 });
    // Later steps were judged at the midpoint of the step the ends showed: one_fast only.
    const cal = r.status.calibration!;
    expect(cal.steps.map((x) => [x.scenario, x.metric])).toEqual([['one_fast', 'consumed_rate']]);
    expect(cal.thresholds.one_fast.consumed_rate).toBeCloseTo(Math.sqrt(1 / cal.steps[0].ratio) - 1, 3);
    expect(first.stderr).toMatch(/The ends: one_fast consumed_rate −\d+\.\d % between the ends; later steps A\/B one_fast only/);
    expect(r.state.images[r.status.culprit!].image).toBe(series.images[4]);
    expect(r.status.verdicts, log).toBeLessThanOrEqual(4);
    // The broken tag was tried (it sits on the search path: ends, 4 good → 6 → 5) and named as skipped.
    const skipped = steps.filter((x) => x.outcome === 'skipped');
    expect(skipped.map((x) => x.image)).toEqual([series.images[5]]);
    expect(skipped[0].note).toMatch(/could not be pulled or started: .*exited with code/);
    expect(r.status.skipped).toEqual([5]);
    // Each decided step carries its verdict, ratio, CI, pairs and time; tag 5 fails against tag 1.
    const t5 = steps.find((x) => x.index === 4 && x.outcome === 'bad')!;
    expect(t5).toMatchObject({ verdict: 'fail', metric: 'consumed_rate' });
    expect(t5.ratio!).toBeLessThan(0.75);
    expect(t5.ciHigh!).toBeLessThan(0.75);
    expect(t5.seconds).toBeGreaterThan(0);
    for (const x of steps.filter((y) => y.outcome === 'good')) expect(x.verdict).toBe('pass');
    // The step's report.json is kept and says what differs between the two brokers.
    const stepReport = JSON.parse(readFileSync(join(out, t5.report!), 'utf8'));
    // Its pairs are the step's valid one_fast pairs (at least the first look's 8 were run; a pair the
    // machine disturbed is dropped whole, so fewer may count).
    const t5Trials = (stepReport.trials as { scenario: string; valid: boolean; invalidReason?: string }[]).filter((x) => x.scenario === 'one_fast');
    expect(t5Trials.length).toBeGreaterThanOrEqual(16);
    expect(t5.pairs).toBe(expectValidUnlessDisturbed(t5Trials, t5Trials.length) / 2);
    expect(stepReport.effectNote).toMatch(/credit_flow_default_credit/);
    // The report files: Markdown with every step and the culprit, HTML with its chart.
    const md = readFileSync(join(out, 'bisect.md'), 'utf8');
    expect(md).toMatch(/first bad image: .*:t5/);
    expect(md).toMatch(/\(8, the ends check\)/);
    expect(md).toMatch(/The ends check: one\\_fast consumed\\_rate −/);
    for (const x of steps) expect(md).toContain(x.image);
    expect(md).toMatch(/skipped/);
    const html = readFileSync(join(out, 'bisect.html'), 'utf8');
    expect(html).toContain('data-chart="bisect"');
    expect(existsSync(join(out, 'bisect.json'))).toBe(true);
  }, 1_200_000);
});
