#!/usr/bin/env node
// The pair-to-pair spread of same-run A/As, from the reports they wrote (issue 32: what keeps a
// 5 % change out of reach is this spread, not the rules). For each scenario's gating metric, over
// every pair of every report given: the spread of the pair log ratios (SD and 1.4826 × MAD, in %),
// and the spread left after each adjustment that cannot remove a real broker effect because it
// does not depend on the broker:
//   order   the period effect of a crossover: which target ran first in the pair (the plan
//           randomises it), fitted as one shift per scenario;
//   named   CUPED-style regression on the pair's difference in the CPU of the other processes and
//           containers named in each trial's machine load (machine.top: their own CPU time), plus
//           steal and iowait; θ fitted per scenario by least squares;
//   quiet   no adjustment, only the pairs in which neither trial saw other load of --quiet cores or
//           more (machine.otherCores; 0.2 = the gate's "busy" mark on 2 cores): the spread left when
//           disturbed pairs are dropped (or re-run), and how many were;
//   other   the same with machine.otherCores instead: everything busy but this run's generator and
//           brokers, which includes the kernel's work for the run's own traffic, so it may move with
//           a real broker effect: shown to judge, not to adopt unless the effect survives it.
// Each adjustment also prints the effect it estimates (the mean pair ratio, the intercept after
// adjusting): on a real regression, an adjustment that moves it is not exogenous.
// With each spread, the pairs a green answer needs at the pr design's per-look level: the n at
// which z·σ/√n (the CI's bad end of an A/A) reaches the 10 % equivalence margin, ln 1.10.
// Pairs are the rounds where both targets have a valid trial of the scenario.
// Reports may be gzipped (the ledgers keep them so: bench/lib/strip-report.mjs).
//   node_modules/.bin/node bench/pair-spread.mjs REPORT.json[.gz]|DIR ... [--level 0.0127] [--quiet 0.2]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { benchArgs } from './lib/args.mjs';
import { mad, mean, sd } from './lib/common.mjs';

const { values: o, positionals } = benchArgs({ level: 0.0127, quiet: 0.2 }, { positionals: true });
/** A pair is quiet when neither trial saw this much other load (cores; the gate's "busy" mark is 10 % of the cores). */
const quietBelow = o.quiet;
if (!positionals.length) {
  console.error('usage: bench/pair-spread.mjs REPORT.json|DIR ... [--level 0.0127]');
  process.exit(2);
}

const files = positionals.flatMap(function walk(p) {
  return statSync(p).isDirectory() ? readdirSync(p).flatMap((f) => walk(join(p, f))) : p.endsWith('.json') || p.endsWith('.json.gz') ? [p] : [];
});

/** Rows: one per pair, with its log ratio, who ran first, and the covariate differences. */
const rows = new Map();
let reports = 0;
for (const f of files) {
  let r;
  try {
    r = JSON.parse(f.endsWith('.gz') ? gunzipSync(readFileSync(f)).toString('utf8') : readFileSync(f, 'utf8'));
  } catch {
    continue;
  }
  if (!Array.isArray(r.trials) || !Array.isArray(r.targets) || r.targets.length !== 2) continue;
  reports++;
  const cand = r.candidate;
  for (const s of r.scenarios) {
    const metric = s.gate[0];
    if (!metric) continue;
    const byRound = new Map();
    for (const t of r.trials) if (t.scenario === s.id && t.valid) (byRound.get(t.trial) ?? byRound.set(t.trial, []).get(t.trial)).push(t);
    for (const pair of byRound.values()) {
      if (pair.length !== 2) continue;
      const c = pair.find((t) => t.target === cand);
      const b = pair.find((t) => t.target !== cand);
      if (!c || !b || !(c.metrics[metric] > 0) || !(b.metrics[metric] > 0)) continue;
      const m = (t, k) => t.machine?.[k] ?? 0;
      const named = (t) => (t.machine?.top ?? []).reduce((a, u) => a + u.cores, 0);
      const key = `${s.id} ${metric}`;
      (rows.get(key) ?? rows.set(key, []).get(key)).push({
        y: Math.log(c.metrics[metric] / b.metrics[metric]),
        first: c.order < b.order ? 1 : -1,
        quiet: Math.abs(m(c, 'otherCores') - m(b, 'otherCores')) < quietBelow,
        named: [named(c) - named(b), m(c, 'steal') - m(b, 'steal'), m(c, 'iowait') - m(b, 'iowait')],
        other: [m(c, 'otherCores') - m(b, 'otherCores'), m(c, 'steal') - m(b, 'steal'), m(c, 'iowait') - m(b, 'iowait')],
      });
    }
  }
}

