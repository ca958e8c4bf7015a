// The bundled CLI (dist/cli.js) as a user runs it, against the real local broker: list, run
// --json (a valid RunReport), report (Markdown and HTML), compare of two reports and of a report
// with a baseline.json, help, and bad input (exit 2, one line, no stack trace, file:line for
// scenario files). A pseudo-terminal (util-linux `script`) checks the progress bar and the
// coloured table.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { RunReport, TrialResult } from '../../src/schema/types';
import { SCHEMA_VERSION } from '../../src/schema/types';
import { baselineFromRun } from '../../src/compare/baseline-file';
import { writeBaseline } from '../../src/compare/stored';
import { AMQP_URL } from '../support/broker';

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = join(ROOT, 'dist/cli.js');
const tmp = mkdtempSync(join(tmpdir(), 'perf-gate-cli-'));
const fast = ['--scenarios', 'smoke', '--repetitions', '3', '--duration', '2', '--warmup', '1', '--broker-url', AMQP_URL, '--baseline-file', join(tmp, 'none.json')];
const hasScript = spawnSync('script', ['--version']).status === 0;

function cli(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: tmp, encoding: 'utf8', timeout: 180_000, env: { PATH: process.env.PATH ?? '', HOME: tmp, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Runs the CLI on a pseudo-terminal; stdout and stderr arrive mixed, as a user sees them. */
function tty(args: string[], env: Record<string, string> = {}) {
  const cmd = [process.execPath, CLI, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const r = spawnSync('script', ['-qec', cmd, '/dev/null'], { cwd: tmp, encoding: 'utf8', timeout: 180_000, env: { PATH: process.env.PATH ?? '', HOME: tmp, TERM: 'xterm', ...env } });
  return { code: r.status, out: r.stdout };
}

const oneLineError = (stderr: string) => {
  expect(stderr.trim().split('\n')).toHaveLength(1);
  expect(stderr).toMatch(/^error: /);
  expect(stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
};

/** `n` trials per target from a real report's, each metric scaled by `f(metric)`. */
function derived(r: RunReport, n: number, f: (metric: string) => number): RunReport {
  const src = r.trials.filter((t) => t.valid);
  const trials: TrialResult[] = Array.from({ length: n }, (_, i) => {
    const t = src[i % src.length];
    return { ...t, trial: i, order: i, metrics: Object.fromEntries(Object.entries(t.metrics).map(([k, v]) => [k, v * f(k) * (1 + (i % 3) / 100)])) };
  });
  return { ...r, trials, repetitions: n };
}

let report: RunReport;
let run: ReturnType<typeof cli>;
beforeAll(() => {
  expect(existsSync(CLI), 'run `npm run bundle` first').toBe(true);
  run = cli(['run', ...fast, '--json', '--out', join(tmp, 'out')]);
  report = JSON.parse(run.stdout);
  // Two reports derived from the real one, for the compare tests (here, so that none of them
  // depends on another having run first).
  writeFileSync(join(tmp, 'old.json'), JSON.stringify(derived(report, 6, (m) => (m.includes('latency') ? 1 : 2)))); // the old broker was twice as fast
  writeFileSync(join(tmp, 'new.json'), JSON.stringify(derived(report, 6, () => 1)));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('bundled CLI', () => {
  it('--help: usage, every command, examples, exit 0', () => {
    const r = cli(['--help']);
    expect(r.code).toBe(0);
    for (const c of ['run', 'refresh', 'compare', 'report', 'list', 'Examples:', '--image', '--baseline-image', '--html', 'Exit status']) expect(r.stdout).toContain(c);
    expect(cli(['help']).stdout).toBe(r.stdout);
  });

  it('--version: the package version alone; with a command it is a usage error', () => {
    const r = cli(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version}\n`);
    const bad = cli(['list', '--version']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('error: --version does not apply to "list" (see "rabbitmq-perf-gate --help")\n');
  });

  it('list: presets and scenarios, as text and as JSON', () => {
    const r = cli(['list']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Presets:\n\s+smoke/m);
    expect(r.stdout).toContain('one_fast');
    const j = JSON.parse(cli(['list', '--json']).stdout);
    expect(j.presets.find((p: { name: string }) => p.name === 'smoke').scenarios).toEqual(['one_fast']);
  });

  it('run --json: a valid RunReport on stdout, plain progress lines on stderr, files written', () => {
    expect(run.code, run.stderr).toBe(0);
    expect(report.schemaVersion).toBe(SCHEMA_VERSION);
    expect(report.mode).toBe('check');
    expect(report.trials).toHaveLength(3);
    expect(report.trials.every((t) => t.valid && t.metrics.consumed_rate > 0 && t.series.length > 0 && t.histograms.latency)).toBe(true);
    expect(report.targets[0].rabbitmqVersion).toMatch(/^\d+\.\d+\.\d+/);
    expect(report.fingerprint.cores).toBeGreaterThan(0);
    expect(run.stdout + run.stderr).not.toContain('guest:guest');
    expect(run.stderr).toMatch(/^\[1\/3\] one_fast #1 on broker: published [\d,]+ msg\/s/m);
    expect(run.stderr).not.toContain('\x1b[');
    expect(JSON.parse(readFileSync(join(tmp, 'out/report.json'), 'utf8')).seed).toBe(report.seed);
  });

  it('report: Markdown to stdout, HTML with --html', () => {
    const r = cli(['report', join(tmp, 'out/report.json'), '--html', join(tmp, 'r.html')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^## .* rabbitmq-perf-gate: /);
    expect(r.stdout).toContain('**Decided by:**');
    const html = readFileSync(join(tmp, 'r.html'), 'utf8');
    expect(html).toMatch(/^<!DOCTYPE html>/);
    expect(html).toContain('data-chart="s0-throughput"');
  });

  it('first run, no baseline: every format says "measured, nothing to compare with yet" and shows each gating median', () => {
    const valid = report.trials.filter((t) => t.valid);
    const med = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      const m = s.length >> 1;
      return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
    };
    const shown = (x: number) => Math.round(x).toLocaleString('en-US'); // msg/s medians are ≥ 1000 here
    const summary = readFileSync(join(tmp, 'out/summary.md'), 'utf8');
    expect(summary).toMatch(/^## 📏 rabbitmq-perf-gate: measured, nothing to compare with yet$/m);
    expect(summary).not.toContain('not enough clean data');
    expect(summary).toContain('### Measured');
    expect(summary).toMatch(/mode: refresh/);
    const html = cli(['report', join(tmp, 'out/report.json'), '--html', join(tmp, 'first.html')]);
    expect(html.code, html.stderr).toBe(0);
    const page = readFileSync(join(tmp, 'first.html'), 'utf8');
    expect(page).toContain('<h2>Measured</h2>');
    for (const metric of report.scenarios[0].gate) {
      const m = shown(med(valid.map((t) => t.metrics[metric])));
      expect(summary).toMatch(new RegExp(`^\\| broker \\| one\\\\_fast \\| [a-z ]+ \\| ${m} msg/s \\| [\\d,]+ – [\\d,]+ \\| 3 of 3 \\|$`, 'm'));
      expect(page).toContain(`${m} msg/s`);
    }
    if (hasScript) {
      const t = tty(['report', join(tmp, 'out/report.json')], { NO_COLOR: '1' });
      expect(t.out).toContain('MEASURED  measured, nothing to compare with yet');
      for (const metric of report.scenarios[0].gate) expect(t.out).toContain(`${shown(med(valid.map((x) => x.metrics[metric])))} msg/s`);
    }
  });

  it('compare two reports: a real regression exits 1, with the table and JSON', () => {
    const md = cli(['compare', 'new.json', 'old.json']);
    expect(md.code, md.stderr).toBe(1);
    expect(md.stdout).toContain('| Scenario | Metric |');
    expect(md.stdout).toMatch(/\| consumed \| .* ❌ regression \|/);
    const j: RunReport = JSON.parse(cli(['compare', 'new.json', 'old.json', '--json']).stdout);
    expect(j.verdict).toBe('fail');
    expect(j.targets.map((t) => t.id)).toEqual(['candidate', 'reference']);
    expect(j.comparisons.find((c) => c.metric === 'consumed_rate')!.ratio).toBeCloseTo(0.5, 1);
    expect(cli(['compare', 'new.json', 'new.json']).code).toBe(0);
  });

  it('compare a report with a baseline.json, in either order', () => {
    writeBaseline(
      join(tmp, 'baseline.json'),
      baselineFromRun(
        derived(report, 6, () => 1),
        undefined,
      ),
    );
    writeFileSync(join(tmp, 'six.json'), JSON.stringify(derived(report, 6, () => 1.01)));
    const a = cli(['compare', 'six.json', 'baseline.json', '--json']);
    expect(a.code, a.stderr).toBe(0);
    const j: RunReport = JSON.parse(a.stdout);
    expect(j.comparisons.every((c) => c.against === 'stored')).toBe(true);
    expect(j.comparisons.length).toBeGreaterThan(3);
    expect(JSON.parse(cli(['compare', 'baseline.json', 'six.json', '--json']).stdout).comparisons).toEqual(j.comparisons);
  });

  it('bad input: unknown option, command or misplaced option → exit 2, one line, no stack', () => {
    for (const args of [['run', '--no-such-option'], ['frobnicate'], ['list', '--image', 'x'], ['run', '--repetitions', 'many'], ['report'], ['compare', 'new.json']]) {
      const r = cli(args);
      expect(r.code, args.join(' ')).toBe(2);
      oneLineError(r.stderr);
    }
    expect(cli(['run', '--no-such-option']).stderr).toContain("Unknown option '--no-such-option'");
    expect(cli(['run', '--image', 'x', '--broker-url', AMQP_URL]).stderr).toContain('--image: starts its own broker');
  });

  it('a malformed scenario file: exit 2 with file:line, before touching any broker', () => {
    writeFileSync(join(tmp, 'bad.yml'), 'id: bad\ndescription: x\norigin: {source: a, command: b}\nwarmup: 1\nduration: -5\n');
    const r = cli(['run', '--scenarios', 'bad.yml', '--broker-url', 'amqp://guest:guest@127.0.0.1:1']);
    expect(r.code).toBe(2);
    oneLineError(r.stderr);
    expect(r.stderr).toMatch(/bad\.yml:5: duration: /);
    writeFileSync(join(tmp, 'broken.yml'), 'id: broken\ndescription: [x\n  y: }\n');
    const b = cli(['run', '--scenarios', './broken.yml']);
    expect(b.code).toBe(2);
    oneLineError(b.stderr);
    expect(b.stderr).toMatch(/broken\.yml:\d+: malformed YAML/);
  });

  it('report/compare of a file that is not JSON: exit 2 with file:line', () => {
    writeFileSync(join(tmp, 'junk.json'), '{\n "a": 1,\n oops\n}\n');
    const r = cli(['report', 'junk.json']);
    expect(r.code).toBe(2);
    oneLineError(r.stderr);
    expect(r.stderr).toMatch(/junk\.json:3: the file is not valid JSON/);
    expect(cli(['compare', 'junk.json', 'old.json']).code).toBe(2);
  });

  it.skipIf(!hasScript)('on a terminal: coloured table; NO_COLOR keeps the table without colour', () => {
    const c = tty(['compare', 'new.json', 'old.json']);
    expect(c.code).toBe(1);
    expect(c.out).toMatch(/\x1b\[1;31m✘ REGRESSION/);
    expect(c.out).toMatch(/Scenario\s+Metric\s+Baseline\s+Now\s+Δ \[90 % CI\]\s+n\s+Answer/);
    const plain = tty(['compare', 'new.json', 'old.json'], { NO_COLOR: '1' });
    expect(plain.out).toContain('✘ REGRESSION');
    expect(plain.out).not.toContain('\x1b[');
  });

  it.skipIf(!hasScript)('on a terminal: run shows a progress bar with ETA, then the summary table', () => {
    writeBaseline(join(tmp, 'real-baseline.json'), baselineFromRun(report, undefined));
    const r = tty(['run', ...fast.slice(0, -2), '--baseline-file', 'real-baseline.json', '--repetitions', '2', '--out', join(tmp, 'tty')]);
    expect(r.code, r.out).toBe(0);
    const out = r.out.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');
    expect(out).toMatch(/░{28} 0\/2 trials · 0:0\d elapsed · ~\d:\d\d left/);
    expect(out).toMatch(/█{14}░{14} 1\/2 trials · \d:\d\d elapsed · ~\d:\d\d left/);
    expect(out).toMatch(/✓ one_fast #1 on broker: published/);
    expect(out).toMatch(/Scenario\s+Metric\s+Baseline/);
  });
});
