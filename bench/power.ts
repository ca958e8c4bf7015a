// Proof of power for the gate's decision rule, on real brokers. Four containers from one image
// run at once: A and A2 (no limit: an A/A pair) and B1, B2 slowed broker-side by a CPU quota
// (docker --cpus, a cgroup knob on the broker only; the generator is untouched). Trials of all
// four run in randomised interleaved rounds; every block of `n` rounds is one gate run per
// arm: A2 vs A (must never fail), B1 vs A and B2 vs A (should fail). Each gate run applies the
// real compare stage (exact U, Holm, Hodges-Lehmann CI, tolerance) to one_fast's gating metric.
// The true size of each slowdown is the ratio of pooled medians over all rounds.
// Run through bench/power.mjs; prints false-fail and detection rates with Clopper-Pearson CIs.
// `--json FILE` saves every trial's value; `--from FILE` re-decides saved trials without brokers
// (e.g. with another `--tolerance` or `--n`), so a rule change is judged on the same data.
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startDocker } from '../src/broker/docker';
import type { BrokerHandle } from '../src/broker/provider';
import { loadScenarioFile } from '../src/config/scenario-file';
import { packagePath } from '../src/config/paths';
import { compareSamples } from '../src/compare/compare';
import { median } from '../src/compare/stats';
import { toleranceFor } from '../src/metrics/definitions';
import { buildPlan } from '../src/plan/plan';
import { runTrial } from '../src/workload/trial';
import type { DockerTargetSpec, ScenarioSpec } from '../src/schema/types';

const { values: o } = parseArgs({
  options: {
    runs: { type: 'string', default: '30' },
    n: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '2' },
    warmup: { type: 'string', default: '1' },
    cpus: { type: 'string', default: '1.3,1.5' },
    image: { type: 'string', default: 'rabbitmq-perf-gate/rabbitmq:3.10.8' },
    seed: { type: 'string', default: '20261122' },
    tolerance: { type: 'string' },
    json: { type: 'string' },
    from: { type: 'string' },
  },
});
/** Per trial (same order as values): its position in the run, its start (s since the first) and
 *  the consumed count of each second of the run (warm-up included, t < 0), for offline analysis. */
interface SavedTrial { order: number; at: number; perSecond: Array<[number, number]> }
interface Saved { seconds: number; warmup: number; cpus: number[]; image: string; seed: number; minutes: number; values: Record<string, number[]>; trials?: Record<string, SavedTrial[]> }
const saved: Saved | undefined = o.from ? JSON.parse(readFileSync(o.from, 'utf8')) : undefined;
const n = Number(o.n);
const runs = saved ? Math.floor(saved.values.A.length / n) : Number(o.runs);
const [base] = loadScenarioFile(packagePath('scenarios/one_fast.yml'));
const metric = base.gate[0];
const scenario: ScenarioSpec = {
  ...base,
  durationSeconds: saved?.seconds ?? Number(o.seconds), warmupSeconds: saved?.warmup ?? Number(o.warmup),
  tolerances: o.tolerance ? { ...base.tolerances, [metric]: Number(o.tolerance) } : base.tolerances,
};
const quotas = saved?.cpus ?? o.cpus!.split(',').map(Number);
const target = (id: string, cpus?: number): DockerTargetSpec =>
  ({ id, label: cpus ? `${id} (--cpus ${cpus})` : id, kind: 'docker', image: o.image!, configFiles: [], nodes: 1, env: {}, setup: [], network: 'host', cpus });
const targets = [target('A'), target('A2'), ...quotas.map((c, i) => target(`B${i + 1}`, c))];
const runId = `power${process.pid}`;

/** Clopper-Pearson exact 95 % interval for k successes in n (bisection on the binomial tails). */
function clopperPearson(k: number, total: number): [number, number] {
  const cdf = (p: number, upTo: number) => {
    let s = 0;
    let term = (1 - p) ** total;
    for (let i = 0; i <= upTo; i++) {
      s += term;
      term *= ((total - i) / (i + 1)) * (p / (1 - p));
    }
    return s;
  };
  const solve = (f: (p: number) => number) => {
    let lo = 0;
    let hi = 1;
    for (let i = 0; i < 60; i++) {
      const mid = (lo + hi) / 2;
      if (f(mid) > 0) lo = mid;
      else hi = mid;
    }
    return (lo + hi) / 2;
  };
  const low = k === 0 ? 0 : solve((p) => 1 - cdf(p, k - 1) < 0.025 ? 1 : -1);
  const high = k === total ? 1 : solve((p) => cdf(p, k) > 0.025 ? 1 : -1);
  return [low, high];
}

