// Proof of power for the gate's decision rule, on real brokers. Containers from one image run at
// once: A and A2 (identical: an A/A pair) and B1, B2, … slowed broker-side by a CPU quota (docker
// --cpus, a cgroup knob on the broker only; the load generator is untouched). Every arm's trial
// runs next to a trial of A (bench/lib/power-plan.ts), as the product's A/B runs a round's two
// targets back to back (files saved before that ran all four in one shuffled block); every
// `n` rounds make one gate run per arm — A2 vs A must never fail, B vs A should — decided by the
// real compare stage over all the selected scenarios' gating metrics (Holm across them), in the
// same-run design (paired by round). The same trials are also decided as independent samples
// (exact Mann-Whitney U, the stored-baseline test, without its allowance) for contrast. The true
// size of each slowdown is the median of its per-round log ratios over the whole run.
// Run through bench/power.mjs; prints false-fail and detection rates with Clopper-Pearson CIs.
// `--json FILE` saves every trial's value; `--from FILE` re-decides saved trials without brokers
// (e.g. with another `--tolerance` or `--n`), so a rule change is judged on the same data; it also
// keeps each trial's per-second rates, and `--statistic median` re-decides with each trial's rate
// taken as the median of its per-second rates instead of the window's mean. `--resample K` adds
// K bootstrap gate runs per arm and n drawn from the measured rounds, and the smallest slowdown
// caught 80 % / 95 % of the time, by shifting the A/A pairs (bench/lib/resample.ts).
import { readFileSync, writeFileSync } from 'node:fs';
import { startDocker } from '../src/broker/docker';
import type { BrokerHandle } from '../src/broker/provider';
import { focusOn } from '../src/broker/focus';
import { resolveScenarios } from '../src/config/catalogue';
import { compareSamples, overallVerdict } from '../src/compare/compare';
import { median } from '../src/compare/stats';
import { toleranceFor } from '../src/compare/margins';
import { runTrial } from '../src/workload/trial';
import type { Comparison, DockerTargetSpec, ScenarioSpec, TrialResult } from '../src/schema/types';
import { packagePath } from '../src/config/paths';
import { benchArgs, headerOf, IMAGES, list, numberList, optional } from './lib/args.mjs';
import { clopperPearson } from './lib/binomial';
import { powerPlan } from './lib/power-plan';
import { printResampled } from './lib/resample';

const { values: o } = benchArgs(
  {
    scenarios: list('one_fast,one_one_one'),
    runs: 30,
    n: 8,
    seconds: 5,
    warmup: 1,
    cpus: numberList('1.3,1.2'),
    'base-cpus': optional('number'),
    image: IMAGES.v3,
    seed: 20261123,
    tolerance: optional('number'),
    json: optional(),
    from: optional(),
    'no-freeze': false,
    statistic: 'mean',
    resample: 0,
    'resample-n': numberList('8,10,12,14,16'),
  },
  { script: 'power', help: headerOf(packagePath('bench/power.mjs')) },
);

/** Every trial's gating values, by target, scenario and metric, in round order (NaN = invalid). */
interface Saved {
  scenarios: string[];
  seconds: number;
  warmup: number;
  cpus: number[];
  baseCpus?: number;
  image: string;
  seed: number;
  minutes: number;
  /** Idle brokers were frozen during each trial (absent in files from before freezing existed). */
  frozen?: boolean;
  /** Each arm's trial ran next to one of A's (A2's reference stored as A0); absent before that. */
  adjacent?: boolean;
  values: Record<string, Record<string, Record<string, number[]>>>;
  /** Per round, the per-second rates (msg/s) of each rate metric inside the window. */
  perSecond?: Record<string, Record<string, Record<string, number[][]>>>;
}
const saved: Saved | undefined = o.from ? JSON.parse(readFileSync(o.from, 'utf8')) : undefined;
const n = o.n;
const ids = saved?.scenarios ?? o.scenarios;
const scenarios: ScenarioSpec[] = resolveScenarios(ids.join(',')).scenarios.map((s) => ({
  ...s,
  durationSeconds: saved?.seconds ?? o.seconds,
  warmupSeconds: saved?.warmup ?? o.warmup,
  tolerances: o.tolerance ? Object.fromEntries(s.gate.map((m) => [m, o.tolerance!])) : s.tolerances,
}));
const quotas = saved?.cpus ?? o.cpus;
const baseCpus = saved ? saved.baseCpus : o['base-cpus'] || undefined;
const target = (id: string, cpus?: number): DockerTargetSpec => ({
  id,
  label: cpus ? `${id} (--cpus ${cpus})` : id,
  kind: 'docker',
  image: o.image,
  configFiles: [],
  nodes: 1,
  env: {},
  setup: [],
  network: 'host',
  cpus,
});
const targets = [target('A', baseCpus), target('A2', baseCpus), ...quotas.map((c, i) => target(`B${i + 1}`, c))];
const runId = `power${process.pid}`;

