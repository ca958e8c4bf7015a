// The baseline file's lifecycle: missing, empty, corrupt, newer schema, malformed, bounded
// history, and atomic replacement (a writer killed mid-write never leaves a partial file).
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync, readdirSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { baselineFromRun, HISTORY_LIMIT, storedMismatch, windowMismatch } from '../../src/compare/baseline-file';
import { readBaseline, writeBaseline } from '../../src/compare/stored';
import { spec } from '../support/broker';
import type { Baseline, RunReport } from '../../src/schema/types';

const dir = () => mkdtempSync(join(tmpdir(), 'perf-gate-baseline-'));
const fp = { tool: 't', toolVersion: '1', node: 'v24', os: 'Linux', kernel: 'k', cpuModel: 'cpu', cores: 2, memoryBytes: 1 };
const target = { id: 'candidate', label: 'b', kind: 'url' as const, amqpUrl: 'amqp://x', managementUrl: 'http://x', rabbitmqVersion: '3.10.8', erlangVersion: '25', nodes: [] };

function report(values: number[]): RunReport {
  return {
    schemaVersion: 1,
    tool: { name: 't', version: '1' },
    createdAt: new Date().toISOString(),
    mode: 'refresh',
    fingerprint: fp,
    preset: 'smoke',
    repetitions: values.length,
    seed: 1,
    scenarios: [],
    targets: [target],
    candidate: 'candidate',
    trials: values.map((v, i) => ({ scenario: 'one_fast', target: 'candidate', trial: i, order: i, startedAt: '', valid: true, metrics: { consumed_rate: v }, series: [], histograms: {} })),
    comparisons: [],
    decidedBy: '',
    verdict: 'pass',
    regressions: 0,
    improvements: 0,
    errors: [],
    durationSeconds: 1,
  };
}

describe('reading', () => {
  it('missing → missing; empty, corrupt, newer, malformed → unusable with a clear message', () => {
    const d = dir();
    expect(readBaseline(join(d, 'nope.json')).status).toBe('missing');
    const cases: Array<[string, RegExp]> = [
      ['', /empty/],
      ['{"schemaVersion": 1,\n oops}', /not valid JSON/],
      ['[1,2]', /not a JSON object/],
      ['{"scenarios": {}}', /no schemaVersion/],
      ['{"schemaVersion": 99, "scenarios": {}}', /schema version 99, newer than/],
      ['{"schemaVersion": 1, "scenarios": {"a": {"metrics": {"m": [1, "x"]}}}, "fingerprint": {}}', /the baseline file is malformed: \/scenarios\/a\/metrics\/m\/1 must be number/],
      [
        '{"schemaVersion": 1, "scenarios": {"a": {"metrics": {}, "window": {"warmupSeconds": "1"}}}, "fingerprint": {}}',
        /the baseline file is malformed: \/scenarios\/a\/window must have required property 'durationSeconds'/,
      ],
    ];
    for (const [text, msg] of cases) {
      const f = join(d, 'b.json');
      writeFileSync(f, text);
      const r = readBaseline(f);
      expect(r.status).toBe('unusable');
      if (r.status === 'unusable') {
        expect(r.error.describe()).toMatch(msg);
        expect(r.error.describe()).toContain('b.json');
        expect(r.error.fix).toBeTruthy();
      }
    }
  });

  it('round-trips, keeps other scenarios, and bounds the history', () => {
    const f = join(dir(), 'b.json');
    let prev: Baseline | undefined;
    for (let i = 0; i < HISTORY_LIMIT + 5; i++) {
      const b = baselineFromRun(report([100 + i, 101 + i, 102 + i]), prev, `sha${i}`);
      if (i === 0) b.scenarios.other = { metrics: { consumed_rate: [1, 2, 3] } };
      writeBaseline(f, b);
      const r = readBaseline(f);
      expect(r.status).toBe('ok');
      prev = r.status === 'ok' ? r.baseline : undefined;
    }
    expect(prev!.history).toHaveLength(HISTORY_LIMIT);
    expect(prev!.history.at(-1)!.commit).toBe(`sha${HISTORY_LIMIT + 4}`);
    expect(prev!.history.at(-1)!.medians.one_fast.consumed_rate).toBe(101 + HISTORY_LIMIT + 4);
    expect(prev!.scenarios.other.metrics.consumed_rate).toEqual([1, 2, 3]);
    expect(prev!.scenarios.one_fast.metrics.consumed_rate).toHaveLength(3);
  });

  it("records each scenario's warm-up and window, and names the scenarios whose trials were not as long as now", () => {
    const oneFast = { ...spec('one_fast', {}), warmupSeconds: 1, durationSeconds: 5 };
    const b = baselineFromRun({ ...report([100, 101, 102]), scenarios: [oneFast] }, undefined);
    expect(b.scenarios.one_fast.window).toEqual({ warmupSeconds: 1, durationSeconds: 5 });
    expect(windowMismatch(b, [oneFast])).toBeUndefined();
    expect(windowMismatch(b, [{ ...oneFast, durationSeconds: 2 }])).toBe("the baseline's trials used another warm-up or window: one_fast (1+5 s → 1+2 s)");
    // With another runner too, both reasons are given (a stored comparison then warns, never fails).
    expect(storedMismatch(b, { ...fp, cores: 4 }, target, [{ ...oneFast, durationSeconds: 2 }])).toBe(
      "the runner differs from the baseline's: core count (2 → 4); the baseline's trials used another warm-up or window: one_fast (1+5 s → 1+2 s)",
    );
    expect(storedMismatch(b, fp, target, [oneFast])).toBeUndefined();
    // A file from before windows were recorded is taken as it is; so is a scenario it lacks.
    delete b.scenarios.one_fast.window;
    expect(
      windowMismatch(b, [
        { ...oneFast, durationSeconds: 2 },
        { ...oneFast, id: 'other' },
      ]),
    ).toBeUndefined();
  });
});

describe('atomic write', () => {
  it('a writer SIGKILLed mid-write leaves either the old file or the new one, never a partial file', async () => {
    const d = dir();
    const entry = join(d, 'writer.mjs');
    await build({
      stdin: {
        contents: `import { writeFileAtomic } from ${JSON.stringify(resolve('src/compare/stored.ts'))};
        const big = JSON.stringify({ schemaVersion: 1, pad: 'x'.repeat(64 * 1024 * 1024) });
        process.stdout.write('go\\n'); writeFileAtomic(process.argv[2], big);`,
        resolveDir: process.cwd(),
        loader: 'ts',
      },
      bundle: true,
      platform: 'node',
      format: 'esm',
      outfile: entry,
      logLevel: 'silent',
    });
    const target = join(d, 'baseline.json');
    const old = JSON.stringify({ schemaVersion: 1, old: true });
    writeFileSync(target, old);
    let killedMidway = 0;
    for (let i = 0; i < 6; i++) {
      const child = spawn(process.execPath, [entry, target]);
      await new Promise<void>((r) => child.stdout.once('data', () => r()));
      await new Promise((r) => setTimeout(r, 5 + i * 15));
      const exited = child.exitCode !== null;
      child.kill('SIGKILL');
      await new Promise((r) => child.on('close', r));
      const text = readFileSync(target, 'utf8');
      expect(text === old || JSON.parse(text).pad.length === 64 * 1024 * 1024).toBe(true);
      if (!exited && text === old) killedMidway++;
      writeFileSync(target, old);
    }
    expect(killedMidway).toBeGreaterThan(0);
    // Leftover temp files are dot-files that never shadow the baseline itself.
    expect(readdirSync(d).filter((f) => f === 'baseline.json')).toHaveLength(1);
  });
});
