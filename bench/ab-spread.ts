// Same-run A/B on containers: how tight is an A/A comparison when both brokers are up at once
// (interleaved trials) versus started in turn (one broker alive at a time), and how does that
// compare with a real A/B (3.10.8 vs 4.0.5)? Prints, for one_fast consumed and published msg/s,
// the per-side median and coefficient of variation, the Hodges-Lehmann ratio with its 95 % CI
// and the CI's width. Run through bench/ab-spread.mjs.
import { startDocker } from '../src/broker/docker';
import type { BrokerHandle } from '../src/broker/provider';
import { loadScenarioFile } from '../src/config/scenario-file';
import { packagePath } from '../src/config/paths';
import { hodgesLehmannRatio, mannWhitneyExact, median } from '../src/compare/stats';
import { buildPlan } from '../src/plan/plan';
import { runTrial } from '../src/workload/trial';
import type { DockerTargetSpec, ScenarioSpec } from '../src/schema/types';
import { benchArgs, headerOf, IMAGES, list } from './lib/args.mjs';

const { values: o } = benchArgs(
  { pairs: 6, seconds: 4, warmup: 1, modes: list('aa-both-up,aa-in-turn,ab-both-up'), a: IMAGES.v3, b: IMAGES.v4 },
  { script: 'ab-spread', help: headerOf(packagePath('bench/ab-spread.mjs')) },
);
const pairs = o.pairs;
const [base] = loadScenarioFile(packagePath('scenarios/one_fast.yml'));
const scenario: ScenarioSpec = { ...base, durationSeconds: o.seconds, warmupSeconds: o.warmup };
const target = (id: string, image: string): DockerTargetSpec => ({
  id,
  label: `${id} (${image.split(':').pop()})`,
  kind: 'docker',
  image,
  configFiles: [],
  nodes: 1,
  env: {},
  setup: [],
  network: 'host',
});
const runId = `bench${process.pid}`;
const METRICS = ['consumed_rate', 'published_rate'] as const;

async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const t = Date.now();
  const r = await f();
  return [r, (Date.now() - t) / 1000];
}

type Values = Record<string, Record<string, number[]>>;
const push = (v: Values, side: string, metrics: Record<string, number>) => {
  for (const m of METRICS) if (m in metrics) ((v[side] ??= {})[m] ??= []).push(metrics[m]);
};

/** Both brokers up for the whole run; trials interleaved in randomised rounds. */
async function bothUp(a: DockerTargetSpec, b: DockerTargetSpec, boots: number[]): Promise<Values> {
  const handles: BrokerHandle[] = [];
  try {
    for (const t of [a, b]) {
      const [h, s] = await timed(() => startDocker(t, { runId }));
      boots.push(s);
      handles.push(h);
    }
    const v: Values = {};
    for (const p of buildPlan([scenario], [a.id, b.id], pairs, 1234)) {
      const r = await runTrial(p, handles[p.target === a.id ? 0 : 1], runId);
      if (r.valid) push(v, p.target, r.metrics);
      else console.error(`  invalid trial: ${r.invalidReason}`);
    }
    return v;
  } finally {
    for (const h of handles) await h.stop();
  }
}

/** One broker alive at a time: start, one trial, stop; alternating targets in randomised rounds. */
async function inTurn(a: DockerTargetSpec, b: DockerTargetSpec, boots: number[]): Promise<Values> {
  const v: Values = {};
  for (const p of buildPlan([scenario], [a.id, b.id], pairs, 1234)) {
    const [h, s] = await timed(() => startDocker(p.target === a.id ? a : b, { runId }));
    boots.push(s);
    try {
      const r = await runTrial(p, h, runId);
      if (r.valid) push(v, p.target, r.metrics);
      else console.error(`  invalid trial: ${r.invalidReason}`);
    } finally {
      await h.stop();
    }
  }
  return v;
}

const cv = (xs: number[]) => {
  const m = xs.reduce((s, x) => s + x, 0) / xs.length;
  return Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1)) / m;
};
const pct = (r: number) => `${r >= 1 ? '+' : ''}${((r - 1) * 100).toFixed(1)}%`;

const rows: string[][] = [];
for (const mode of o.modes) {
  const [a, b] = mode.startsWith('aa') ? [target('A1', o.a), target('A2', o.a)] : [target('A', o.a), target('B', o.b)];
  const boots: number[] = [];
  const started = Date.now();
  console.error(`${mode}: ${pairs} pairs of ${scenario.warmupSeconds}+${scenario.durationSeconds} s trials…`);
  const v = mode.endsWith('in-turn') ? await inTurn(a, b, boots) : await bothUp(a, b, boots);
  const wall = Math.round((Date.now() - started) / 1000);
  for (const m of METRICS) {
    const x = v[a.id]?.[m] ?? [];
    const y = v[b.id]?.[m] ?? [];
    const hl = hodgesLehmannRatio(x, y, 0.95);
    rows.push([
      mode,
      m,
      `${x.length}+${y.length}`,
      median(x).toFixed(0),
      `${(cv(x) * 100).toFixed(1)}%`,
      median(y).toFixed(0),
      `${(cv(y) * 100).toFixed(1)}%`,
      hl ? pct(hl.ratio) : '-',
      hl ? `[${pct(hl.low)}, ${pct(hl.high)}]` : '-',
      hl ? `${((hl.high - hl.low) * 100).toFixed(1)} pts` : '-',
      mannWhitneyExact(x, y).p.toFixed(4),
      `${median(boots).toFixed(1)} s`,
      `${wall} s`,
    ]);
  }
}
const head = ['mode', 'metric', 'n', 'median A', 'CV A', 'median B', 'CV B', 'B/A (HL)', '95% CI', 'CI width', 'p (U)', 'boot (median)', 'wall'];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
for (const r of [head, ...rows]) console.log(r.map((c, i) => c.padEnd(widths[i])).join('  '));