const adjacent = saved ? saved.adjacent === true : true;
/** The reference of an arm's pairs: the A trial next to it. */
const refOf = (arm: string) => (adjacent && arm === 'A2' ? 'A0' : 'A');
const slots = [...targets.map((t) => t.id), ...(adjacent ? ['A0'] : [])];
const empty = () => Object.fromEntries(slots.map((id) => [id, Object.fromEntries(scenarios.map((s) => [s.id, {}]))]));
const perSecond: NonNullable<Saved['perSecond']> = saved?.perSecond ?? empty();
if (o.statistic !== 'mean' && o.statistic !== 'median') throw new Error('--statistic must be mean or median');
// --statistic median: each trial's rate is the median of its per-second rates, not the window's mean.
const values: Saved['values'] = saved && o.statistic === 'median' ? medians(saved) : (saved?.values ?? empty());

function medians(from: Saved): Saved['values'] {
  if (!from.perSecond) throw new Error(`${o.from} has no per-second rates: --statistic median needs a file saved by this version`);
  return Object.fromEntries(
    Object.entries(from.values).map(([t, byScenario]) => [
      t,
      Object.fromEntries(
        Object.entries(byScenario).map(([sc, byMetric]) => [
          sc,
          Object.fromEntries(
            Object.entries(byMetric).map(([m, v]) => {
              const secs = from.perSecond![t]?.[sc]?.[m];
              return [m, secs ? v.map((x, i) => (Number.isFinite(x) && secs[i]?.length ? median(secs[i]) : x)) : v];
            }),
          ),
        ]),
      ),
    ]),
  );
}

/** Rates (msg/s) of each whole sampling interval inside the window, for the series' `field`. */
function windowRates(series: TrialResult['series'], field: 'consumed' | 'published', seconds: number): number[] {
  const out: number[] = [];
  for (let i = 1; i < series.length; i++) {
    const dt = series[i].t - series[i - 1].t;
    if (series[i - 1].t >= -0.05 && series[i].t <= seconds + 0.5 && dt > 0) out.push(series[i][field] / dt);
  }
  return out;
}
const runs = saved ? Math.floor(values.A[scenarios[0].id][scenarios[0].gate[0]].length / n) : o.runs;
const started = Date.now();
if (!saved) await runTrials();
const minutes = saved?.minutes ?? Math.round((Date.now() - started) / 60000);
if (!saved) save(minutes);

/** Writes the trials so far to --json (after every gate run, so a cut-short run keeps its data). */
function save(mins: number): void {
  if (!o.json) return;
  const out: Saved = {
    scenarios: ids,
    seconds: scenarios[0].durationSeconds,
    warmup: scenarios[0].warmupSeconds,
    cpus: quotas,
    baseCpus,
    image: o.image,
    seed: o.seed,
    minutes: mins,
    values,
    perSecond,
    frozen: !o['no-freeze'],
    adjacent,
  };
  writeFileSync(o.json, JSON.stringify(out));
}

async function runTrials(): Promise<void> {
  const handles = new Map<string, BrokerHandle>();
  try {
    for (const t of targets) handles.set(t.id, await startDocker(t, { runId }));
    const focus = focusOn([...handles.values()], (m) => console.error(m), !o['no-freeze']);
    const plan = powerPlan(
      scenarios,
      'A',
      'A2',
      targets.slice(2).map((t) => t.id),
      runs * n,
      o.seed,
    );
    const perGateRun = plan.length / runs;
    let invalid = 0;
    for (const p of plan) {
      await focus.on(handles.get(p.target)!);
      const r = await runTrial(p, handles.get(p.target)!, runId);
      // An invalid trial keeps its round's slot as NaN: the pair is dropped, the blocks stay aligned.
      for (const m of p.scenario.gate) {
        (values[p.slot][p.scenario.id][m] ??= [])[p.trial] = r.valid && m in r.metrics ? r.metrics[m] : NaN;
        const field = m === 'consumed_rate' ? 'consumed' : m === 'published_rate' ? 'published' : undefined;
        if (field) (perSecond[p.slot][p.scenario.id][m] ??= [])[p.trial] = windowRates(r.series, field, p.scenario.durationSeconds);
      }
      if (!r.valid) invalid++;
      if ((p.order + 1) % perGateRun === 0) {
        console.error(`  gate run ${(p.order + 1) / perGateRun}/${runs} done, ${Math.round((Date.now() - started) / 1000)} s, ${invalid} invalid trials`);
        save(Math.round((Date.now() - started) / 60000));
      }
    }
  } finally {
    for (const h of handles.values()) await h.stop();
  }
}