/** Least squares of y on the columns of X (with an intercept): the residuals (keeping the
 *  intercept) and the intercept, the effect estimated at no covariate difference. */
function leastSquares(y, X) {
  // A covariate that never varies (no machine data) is left out.
  const cols = [y.map(() => 1), ...X[0].map((_, j) => X.map((r) => r[j])).filter((c) => c.some((v) => v !== c[0]))];
  const k = cols.length;
  const A = cols.map((a) => cols.map((b) => a.reduce((s, v, i) => s + v * b[i], 0)));
  const z = cols.map((a) => a.reduce((s, v, i) => s + v * y[i], 0));
  // Gauss-Jordan on the normal equations (k ≤ 5).
  for (let i = 0; i < k; i++) {
    let p = i;
    for (let r = i + 1; r < k; r++) if (Math.abs(A[r][i]) > Math.abs(A[p][i])) p = r;
    [A[i], A[p]] = [A[p], A[i]];
    [z[i], z[p]] = [z[p], z[i]];
    if (Math.abs(A[i][i]) < 1e-12) continue;
    for (let r = 0; r < k; r++) {
      if (r === i) continue;
      const f = A[r][i] / A[i][i];
      for (let c = i; c < k; c++) A[r][c] -= f * A[i][c];
      z[r] -= f * z[i];
    }
  }
  const beta = z.map((v, i) => (Math.abs(A[i][i]) < 1e-12 ? 0 : v / A[i][i]));
  // The residuals keep the intercept (the A/A's own mean ratio): only the spread changes.
  return { residuals: y.map((v, i) => v - cols.reduce((s, col, j) => s + (j ? beta[j] * col[i] : 0), 0)), effect: beta[0], k };
}

// z of the one-sided per-look level.
const level = o.level;
const zOf = (p) => {
  let lo = 0,
    hi = 10;
  for (let i = 0; i < 100; i++) {
    const mid = (lo + hi) / 2;
    const tail = 0.5 * erfc(mid / Math.SQRT2);
    if (tail > p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
};
function erfc(x) {
  const t = 1 / (1 + 0.5 * x);
  return (
    t *
    Math.exp(
      -x * x - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    )
  );
}
const z = zOf(level);
const need = (s) => Math.ceil(((z * s) / Math.log(1.1)) ** 2);
const pct = (v) => `${(100 * v).toFixed(1)} %`;

console.log(`${reports} report(s) of same-run A/Bs; per-look one-sided level ${level} (z = ${z.toFixed(2)})`);
console.log(
  'per scenario and adjustment: the effect (mean pair ratio, %), the spread of the pair log ratios as SD (df-corrected) [robust 1.4826·MAD], and the pairs an A/A of that spread needs for a 10 % bound',
);
const ADJUST = {
  raw: () => [],
  order: (r) => [r.first],
  named: (r) => r.named,
  'order+named': (r) => [r.first, ...r.named],
  other: (r) => r.other,
};
console.log(['scenario metric', 'pairs', ...Object.keys(ADJUST), 'quiet pairs only'].join('\t'));
for (const [key, rs] of [...rows].sort()) {
  const y = rs.map((r) => r.y);
  const cells = Object.values(ADJUST).map((cov) => {
    const X = rs.map(cov);
    const f = X[0].length ? leastSquares(y, X) : { residuals: y, effect: mean(y), k: 1 };
    const s = sd(f.residuals) * Math.sqrt((y.length - 1) / Math.max(1, y.length - f.k));
    return `${f.effect >= 0 ? '+' : ''}${pct(Math.exp(f.effect) - 1)} ${pct(s)} [${pct(mad(f.residuals))}] n${need(s)}`;
  });
  const q = rs.filter((r) => r.quiet).map((r) => r.y);
  const quietCell = q.length > 2 ? `${pct(Math.exp(mean(q)) - 1)} ${pct(sd(q))} [${pct(mad(q))}] n${need(sd(q))} (${q.length} of ${rs.length})` : `(${q.length} of ${rs.length})`;
  console.log([key, rs.length, ...cells, quietCell].join('\t'));
}