const values = new Map<string, number[]>(targets.map((t) => [t.id, saved?.values[t.id] ?? []]));
const trialLog = new Map<string, SavedTrial[]>(targets.map((t) => [t.id, saved?.trials?.[t.id] ?? []]));
const started = Date.now();
if (!saved) await runTrials();
const minutes = saved?.minutes ?? Math.round((Date.now() - started) / 60000);
if (o.json) {
  const out: Saved = { seconds: scenario.durationSeconds, warmup: scenario.warmupSeconds, cpus: quotas, image: o.image!, seed: Number(o.seed), minutes, values: Object.fromEntries(values), trials: Object.fromEntries(trialLog) };
  writeFileSync(o.json, JSON.stringify(out));
}

async function runTrials(): Promise<void> {
  const handles = new Map<string, BrokerHandle>();
  try {
    for (const t of targets) handles.set(t.id, await startDocker(t, { runId }));
    const plan = buildPlan([scenario], targets.map((t) => t.id), runs * n, Number(o.seed));
    let invalid = 0;
    for (const p of plan) {
      const r = await runTrial(p, handles.get(p.target)!, runId);
      // An invalid trial keeps its slot as NaN so blocks stay aligned; compare drops it.
      values.get(p.target)!.push(r.valid && metric in r.metrics ? r.metrics[metric] : NaN);
      trialLog.get(p.target)!.push({ order: p.order, at: Math.round(Date.parse(r.startedAt) - started) / 1000, perSecond: r.series.map((x) => [x.t, x.consumed]) });
      if (!r.valid) invalid++;
      if (p.order % (targets.length * n) === targets.length * n - 1) {
        console.error(`  gate run ${Math.round((p.order + 1) / (targets.length * n))}/${runs} done, ${Math.round((Date.now() - started) / 1000)} s, ${invalid} invalid trials`);
      }
    }
  } finally {
    for (const h of handles.values()) await h.stop();
  }
}

const a = values.get('A')!;
const rows: string[][] = [];
for (const t of targets.slice(1)) {
  const b = values.get(t.id)!;
  const trueEffect = median(b.filter(Number.isFinite)) / median(a.filter(Number.isFinite));
  let fails = 0;
  let warns = 0;
  const ciWidths: number[] = [];
  for (let g = 0; g < runs; g++) {
    const x = a.slice(g * n, (g + 1) * n).filter(Number.isFinite);
    const y = b.slice(g * n, (g + 1) * n).filter(Number.isFinite);
    const [c] = compareSamples({
      scenarios: [{ ...scenario, gate: [metric] }], against: 'A',
      candidate: { label: t.id, values: { [scenario.id]: { [metric]: y } } },
      reference: { label: 'A', values: { [scenario.id]: { [metric]: x } } },
    });
    if (c.verdict === 'fail') fails++;
    if (c.verdict === 'warn') warns++;
    if (c.ciLow !== null && c.ciHigh !== null) ciWidths.push((c.ciHigh - c.ciLow) * 100);
  }
  const [lo, hi] = clopperPearson(fails, runs);
  rows.push([t.label, `${((trueEffect - 1) * 100).toFixed(1)} %`, String(runs), `${fails}`, `${((fails / runs) * 100).toFixed(0)} % [${(lo * 100).toFixed(0)}, ${(hi * 100).toFixed(0)}]`, String(warns),
    ciWidths.length ? `${median(ciWidths).toFixed(0)} pts` : '–']);
}
const head = ['arm (vs A)', 'true effect', 'gate runs', 'fails', 'fail rate [95 % CI]', 'warns', 'median CI width'];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
console.log(`one_fast ${metric}, n = ${n} per side per gate run, ${scenario.warmupSeconds}+${scenario.durationSeconds} s trials, tolerance ${(toleranceFor(metric, scenario.tolerances) * 100).toFixed(0)} %, ${minutes} min of trials`);
const cv = (xs: number[]) => { const f = xs.filter(Number.isFinite); const m = f.reduce((s, x) => s + x, 0) / f.length; return Math.sqrt(f.reduce((s, x) => s + (x - m) ** 2, 0) / (f.length - 1)) / m; };
console.log(`per-trial CV: ${targets.map((t) => `${t.id} ${(cv(values.get(t.id)!) * 100).toFixed(1)} %`).join(', ')}`);
for (const r of [head, ...rows]) console.log(r.map((c, i) => c.padEnd(widths[i])).join('  '));
