#!/usr/bin/env node
// How big a regression each broker-side knob injects: every arm of bench/lib/arms.mjs named in
// --arms runs as a fixed same-run A/B (--no-sequential, --repetitions pairs) through the bundled
// CLI against the plain image, and each gating metric's paired Δ and 90 % CI is printed, with the
// machine's load as the run saw it. A knob that moves no gating metric cannot stand in for a
// regression in bench/time-to-verdict.mjs; one whose Δ changes from run to run (a CPU quota) can
// only be binned by each run's own estimate.
//   node_modules/.bin/node bench/knob-calibrate.mjs [--arms ttl,rates,lazy] [--repetitions 10] [--scenarios pr]
//     [--image rabbitmq-perf-gate/rabbitmq:3.10.8] [--cpus10 1.47] [--cpus5 1.55] [--busy10 0.2] [--busy5 0.1] [--count10 mod+mod] [--count5 mod] [-- extra CLI args]
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchArgs, IMAGES, list } from './lib/args.mjs';
import { ARM_NOTES, armArgs, checkArms, KNOB_DEFAULTS, runArm } from './lib/arms.mjs';

const { values: o, positionals } = benchArgs({ arms: list('ttl,rates,lazy'), repetitions: 10, scenarios: 'pr', image: IMAGES.v3, ...KNOB_DEFAULTS }, { positionals: true });
const dir = mkdtempSync(join(tmpdir(), 'perf-gate-knobs-'));
const ARMS = armArgs(dir, o.image, o);
checkArms('knob-calibrate.mjs', o.arms, ARMS);
const pct = (x) => `${x >= 1 ? '+' : '−'}${Math.abs((x - 1) * 100).toFixed(1)}`;
for (const arm of o.arms) {
  const r = runArm(ARMS[arm], { image: o.image, scenarios: o.scenarios, dir, out: join(dir, arm), cli: ['--no-sequential', '--repetitions', String(o.repetitions), ...positionals] });
  const report = r.report;
  if (!report) {
    console.error(`${arm}: no report (exit ${r.status}): ${r.stderr.split('\n').slice(-5).join(' | ')}`);
    continue;
  }
  const load = r.stderr.split('\n').find((l) => l.startsWith('Machine load:')) ?? '';
  const inherit = r.stderr.split('\n').find((l) => l.includes('trial vhosts inherit')) ?? '';
  console.log(`${arm} (${ARM_NOTES[arm]}), ${o.repetitions} pairs, ${(r.seconds / 60).toFixed(1)} min${inherit ? `; ${inherit.replace(/^[^:]*: /, '')}` : ''}`);
  for (const c of report.comparisons.filter((x) => x.gating)) {
    console.log(
      `  ${c.scenario.padEnd(20)} ${c.metric.padEnd(16)} ${pct(c.ratio)} % ${c.ciLow > 0 && Number.isFinite(c.ciHigh) ? `[${pct(c.ciLow)}, ${pct(c.ciHigh)}]` : '(no CI: too few pairs)'} n=${c.nCandidate} ${c.verdict}`,
    );
  }
  // What the brokers had in effect that differs, as read back from them (the knob, if it took).
  console.log(`  read back: ${report.effectDiff?.length ? report.effectDiff.join('; ') : 'no difference in effect between the two brokers'}`);
  if (load) console.log(`  ${load}`);
}
