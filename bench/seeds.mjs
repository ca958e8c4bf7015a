#!/usr/bin/env node
// The seeds' quantitative claims (../shared/seeds: the Khepri roadmap 000, the CloudAMQP Khepri vs
// Mnesia post 001, the RabbitMQ 3.12 post 002 and its native-MQTT post, the RabbitMQ 3.13
// classic-queue post 004), re-measured as same-run A/Bs with
// the bundled CLI on the two offline images, and written as docs/seeds.md's table.
//
//   node_modules/.bin/node bench/seeds.mjs [--pairs 6] [--only khepri-import,cqv2-3.10,...] [--write]
//   node_modules/.bin/node bench/seeds.mjs --from bench/results/seeds/seeds-DATE.json [--write]   (re-render; DATE is the UTC day the run ended)
//
// With --only, the new rows replace those of the same runs in the newest earlier results file
// (--merge FILE to name another), so one re-measured row does not drop the rest of the table.
//
// Each run starts its two targets from target files written here (rabbitmq-perf-gate/rabbitmq:
// 3.10.8 and 4.0.5; Khepri by `rabbitmqctl enable_feature_flag --opt-in khepri_db`, classic queue
// v2 on 3.10.8 by a target policy), runs its scenarios paired by round, and reads each row's
// metric from report.json: the Hodges-Lehmann ratio candidate / reference with its 90 % CI, n
// pairs, and whether its direction agrees with the seed's. Results go to
// bench/results/seeds/seeds-<date>.json; --write replaces the table between the markers in docs/seeds.md.
// A long run (about 30 minutes at 6 pairs on 2 cores, plus about 45 for the 3-node stop_app /
// start_app row at 10,000 queues) is expected.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchArgs, IMAGES, list, optional } from './lib/args.mjs';
import { ROOT } from './lib/common.mjs';

const { values: opt } = benchArgs({ pairs: 6, only: list([]), write: false, from: optional(), merge: optional() });

const { v3: V3, v4: V4 } = IMAGES;
const TARGETS = {
  mnesia: `label: mnesia\nimage: ${V4}\n`,
  khepri: `label: khepri\nimage: ${V4}\nsetup:\n  - rabbitmqctl enable_feature_flag --opt-in khepri_db\n`,
  // The roadmap's import figures are from a 3-node cluster: Mnesia's cost there is its
  // distributed transactions, which a single node does not have (docs/seeds.md, Scales).
  mnesia3: `label: mnesia, 3 nodes\nimage: ${V4}\nnodes: 3\n`,
  khepri3: `label: khepri, 3 nodes\nimage: ${V4}\nnodes: 3\nsetup:\n  - rabbitmqctl enable_feature_flag --opt-in khepri_db\n`,
  'cqv1-3.10': `label: 3.10.8 CQv1\nimage: ${V3}\n`,
  'cqv2-3.10': `label: 3.10.8 CQv2\nimage: ${V3}\nsetup:\n  - rabbitmqctl set_policy cqv2 ".*" '{"queue-version":2}' --apply-to queues\n`,
  '4.0.5': `label: 4.0.5\nimage: ${V4}\n`,
  '3.10.8': `label: 3.10.8\nimage: ${V3}\n`,
};

// Scenario files of this bench (message sizes of the 3.13 post that the catalogue's one_fast
// does not vary), next to catalogue scenarios named by id.
const perfScenario = (id, flags, gate, description) =>
  [
    `id: ${id}`,
    `description: ${description}`,
    'origin:',
    '  source: RabbitMQ 3.13 classic queues post (seed 004), rabbitmq/testing main/script.sh',
    `  command: perf-test ${flags}`,
    `perf-test: ${flags}`,
    'warmup: 2',
    'duration: 6',
    `gate: [${gate}]`,
    '',
  ].join('\n');
const SCENARIO_FILES = {
  'one_fast_100.yml': perfScenario('one_fast_100', '-x 1 -y 1 -c 3000 -u q -qa x-max-length=5000000 -ad false -f persistent -s 100', 'consumed_rate', '1 publisher, 1 queue, 1 consumer, 100 B'),
  'one_fast_5k.yml': perfScenario('one_fast_5k', '-x 1 -y 1 -c 3000 -u q -qa x-max-length=5000000 -ad false -f persistent -s 5000', 'consumed_rate', '1 publisher, 1 queue, 1 consumer, 5 kB'),
  'publish_only_100.yml': perfScenario('publish_only_100', '-x 2 -y 0 -c 3000 -u q -ad false -f persistent -s 100', 'published_rate', '2 publishers, 1 queue, no consumers, 100 B'),
  'publish_only_5k.yml': perfScenario('publish_only_5k', '-x 2 -y 0 -c 3000 -u q -ad false -f persistent -s 5000', 'published_rate', '2 publishers, 1 queue, no consumers, 5 kB'),
};

