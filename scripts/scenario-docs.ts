// Renders docs/scenarios.md from the catalogue: presets, the scenario file format, metrics, the
// accepted PerfTest flags and, per scenario file, what it measures, its origin command and its
// trimmed parameters. A docs generator, not shipped code (neither the action nor the CLI imports
// it): scripts/gen-scenario-docs.mjs writes the file; a unit test fails when it is stale.
import type { ScenarioSpec, WorkloadParams } from '../src/schema/types';
import { METRICS } from '../src/metrics/definitions';
import { EVIDENCE } from '../src/metrics/evidence';
import { buildPlan, estimateSeconds, trialSeconds } from '../src/plan/plan';
import { defaultRepetitions } from '../src/compare/compare';
import { abEstimate } from '../src/compare/sequential';
import { catalogueIds, loadPresets, resolveScenarios } from '../src/config/catalogue';
import { PERF_TEST_FLAGS, perfTestDefaults } from '../src/config/perftest-args';

const FORMAT = `## How a scenario file works

A scenario file (\`scenarios/<id>.yml\`, validated against \`schema/scenario.schema.json\`; errors
name the file, line and field) describes one workload in PerfTest's vocabulary:

- \`origin\`: where it comes from and the original, untrimmed command line(s). For
  rabbitmq/testing that is the \`main/script.sh\` line verbatim followed by the wrapper's classic
  queue flags (\`-ad false -f persistent\`), main.yaml's first size (\`-s 100\`) and
  \`TIME_PER_TEST\` (\`--time 300\`); the wrapper's reporting flags are left out.
- \`perf-test\`: the trimmed command. Unknown flags are errors (see the list below); \`workload:\`
  fields override what it sets.
- \`scale\` (with \`scaled\`): one factor on the original's counts — producers, consumers, queues
  of a \`-qp\` pattern, \`-C\` message counts, import sizes — so 7000 publishers at scale 0.05 run as
  350. Counts never drop below 1. Tests multiply it further to run smoke-sized.
- \`axes\`: \`size\` and \`queueType\` lists; the file expands to one scenario per combination, with
  ids like \`throughput_by_size[size=100,queue=quorum]\`. \`classic\` keeps the file's queue as
  written, \`classic-v1\`/\`classic-v2\` add \`x-queue-version\` (RabbitMQ 3.10+), \`quorum\` and
  \`stream\` apply PerfTest's \`--quorum-queue\` / \`--stream-queue\` (streams are consumed over AMQP
  0-9-1 with \`x-stream-offset=next\`). Sizes below 12 bytes run as 12 — the body carries a 4-byte
  sequence and an 8-byte send time, PerfTest's own minimum — the id says 12 and a note says so.
- \`phases\`: a \`fill\` (publish, no consumers, until every producer's \`-C\` is confirmed or
  warm-up + window end) optionally followed by a \`drain\` (consume until the queues are empty;
  \`keepPublishing: true\` keeps the fill's publishers going, for consumers that join late). They
  run in one trial on one topology and report \`fill_rate\` and \`drain_rate\` (timed from the first
  delivery). rabbitmq/testing runs such pairs as consecutive commands sharing a queue
  (two_publishers_no_consumers → one_consumer_no_publishers, publish_to_nack → nack_published);
  here each trial runs in its own throw-away vhost in a randomised interleaved order, so a
  cross-scenario \`requires:\` would break both isolation and the order — the pair is one scenario.
  A drain that does not finish within 60 s makes the trial invalid.
- \`setup\`: policies (the suite's \`rabbitmqadmin declare policy\`) and durable queues (its
  \`declare_*_dlq\` runs) made in the trial's vhost first; \`deadLetterQueue\` reports that queue's
  growth as \`dead_lettered_rate\`.
- \`churn\` / \`import\`: metadata workloads instead of messaging (see the metrics below).
- \`restart\`: node start time with N queues. Each trial declares \`queues\` queues (\`queueType\`
  classic or quorum, \`durable\`, optionally \`messagesPerQueue\` persistent messages each) in its
  vhost, restarts node 1 by \`method\` — \`container\` (the default: \`docker stop\` with a 60 s
  grace period, then \`docker start\`; the VM and plugins boot too; the container keeps its data,
  so policies and feature flags such as Khepri survive) or \`app\` (\`rabbit:stop()\` and
  \`rabbit:start()\`, what rabbitmqctl stop_app / start_app call, timed inside the node as the
  Khepri roadmap timed them; the VM stays up) — and reports \`node_stop_seconds\`,
  \`node_start_seconds\` (until AMQP and the management API answer and every queue is listed
  again) and \`recovered_queues\`. A queue or message that does not come back, or a node that had
  to be killed, makes the trial invalid. Only docker targets can be restarted, and only
  single-node ones by their container (a cluster's nodes share one container's epmd): elsewhere
  these scenarios are skipped on every target with a warning and a note in the report, which does
  not change the verdict. The window is unused; a restart takes what it takes.
- \`protocol\`: the workload over another protocol, through the same trial, metrics and compare
  pipeline (src/workload/protocols/: a driver per protocol under one engine). \`name: stream\`
  (the stream protocol, rabbitmq-stream-js-client; \`subEntrySize\`, \`offset\` first/next,
  \`backlog\` written before the trial for \`first\` to replay, \`filterValues\` for stream
  filtering), \`name: mqtt\` (mqtt.js; \`version\` 3.1.1 or 5, \`qos\` 0 or 1 — 1 by default when
  the workload has a confirm window —, \`idleConnections\` for memory per connection instead of
  messaging) or \`name: amqp-1.0\` (rhea, on RabbitMQ 4.x's native AMQP 1.0; queues on the
  \`/queues/<name>\` address, \`-q\` as receiver credit). \`-x\`, \`-y\`, \`-c\` (unconfirmed stream
  publishes, unacknowledged QoS 1 publishes, unsettled transfers), \`-r\`, \`-s\` and \`-u\` (the
  stream, the topic \`perf-gate/<queue>\`, the AMQP 1.0 queue) keep their meaning; PerfTest flags no
  protocol has (\`-qp\`, \`-t\`, \`--nack\`, \`-A\`, …) are errors. Axes \`protocol\` (the same
  workload over \`amqp-0-9-1\`, \`amqp-1.0\`, \`stream\`, \`mqtt\`), \`subEntrySize\` (streams) and
  \`qos\` (MQTT). The docker provider enables \`rabbitmq_stream\` / \`rabbitmq_mqtt\` when the run
  has such scenarios and gives each its own port; a target that lacks the listener or the version
  (AMQP 1.0 from 4.0, stream filtering and MQTT 5 from 3.13) skips the scenario on every target
  with a warning and a note, as restarts are skipped (docs/targets.md).
- \`warmup\`, \`duration\` (seconds; presets and \`--warmup\`/\`--duration\` override them), \`gate\`
  (metrics the verdict uses; others are reported), \`tolerances\`, \`notes\` (how it was trimmed).

Fixed-rate scenarios (\`-r\`/\`-P\` with consumers) measure latency from each message's *intended*
send time and are **invalid** — reported, never averaged in — when the publishers reach less than
95 % of their target rate, or when the backlog grows across the window by more than max(100,
5 % of the messages routed in it): the queues' ready depth (passive declares at the window's
edges) or, for direct and fanout routing, messages routed minus messages consumed (which also
catches messages an unlimited-prefetch consumer holds unacknowledged).
`;