/** One gate run of `arm` against A over rounds [g·n, (g+1)·n). */
function gateRun(arm: string, g: number, paired: boolean): Comparison[] {
  const slice = (id: string) =>
    Object.fromEntries(
      scenarios.map((s) => [
        s.id,
        Object.fromEntries(
          s.gate.map((m) => {
            const v = values[id][s.id][m].slice(g * n, (g + 1) * n);
            return [m, paired ? v : v.filter(Number.isFinite)];
          }),
        ),
      ]),
    );
  return compareSamples({ scenarios, against: 'A', paired, candidate: { label: arm, values: slice(arm) }, reference: { label: 'A', values: slice(refOf(arm)) } });
}

const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;
const rate = (k: number, total: number) => {
  const [lo, hi] = clopperPearson(k, total);
  return `${k}/${total} = ${Math.round((k / total) * 100)} % [${Math.round(lo * 100)}, ${Math.round(hi * 100)}]`;
};
console.log(`${ids.join(' + ')}: gating ${scenarios.map((s) => `${s.id}/${s.gate.join(',')} (tolerance ${Math.round(toleranceFor(s.gate[0], s.tolerances) * 100)} %)`).join(', ')}`);
console.log(
  `n = ${n} rounds per gate run, ${runs} gate runs, ${scenarios[0].warmupSeconds}+${scenarios[0].durationSeconds} s trials, ${minutes} min of trials${baseCpus ? `, A and A2 at --cpus ${baseCpus}` : ''}, idle brokers ${(saved ? saved.frozen : !o['no-freeze']) ? 'frozen' : 'running'} during each trial, each trial's rate the ${o.statistic === 'median' ? 'median of its per-second rates' : "window's mean"}`,
);
const head = ['arm (vs A)', 'true effect per scenario', 'paired: fails', 'warns', 'inconcl.', 'independent: fails'];
const rows: string[][] = [];
for (const t of targets.slice(1)) {
  const effects = scenarios
    .map((s) => {
      const a = values[refOf(t.id)][s.id][s.gate[0]];
      const d = values[t.id][s.id][s.gate[0]].map((v, i) => Math.log(v / a[i])).filter(Number.isFinite);
      return `${s.id} ${pct(Math.exp(median(d)) - 1)}`;
    })
    .join(', ');
  const verdicts = Array.from({ length: runs }, (_, g) => overallVerdict(gateRun(t.id, g, true)));
  const independent = Array.from({ length: runs }, (_, g) => overallVerdict(gateRun(t.id, g, false)));
  const count = (vs: string[], v: string) => vs.filter((x) => x === v).length;
  rows.push([t.label, effects, rate(count(verdicts, 'fail'), runs), String(count(verdicts, 'warn')), String(count(verdicts, 'inconclusive')), rate(count(independent, 'fail'), runs)]);
}
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
for (const r of [head, ...rows]) console.log(r.map((c, i) => c.padEnd(widths[i])).join('  '));
// Per-metric detail of the paired design: how often each gating metric failed, per arm.
for (const t of targets.slice(1)) {
  const per = scenarios.flatMap((s) =>
    s.gate.map((m) => {
      const cs = Array.from({ length: runs }, (_, g) => gateRun(t.id, g, true).find((c) => c.scenario === s.id && c.metric === m)!);
      const widthsPts = cs.filter((c) => c.ciLow !== null).map((c) => (c.ciHigh! - c.ciLow!) * 100);
      return `${s.id}/${m}: ${cs.filter((c) => c.verdict === 'fail').length} fails, median CI ${median(widthsPts).toFixed(1)} pts`;
    }),
  );
  console.log(`  ${t.id}: ${per.join('; ')}`);
}
if (o.resample > 0) {
  const arms = targets.slice(1).map((t) => ({ id: t.id, label: t.label, ref: refOf(t.id) }));
  printResampled({ scenarios, values, arms, k: o.resample, ns: o['resample-n'], seed: o.seed });
}