// Node start at 10× the catalogue's queues (node_start_classic_queues runs 1,000 in the metadata
// preset), restarting a single node's container.
const RESTART_FILES = {
  'node_start_10k.yml': [
    'id: node_start_10k',
    'description: Restart a node holding 10,000 durable classic queues and time its start until every queue is back.',
    'origin:',
    '  source: Khepri roadmap (seed 000) "100,000 Classic Queues" start_app, at a tenth of the queues on one node',
    '  command: rabbitmqctl stop_app; rabbitmqctl start_app',
    'restart:',
    '  queues: 10000',
    '  queueType: classic',
    '  durable: true',
    '',
  ].join('\n'),
};
// The seed's own setting: stop_app / start_app of node 1 of a 3-node cluster (restart.method: app),
// at START_APP_QUEUES of its 100,000 classic queues (what 2 cores declare, restart and delete
// in a few minutes per trial).
const START_APP_QUEUES = 10000;
const START_APP_FILES = {
  'start_app_3n.yml': [
    'id: start_app_3n',
    `description: Stop and start node 1's application (stop_app, start_app) in a 3-node cluster holding ${START_APP_QUEUES} durable classic queues.`,
    'origin:',
    `  source: Khepri roadmap (seed 000) "100,000 Classic Queues" stop_app / start_app on 3 nodes, at ${START_APP_QUEUES / 1000}k queues`,
    '  command: rabbitmqctl stop_app; rabbitmqctl start_app',
    'restart:',
    '  method: app',
    `  queues: ${START_APP_QUEUES}`,
    '  queueType: classic',
    '  durable: true',
    '',
  ].join('\n'),
};

