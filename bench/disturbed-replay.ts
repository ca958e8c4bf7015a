// What dropping the pairs the machine disturbed (pairDisturbance, src/metrics/machine.ts) changed
// in real gate runs: each kept report (bench/time-to-verdict.mjs --keep) is re-decided look by look
// twice with the gate's own stopping policy (SequentialRun) and the report's design — with the rule
// (the disturbed pairs not compared; for a run recorded before the rule existed, the pairs it would
// have dropped, from each trial's recorded machine load) and with those pairs compared as if it were off. Per scenario:
// the look it stops at and its answer each way; a replay without the rule can only use the rounds
// the run recorded, so a scenario that needs more is "not decided within the N recorded rounds".
// Fail-fast is left out (each scenario on its own); where the replay with the rule stops
// elsewhere than the report records, the line says so (fail-fast, or a run without the rule).
//   node_modules/.bin/node bench/disturbed-replay.mjs bench/results/time-to-verdict/reports-2026-11-27/aa-52.report.json.gz [more reports]
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { answerFor, overallAnswer } from '../src/compare/compare';
import { SequentialRun } from '../src/compare/sequential';
import { disturbedPair, pairDisturbance } from '../src/metrics/machine';
import { packagePath } from '../src/config/paths';
import { benchArgs, headerOf } from './lib/args.mjs';
import type { Comparison, RunReport, ScenarioSpec } from '../src/schema/types';

const files = benchArgs({}, { positionals: true, script: 'disturbed-replay.mjs', help: headerOf(packagePath('bench/disturbed-replay.ts')) }).positionals;
if (!files.length) {
  console.error('disturbed-replay.mjs: give one or more kept reports (--help shows the usage)');
  process.exit(2);
}

const pct = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(100 * x).toFixed(1)} %`;
const show = (cs: Comparison[]) =>
  cs
    .filter((c) => c.gating)
    .map((c) => `${c.metric} ${answerFor(c)} ${pct((c.ratio ?? Number.NaN) - 1)} [${pct((c.ciLow ?? Number.NaN) - 1)}, ${pct((c.ciHigh ?? Number.NaN) - 1)}]`)
    .join('; ');

/** Looks of one scenario over the recorded rounds: where it stops and its comparisons there. */
function replay(run: SequentialRun, spec: ScenarioSpec, trials: RunReport['trials'], rounds: number, report: RunReport) {
  const cand = report.targets.find((t) => t.id === 'candidate')!;
  const ref = report.targets.find((t) => t.id !== 'candidate')!;
  let last: Comparison[] = [];
  for (const look of run.design.looks) {
    if (look > rounds) break;
    last = run.compareAt(
      spec,
      trials.filter((t) => t.trial < look),
      cand,
      ref,
    );
    const e = run.look(spec.id, look, last);
    if (e.stop) return { pairs: look, stop: e.stop, comparisons: last };
  }
  return { pairs: rounds, stop: undefined, comparisons: last };
}

for (const file of files) {
  const raw = readFileSync(file);
  const report = JSON.parse((file.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8')) as RunReport;
  const q = report.sequential!;
  const design = { looks: q.looks, level: q.level, family: q.family, fixedPairs: q.fixedPairs };
  const specs = report.scenarios;
  const asRan = new SequentialRun(design, false);
  const ruleOff = new SequentialRun(design, false);
  console.log(`${file}: ${report.answer} (${report.verdict}); stopped ${JSON.stringify(q.stopped)}`);
  const answers: Record<'asRan' | 'off', Comparison[]> = { asRan: [], off: [] };
  let pairsAsRan = 0;
  let pairsOff = 0;
  for (const spec of specs) {
    const trials = report.trials.filter((t) => t.scenario === spec.id);
    const rounds = Math.max(0, ...trials.map((t) => t.trial + 1));
    // The rule off: every pair it dropped compared again; on: the pairs it drops (recomputed, so a
    // report from before the rule gets it too), on the machine the run recorded (2 cores here).
    const off = trials.map((t) => (disturbedPair(t.invalidReason) ? { ...t, valid: true, invalidReason: undefined } : t));
    const cores = report.machine?.cores ?? 2;
    const on = off.map((t) => {
      const other = off.find((u) => u.trial === t.trial && u.target !== t.target);
      const why = t.valid && other?.valid ? pairDisturbance(t.machine, other.machine, cores) : undefined;
      return why ? { ...t, valid: false, invalidReason: why } : t;
    });
    const dropped = on.filter((t) => t.target === 'candidate' && disturbedPair(t.invalidReason)).length;
    const a = replay(asRan, spec, on, rounds, report);
    const b = replay(ruleOff, spec, off, rounds, report);
    answers.asRan.push(...a.comparisons);
    answers.off.push(...b.comparisons);
    pairsAsRan += a.pairs;
    pairsOff += b.pairs;
    const recorded = q.stopped[spec.id];
    const where = (x: typeof a) => (x.stop ? `${x.stop} at ${x.pairs} pairs` : `not decided within the ${rounds} recorded rounds`);
    console.log(`  ${spec.id}: ${dropped} of ${rounds} pairs dropped`);
    console.log(`    rule on:   ${where(a)}${recorded !== undefined && recorded !== a.pairs ? ` (the run stopped at ${recorded}: fail-fast, or run without the rule)` : ''}; ${show(a.comparisons)}`);
    console.log(`    rule off:  ${where(b)}; ${show(b.comparisons)}`);
  }
  console.log(`  run: rule on ${overallAnswer(answers.asRan)} after ${pairsAsRan} scenario pairs; rule off ${overallAnswer(answers.off)} after ${pairsOff} (of what was recorded)`);
}