const fmt = (v: unknown) =>
  typeof v === 'object' && v !== null
    ? Object.entries(v)
        .map(([k, x]) => `${k}=${x}`)
        .join(',')
    : String(v);

/** The workload's parameters that differ from PerfTest's defaults, as `name value` pairs. */
export function changedParams(w: WorkloadParams): string {
  const d = perfTestDefaults(w.queue) as unknown as Record<string, unknown>;
  return Object.entries(w)
    .filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(d[k]) || k === 'producers' || k === 'consumers')
    .map(([k, v]) => `${k} ${fmt(v)}`)
    .join(' · ');
}

function scenarioSection(specs: ScenarioSpec[]): string[] {
  const s = specs[0];
  const id = s.id.replace(/\[.*$/, '');
  const out = [`### ${id}`, '', s.description, ''];
  const first = specs.length > 1 ? `, first variant ${s.id.slice(id.length)}` : '';
  const time = s.kind === 'restart' ? `about ${Math.round(trialSeconds(s))} s per trial` : `warm-up ${s.warmupSeconds} s + window ${s.durationSeconds} s`;
  out.push(`- **Gate:** ${s.gate.map((g) => `\`${g}\``).join(', ')} · ${time}${s.kind !== 'messaging' ? ` · kind ${s.kind}` : ''}`);
  out.push(`- **Origin:** ${s.origin.source}`, '', '  ```', ...s.origin.command.split('\n').map((l) => `  ${l}`), '  ```', '');
  if (s.kind === 'churn') out.push(`- **Churn:** ${fmt(s.churn)}`);
  else if (s.kind === 'import') out.push(`- **Import:** ${fmt(s.import)}`);
  else if (s.kind === 'restart') out.push(`- **Restart:** ${fmt(s.restart)}`);
  else if (s.kind === 'protocol') out.push(`- **Protocol${first}:** ${fmt(s.protocol)}`, `- **Trimmed${first}:** ${changedParams(s.workload)}`);
  else if (s.kind === 'phases') for (const p of s.phases) out.push(`- **${p.role}${p.keepPublishing ? ' (publishers keep going)' : ''}${first}:** ${changedParams(p.workload)}`);
  else out.push(`- **Trimmed${first}:** ${changedParams(s.workload)}`);
  if (s.setup) out.push(`- **Setup:** ${[...s.setup.policies.map((p) => `policy ${p.name} (${p.pattern}: ${fmt(p.definition)})`), ...s.setup.queues.map((q) => `queue ${q}`)].join('; ')}`);
  if (s.scale) out.push(`- **Scale:** ${s.scale}`);
  if (specs.length > 1) out.push(`- **Variants (${specs.length}):** ${specs.map((x) => `\`${x.id}\``).join(', ')}`);
  for (const n of [...new Set(specs.flatMap((x) => x.notes ?? []))]) out.push(`- ${n}`);
  return [...out, ''];
}

export function renderScenarioDocs(): string {
  const out = ['# Scenarios', '', '<!-- Generated by scripts/gen-scenario-docs.mjs from scenarios/*.yml; do not edit by hand. -->', ''];
  out.push('## Presets', '', '| preset | scenarios | default trials: vs stored / A/B (pairs) | minutes: stored check / A/B | ids |', '|---|---|---|---|---|');
  for (const p of loadPresets()) {
    const specs = resolveScenarios(p.name).scenarios;
    const alone = defaultRepetitions(specs);
    const ab = abEstimate(specs, p.pairs, p.looks);
    const min = (s: number) => Math.ceil(s / 60);
    const seq = ab.looks ? `; sequential ${ab.looks[0]}–${ab.looks.at(-1)}` : '';
    const abMin = ab.looks ? `~${min(ab.firstSeconds!)}–${min(ab.capSeconds!)} (fixed ~${min(ab.seconds)})` : `~${min(ab.seconds)}`;
    out.push(`| \`${p.name}\` | ${specs.length} | ${alone} / ${ab.pairs}${seq} | ~${min(estimateSeconds(buildPlan(specs, ['t'], alone, 1)))} / ${abMin} | ${p.scenarios.join(', ')} |`);
  }
  out.push(
    '',
    'Estimates are warm-up + window + 0.5 s per trial (restarts: boot + queues, see `restart`); drains and imports take what they take. A sequential A/B (`looks:` in presets.yml) stops each scenario once decided: from every scenario stopping at the first look to all running to the cap (docs/statistics.md).',
    '',
    FORMAT,
  );
  out.push('## Metrics', '', '| id | unit | kind | better |', '|---|---|---|---|');
  for (const m of METRICS.filter((x) => x.kind !== 'evidence')) out.push(`| \`${m.id}\` | ${m.unit} | ${m.kind} | ${m.direction} |`);
  out.push(
    '',
    '### Broker evidence',
    '',
    "What moved inside the broker over each trial's window: compared like the reported-only metrics in a same-run A/B, shown next to a failing or warned gating metric, never gating (docs/evidence.md).",
    '',
    '| id | unit | better | source | how it is captured |',
    '|---|---|---|---|---|',
  );
  for (const e of EVIDENCE) out.push(`| \`${e.id}\` | ${e.unit} | ${e.direction} | ${e.source} | ${e.capture} |`);
  out.push('', '## PerfTest flags accepted by `perf-test:`', '');
  for (const f of PERF_TEST_FLAGS) out.push(`- ${f.aliases.map((a) => `\`${a}\``).join(' ')}${f.ignored ? ' (accepted and ignored: output and multi-instance options)' : ''}`);
  out.push('', 'Anything else is an error naming the file and line.', '', '## Catalogue', '');
  for (const id of catalogueIds()) out.push(...scenarioSection(resolveScenarios(id).scenarios));
  return (
    out
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trimEnd() + '\n'
  );
}