// seedRatio: the seed's candidate / reference figure (null: the seed gives a direction only).
// better: which side the seed says wins ('candidate' | 'reference' | 'same').
const RUNS = [
  {
    id: 'khepri-import',
    candidate: 'khepri3',
    reference: 'mnesia3',
    scenarios: 'import_queues_bindings',
    rows: [
      { metric: 'import_seconds', seed: '000', claim: 'first import, 1000 queues × 100 bindings: Mnesia 446 s, Khepri 51 s', seedRatio: 51 / 446, better: 'candidate' },
      { metric: 'reimport_seconds', seed: '000', claim: 're-import of the same: Mnesia 16 s, Khepri 46 s', seedRatio: 46 / 16, better: 'reference' },
    ],
  },
  {
    id: 'khepri-import-1node',
    candidate: 'khepri',
    reference: 'mnesia',
    scenarios: 'import_queues_bindings',
    rows: [
      { metric: 'import_seconds', seed: '000', claim: 'first import (seed: 3 nodes), here on one node', seedRatio: 51 / 446, better: 'candidate' },
      { metric: 'reimport_seconds', seed: '000', claim: 're-import (seed: 3 nodes), here on one node', seedRatio: 46 / 16, better: 'reference' },
    ],
  },
  {
    id: 'khepri-churn',
    candidate: 'khepri',
    reference: 'mnesia',
    scenarios: 'queue_churn_durable,queue_churn_transient',
    rows: [
      { metric: 'queue_churn_ops', scenario: 'queue_churn_durable', seed: '001', claim: 'durable queue create/delete: Khepri outperforms Mnesia', seedRatio: null, better: 'candidate' },
      { metric: 'queue_churn_ops', scenario: 'queue_churn_transient', seed: '001', claim: 'transient queue create/delete: Mnesia performs better', seedRatio: null, better: 'reference' },
    ],
  },
  {
    id: 'khepri-node-start',
    candidate: 'khepri',
    reference: 'mnesia',
    scenarios: 'node_start_classic_queues',
    rows: [{ metric: 'node_start_seconds', seed: '000', claim: '100,000 classic queues, start_app: Mnesia 26 s, Khepri 40 s', seedRatio: 40 / 26, better: 'reference' }],
  },
  {
    id: 'khepri-node-start-10k',
    candidate: 'khepri',
    reference: 'mnesia',
    scenarios: 'restart-files',
    rows: [
      {
        metric: 'node_start_seconds',
        scenario: 'node_start_10k',
        seed: '000',
        claim: '100,000 classic queues, start_app: Mnesia 26 s, Khepri 40 s (here 10,000 on one node)',
        seedRatio: 40 / 26,
        better: 'reference',
      },
    ],
  },
  {
    id: 'khepri-start-app-3n',
    candidate: 'khepri3',
    reference: 'mnesia3',
    scenarios: 'start-app-files',
    rows: [
      {
        metric: 'node_stop_seconds',
        scenario: 'start_app_3n',
        seed: '000',
        claim: `100,000 classic queues, stop_app on 3 nodes: Mnesia 13 s, Khepri 6 s (here ${START_APP_QUEUES / 1000}k)`,
        seedRatio: 6 / 13,
        better: 'candidate',
      },
      {
        metric: 'node_start_seconds',
        scenario: 'start_app_3n',
        seed: '000',
        claim: `100,000 classic queues, start_app on 3 nodes: Mnesia 26 s, Khepri 40 s (here ${START_APP_QUEUES / 1000}k)`,
        seedRatio: 40 / 26,
        better: 'reference',
      },
    ],
  },
  {
    id: 'cqv2-3.10',
    candidate: 'cqv2-3.10',
    reference: 'cqv1-3.10',
    scenarios: 'files',
    rows: [
      { metric: 'consumed_rate', scenario: 'one_fast_100', seed: '004', claim: 'publish+consume 100 B: CQv2 significantly better than CQv1', seedRatio: null, better: 'candidate' },
      { metric: 'consumed_rate', scenario: 'one_fast_5k', seed: '004', claim: 'publish+consume 5 kB: CQv2 superiority visible even in 3.12', seedRatio: null, better: 'candidate' },
      { metric: 'published_rate', scenario: 'publish_only_100', seed: '004', claim: 'publish only 100 B: CQv2 blows CQv1 out of the water', seedRatio: null, better: 'candidate' },
      { metric: 'published_rate', scenario: 'publish_only_5k', seed: '004', claim: 'publish only 5 kB: CQv2 superiority visible even in 3.12', seedRatio: null, better: 'candidate' },
    ],
  },
  {
    id: 'v4-vs-3.10-cqv1',
    candidate: '4.0.5',
    reference: 'cqv1-3.10',
    scenarios: 'files',
    rows: [
      {
        metric: 'consumed_rate',
        scenario: 'one_fast_100',
        seed: '004',
        claim: 'publish+consume 100 B: CQv2 on 3.13 vs CQv1 on 3.12 "may almost double the throughput"',
        seedRatio: 2,
        better: 'candidate',
      },
      { metric: 'consumed_rate', scenario: 'one_fast_5k', seed: '004', claim: 'publish+consume 5 kB: 3.13 CQv2 wins by a large margin', seedRatio: null, better: 'candidate' },
      {
        metric: 'published_rate',
        scenario: 'publish_only_100',
        seed: '004',
        claim: 'publish only 100 B: "more than 250 % higher throughput" (3.13 CQv2 vs 3.12 CQv1)',
        seedRatio: 3.5,
        better: 'candidate',
      },
      { metric: 'published_rate', scenario: 'publish_only_5k', seed: '004', claim: 'publish only 5 kB: 3.13 CQv2 wins by a large margin', seedRatio: null, better: 'candidate' },
    ],
  },
  {
    id: 'native-mqtt',
    candidate: '4.0.5',
    reference: '3.10.8',
    scenarios: 'mqtt_idle_connections',
    rows: [
      {
        metric: 'memory_per_connection_kib',
        seed: '002',
        claim: 'native MQTT (3.12; its own post): 1,000,000 idle connections 301.1 GiB on 3.11, 18.7 GiB on 3.12 (−94 %); here 2,000 on one node, 3.10.8 vs 4.0.5',
        seedRatio: 18.7 / 301.1,
        better: 'candidate',
      },
    ],
  },
];

const CLI = join(ROOT, 'dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'perf-gate-seeds-'));
for (const [name, text] of Object.entries(TARGETS)) writeFileSync(join(dir, `${name}.yml`), text);
// Each folder of this bench's own scenario files, by the name a run gives in `scenarios`.
const DIRS = { files: SCENARIO_FILES, 'restart-files': RESTART_FILES, 'start-app-files': START_APP_FILES };
for (const [key, files] of Object.entries(DIRS)) {
  DIRS[key] = join(dir, `scenarios-${key}`);
  execFileSync('mkdir', ['-p', DIRS[key]]);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(DIRS[key], name), text);
}

