#!/usr/bin/env node
// Records a nightly history with real runs of the bundled CLI's `nightly` (the same code as the
// action's mode: nightly, minus GitHub): a refresh on the offline 3.10.8 image records the
// reference broker, then --nights A/A "nights" (3.10.8 against that broker) and --regressed nights
// of an image carrying a broker-side regression (an advanced.config lowering
// credit_flow_default_credit to --credit). Each night is a fixed paired A/B (--pairs, one_fast,
// short trials) appended to the history file; the script prints, per night, its ratio, wall time and
// whether a new step was reported, and writes the history (the "recorded series" the change-point
// bench and test/unit/nightly-recorded.test.ts read). Nights here are minutes apart, not days.
//   node_modules/.bin/node bench/nightly-history.mjs [--nights 30] [--regressed 4] [--pairs 8] [--credit 10,5] [--duration 1.5] [--warmup 0.5] [--out bench/results/nightly-history/nightly-history.json]
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchArgs, numberList } from './lib/args.mjs';
import { bundle, ROOT } from './lib/common.mjs';

const { values: o } = benchArgs({
  nights: 30,
  regressed: 4,
  pairs: 8,
  credit: numberList('10,5'),
  duration: 1.5,
  warmup: 0.5,
  out: join(ROOT, 'bench/results/nightly-history/nightly-history.json'),
});
const BASE = 'rabbitmq-perf-gate/rabbitmq:3.10.8';
const dir = mkdtempSync(join(tmpdir(), 'perf-gate-nightly-bench-'));
const baseline = join(dir, 'baseline.json');
const history = join(dir, 'history.json');
const credit = o.credit;
const { buildImageSeries } = await import(await bundle('test/support/bisect-images.ts'));
const regressed = buildImageSeries({ repo: `rabbitmq-perf-gate/nightly-bench-${process.pid}`, count: 1, regressFrom: 1, credit });
const common = ['--scenarios', 'one_fast', '--duration', String(o.duration), '--warmup', String(o.warmup)];

function cli(args) {
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), ...args], { cwd: dir, encoding: 'utf8', timeout: 1_800_000, maxBuffer: 256 << 20 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, seconds: (Date.now() - t0) / 1000 };
}

try {
  console.log(
    `# nightly history: ${o.nights} A/A nights, then ${o.regressed} nights of credit_flow_default_credit {${credit.join(', ')}}; ${o.pairs} pairs a night (${o.warmup}+${o.duration} s trials, one_fast), ${new Date().toISOString()}`,
  );
  const ref = cli(['refresh', '--image', BASE, ...common, '--repetitions', '3', '--baseline-file', baseline, '--out', join(dir, 'refresh')]);
  if (ref.code !== 0) throw new Error(`refresh failed: ${ref.stderr.slice(-2000)}`);
  const total = o.nights + o.regressed;
  for (let k = 0; k < total; k++) {
    const image = k < o.nights ? BASE : regressed.images[0];
    const r = cli([
      'nightly',
      '--image',
      image,
      ...common,
      '--no-sequential',
      '--repetitions',
      String(o.pairs),
      '--baseline-file',
      baseline,
      '--history-file',
      history,
      '--revision',
      `${String(k).padStart(4, '0')}${'0'.repeat(36)}`,
      '--out',
      join(dir, `night-${k}`),
      '--json',
    ]);
    if (r.code !== 0 && r.code !== 1) throw new Error(`night ${k + 1} failed (exit ${r.code}): ${r.stderr.slice(-2000)}`);
    const h = JSON.parse(readFileSync(history, 'utf8'));
    const e = h.entries.at(-1);
    const ratio = e.ratios?.one_fast?.consumed_rate;
    const fresh = h.steps.filter((s) => s.foundAt === e.createdAt);
    console.log(
      `night ${String(k + 1).padStart(2)} ${k < o.nights ? 'A/A      ' : 'regressed'} ratio ${ratio ? ratio.ratio.toFixed(3) : '-'} [${ratio?.ciLow?.toFixed(3)}, ${ratio?.ciHigh?.toFixed(3)}] ${r.seconds.toFixed(0)} s` +
        `${fresh.length ? `  NEW STEP ${fresh.map((s) => `${(s.magnitude * 100).toFixed(1)} % at night ${h.entries.findIndex((x) => x.createdAt === s.at) + 1}`).join(', ')}` : ''}`,
    );
  }
  copyFileSync(history, o.out);
  const h = JSON.parse(readFileSync(o.out, 'utf8'));
  console.log(
    `# ${h.entries.length} nights written to ${o.out}; steps reported: ${h.steps.map((s) => `${(s.magnitude * 100).toFixed(1)} % at night ${h.entries.findIndex((x) => x.createdAt === s.at) + 1} (found on night ${h.entries.findIndex((x) => x.createdAt === s.foundAt) + 1})`).join('; ') || 'none'}`,
  );
} finally {
  regressed.remove();
  if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
}