const only = opt.only.length ? new Set(opt.only) : undefined;
// --from FILE: re-render the table from an earlier run's results (bench/results/seeds/seeds-*.json).
const results = opt.from ? JSON.parse(readFileSync(opt.from, 'utf8')).results : [];
for (const run of opt.from ? [] : RUNS.filter((r) => !only || only.has(r.id))) {
  const started = Date.now();
  const args = [
    'run',
    '--target',
    `${run.candidate}.yml`,
    '--baseline-target',
    `${run.reference}.yml`,
    '--scenarios',
    DIRS[run.scenarios] ?? run.scenarios,
    '--repetitions',
    String(opt.pairs),
    '--baseline-file',
    'none.json',
    '--no-sequential',
    '--json',
    '--out',
    join(dir, `out-${run.id}`),
  ];
  process.stderr.write(`== ${run.id}: ${run.candidate} vs ${run.reference}, ${run.scenarios}, ${opt.pairs} pairs\n`);
  let report;
  try {
    report = JSON.parse(execFileSync(process.execPath, [CLI, ...args], { cwd: dir, encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'inherit'] }));
  } catch (e) {
    // Exit 1 is a regression verdict, still a report.
    if (e.status === 1 && e.stdout) report = JSON.parse(e.stdout);
    else {
      process.stderr.write(`${run.id} failed: ${e.message}\n`);
      continue;
    }
  }
  for (const row of run.rows) {
    const scenario = row.scenario ?? run.scenarios;
    const c = report.comparisons.find((x) => x.scenario === scenario && x.metric === row.metric && x.against !== 'stored');
    const trial = report.trials.find((t) => t.scenario === scenario && t.queues)?.queues;
    results.push({
      run: run.id,
      ...row,
      scenario,
      candidate: TARGETS[run.candidate].split('\n')[0].slice(7),
      reference: TARGETS[run.reference].split('\n')[0].slice(7),
      ratio: c?.ratio ?? null,
      ciLow: c?.ciLow ?? null,
      ciHigh: c?.ciHigh ?? null,
      n: c?.nCandidate ?? 0,
      direction: c?.direction,
      medians: c ? [c.candidateMedian, c.baselineMedian] : null,
      queues: trial ?? null,
      minutes: (Date.now() - started) / 60000,
    });
  }
}

/**
 * Does the measured direction agree with the seed's? Read from the 90 % CI of the ratio (the
 * table's own interval; a row's Holm-corrected verdict may be out of reach at a few pairs): the
 * whole CI on the seed's side → yes; on the other side → no; straddling 1 → not resolved.
 */
function agreement(x) {
  if (x.ratio === null || x.ciLow === null) return 'no data';
  const lower = (x.direction ?? (/_seconds$/.test(x.metric) ? 'lower' : 'higher')) === 'lower';
  const candidateBetter = lower ? x.ciHigh < 1 : x.ciLow > 1;
  const candidateWorse = lower ? x.ciLow > 1 : x.ciHigh < 1;
  if (!candidateBetter && !candidateWorse) return x.better === 'same' ? 'yes' : 'not resolved (CI includes 1)';
  return candidateBetter === (x.better === 'candidate') ? 'yes' : 'no (opposite)';
}
// A partial run (--only) keeps the other runs' rows of the newest earlier results file, in their order.
if (only && !opt.from) {
  const earlier =
    opt.merge ??
    readdirSync(join(ROOT, 'bench/results/seeds'))
      .filter((f) => /^seeds-\d{4}-\d\d-\d\d\.json$/.test(f))
      .sort()
      .map((f) => join(ROOT, 'bench/results/seeds', f))
      .at(-1);
  if (earlier) {
    const old = JSON.parse(readFileSync(earlier, 'utf8')).results;
    const fresh = results.splice(0);
    const runsDone = new Set(fresh.map((x) => x.run));
    for (const x of old) {
      if (!runsDone.has(x.run)) results.push(x);
      else if (!results.some((y) => y.run === x.run)) results.push(...fresh.filter((y) => y.run === x.run));
    }
    results.push(...fresh.filter((y) => !results.includes(y)));
    process.stderr.write(`kept the other runs' rows from ${earlier}\n`);
  }
}
const r2 = (x) => (x === null || x === undefined ? '–' : x.toFixed(2));
const table = [
  '| Seed | Claim | Scenario (scale) | Candidate / reference | Seed ratio | Measured ratio [90 % CI] | n pairs | Direction agrees |',
  '|---|---|---|---|--:|--:|--:|---|',
  ...results.map(
    (x) =>
      `| ${x.seed} | ${x.claim} | ${x.scenario} · ${x.metric} | ${x.candidate} / ${x.reference} | ${x.seedRatio ? r2(x.seedRatio) : 'direction'} | ${r2(x.ratio)} [${r2(x.ciLow)}, ${r2(x.ciHigh)}] | ${x.n} | ${agreement(x)} |`,
  ),
].join('\n');
console.log(table);
const stamp = new Date().toISOString().slice(0, 10);
if (!opt.from) writeFileSync(join(ROOT, `bench/results/seeds/seeds-${stamp}.json`), JSON.stringify({ pairs: opt.pairs, results }, null, 1));
if (opt.write) {
  const file = join(ROOT, 'docs/seeds.md');
  const doc = readFileSync(file, 'utf8');
  const begin = '<!-- seeds-table:begin -->';
  const end = '<!-- seeds-table:end -->';
  writeFileSync(file, `${doc.slice(0, doc.indexOf(begin) + begin.length)}\n${table}\n${doc.slice(doc.indexOf(end))}`);
  process.stderr.write(`docs/seeds.md updated\n`);
}
