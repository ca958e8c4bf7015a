// The one result schema. Every stage speaks these types: configuration produces ScenarioSpec and
// TargetSpec, the broker stage produces TargetInfo, the workload and metrics stages produce
// TrialResult, compare produces Comparison, and RunReport / Baseline are what the CLI, the action,
// the baseline file and every report format read and write. Bump SCHEMA_VERSION on any change
// that an older reader could misread: add its migration and update schema/report.schema.json and
// schema/baseline.schema.json (src/compare/stored.ts reads and checks both).

export const SCHEMA_VERSION = 1;

/** Which way is better for a metric. */
export type Direction = 'higher' | 'lower';
/** 'evidence': what moved inside the broker (src/metrics/evidence.ts), compared but never gating. */
export type MetricKind = 'throughput' | 'latency' | 'churn' | 'duration' | 'memory' | 'count' | 'evidence';

/** PerfTest's parameter object, in PerfTest's vocabulary (see docs/scenarios.md). */
export interface WorkloadParams {
  producers: number;
  consumers: number;
  /** Max outstanding unconfirmed publishes per producer (-c); null = no confirms. */
  confirm: number | null;
  /** Consumer prefetch (-q); null = unlimited. */
  qos: number | null;
  /** Ack every N messages with multiple=true (-A); 0 or 1 = ack each message. */
  multiAckEvery: number;
  autoAck: boolean;
  /** Per-producer msg/s (-r); null = as fast as possible. */
  rate: number | null;
  /** Per-producer interval in seconds between publishes (-P); overrides rate. */
  publishingInterval: number | null;
  /** Message body size in bytes (-s), at least 12: sequence + send timestamp. */
  size: number;
  persistent: boolean;
  mandatory: boolean;
  /** Single queue name (-u), used when queuePattern is null. */
  queue: string;
  /** printf-style queue name pattern (-qp), expanded from queuePatternFrom to queuePatternTo. */
  queuePattern: string | null;
  queuePatternFrom: number;
  queuePatternTo: number;
  queueArgs: Record<string, string | number | boolean>;
  exchange: string;
  exchangeType: string;
  /** Routing key; null = the queue name (PerfTest binds each queue with its own name). */
  routingKey: string | null;
  autoDelete: boolean;
  exclusive: boolean;
  /** Queues are declared elsewhere; do not declare or bind (-p). */
  predeclared: boolean;
  /** Consumers nack instead of ack (--nack), requeueing when `requeue`. */
  nack: boolean;
  requeue: boolean;
  /** Per-message properties (-mp), e.g. {expiration: "10000"}. */
  messageProperties: Record<string, string | number>;
  /** Seconds consumers wait before starting (-csd). */
  consumerStartDelay: number;
  /** Stop each producer after N messages (-C); 0 = unlimited. */
  producerMessageLimit: number;
}

/** Fields every scenario has, whatever its kind. */
interface ScenarioBase {
  id: string;
  description: string;
  /** Where it comes from: the original command line it trims. */
  origin: { source: string; command: string };
  workload: WorkloadParams;
  warmupSeconds: number;
  durationSeconds: number;
  /** Metrics the gate decides on (others are reported only). */
  gate: string[];
  /** Per-metric tolerance overrides, as a fraction (0.1 = 10 %). */
  tolerances: Record<string, number>;
  /** Per-metric equivalence margin overrides (green once the CI's bad end is inside; never below
   *  the tolerance; src/compare/margins.ts). */
  margins?: Record<string, number>;
  /** File the spec came from and the line of each top-level field, for annotations. */
  file: string;
  lines: Record<string, number>;
  /** Broker objects made before the trial (policies, dead-letter queues). */
  setup?: SetupSpec;
  /** Axis values this spec was expanded with, e.g. { size: 100, queue: 'quorum' }. */
  axes?: Record<string, string | number>;
  /** Factor applied to the original command's client/queue/message counts (1 = as published). */
  scale?: number;
  /** Honest deviations from the original (clamped sizes, trimmed rates). */
  notes?: string[];
}

/** One steady PerfTest run. */
export interface MessagingScenario extends ScenarioBase {
  kind: 'messaging';
}

/** Ordered runs on one topology (e.g. fill a backlog, then drain it). */
export interface PhasesScenario extends ScenarioBase {
  kind: 'phases';
  phases: PhaseSpec[];
}

/** Metadata churn for the measured window instead of messaging. */
export interface ChurnScenario extends ScenarioBase {
  kind: 'churn';
  churn: ChurnSpec;
}

/** A definitions import (and optionally its re-import), timed. */
export interface ImportScenario extends ScenarioBase {
  kind: 'import';
  import: ImportSpec;
}

/** N queues declared, then the node restarted (docker targets only). */
export interface RestartScenario extends ScenarioBase {
  kind: 'restart';
  restart: RestartSpec;
}

/** A workload over another protocol than AMQP 0-9-1 (streams, MQTT, AMQP 1.0; src/workload/protocols/). */
export interface ProtocolScenario extends ScenarioBase {
  kind: 'protocol';
  protocol: ProtocolSpec;
}

/**
 * What a trial runs, by `kind` (see docs/scenarios.md); each kind's own block is required on its
 * variant and absent on the others. Scenario files leave `kind` out (the parser derives it from
 * the block present); reports written before it was always set lack it for messaging scenarios,
 * which readers restore with withScenarioKind.
 */
export type ScenarioSpec = MessagingScenario | PhasesScenario | ChurnScenario | ImportScenario | RestartScenario | ProtocolScenario;

export type ScenarioKind = ScenarioSpec['kind'];

/** A scenario as stored by an older release: `kind` absent means 'messaging'. */
export type StoredScenarioSpec = ScenarioSpec | (Omit<MessagingScenario, 'kind'> & { kind?: undefined });

/** Restores the `kind` that older reports left out for messaging scenarios. */
export function withScenarioKind(s: StoredScenarioSpec): ScenarioSpec {
  return s.kind === undefined ? { ...s, kind: 'messaging' } : s;
}

export interface PhaseSpec {
  /** fill: publish, no consumers, until -C is reached or the window ends; drain: consume until the queues are empty. */
  role: 'fill' | 'drain';
  workload: WorkloadParams;
  /** drain only: the fill phase's producers keep publishing while this phase drains (consumers join late). */
  keepPublishing: boolean;
}

export interface ChurnSpec {
  /** queue: declare+delete; binding: bind a new key; connection: open+channel+close; channel: open+close. */
  object: 'queue' | 'binding' | 'connection' | 'channel';
  durable: boolean;
  /** Parallel loops, each on its own connection. */
  concurrency: number;
}

export interface ImportSpec {
  queues: number;
  bindingsPerQueue: number;
  /** 0 = into the trial's vhost; N = N vhosts named after the trial's (global endpoint), each with `queues`. */
  vhosts: number;
  queueType: 'classic' | 'quorum' | 'stream';
  reimport: boolean;
}

/** How a restart scenario restarts node 1: its container (docker stop / docker start: the Erlang
 *  VM and plugins boot too; single-node targets), or its RabbitMQ application (rabbitmqctl
 *  stop_app / start_app, as the Khepri roadmap timed it: the VM keeps running; clusters too). */
export type RestartMethod = 'container' | 'app';

export interface RestartSpec {
  /** Default 'container'. */
  method: RestartMethod;
  /** Queues declared in the trial's vhost before the node is restarted. */
  queues: number;
  queueType: 'classic' | 'quorum';
  /** false (classic only): transient queues, which a restart deletes; 0 are expected back. */
  durable: boolean;
  /** Persistent messages published to each queue before the restart (0 = none). */
  messagesPerQueue: number;
  /** Body size of those messages, in bytes. */
  messageSize: number;
}

/** The protocols besides AMQP 0-9-1 that a scenario can speak. */
export type ProtocolName = 'stream' | 'mqtt' | 'amqp-1.0';

/**
 * How a protocol scenario uses its protocol. The workload's producers, consumers, confirm window
 * (-c: unconfirmed stream publishes, unacknowledged MQTT QoS 1 publishes, unsettled AMQP 1.0
 * transfers), rate, size and queue (the stream, the MQTT topic, the AMQP 1.0 queue) apply as in
 * PerfTest's vocabulary.
 */
export type ProtocolSpec = StreamProtocol | MqttProtocol | Amqp10Protocol;

export interface StreamProtocol {
  name: 'stream';
  /** Messages per sub-entry (stream-perf-test --sub-entry-size); 1 = no sub-entry batching. */
  subEntrySize: number;
  /** Where consumers start: `next` (what is published from now on) or `first` (the stream's start). */
  offset: 'first' | 'next';
  /** Messages written to the stream before the trial's clients start (what offset `first` replays). */
  backlog: number;
  /** Stream filtering (3.13+): producers tag messages with one of N values, each consumer asks for
   *  one (stream-perf-test --filter-value-set / --filter-values); 0 = no filtering. */
  filterValues: number;
}

export interface MqttProtocol {
  name: 'mqtt';
  version: '3.1.1' | '5';
  /** QoS of publishes and subscriptions. */
  qos: 0 | 1;
  /** > 0: no messaging; this many idle connections are opened and the broker's memory per
   *  connection is measured (memory_per_connection_kib). */
  idleConnections: number;
}

export interface Amqp10Protocol {
  name: 'amqp-1.0';
  /** Messages put in the queue before the trial's clients start (what consume-only trials read). */
  backlog: number;
}

export interface SetupSpec {
  policies: Array<{ name: string; pattern: string; definition: Record<string, unknown>; applyTo: 'queues' | 'exchanges' | 'all'; priority: number }>;
  /** Durable queues declared first (PerfTest's declare_* runs), e.g. dead-letter queues. */
  queues: string[];
  /** Queue whose growth is reported as dead_lettered_rate. */
  deadLetterQueue?: string;
}

/** How a broker is obtained: an existing broker by URL, or containers started from an image. */
export type TargetSpec = UrlTargetSpec | DockerTargetSpec;

export interface UrlTargetSpec {
  id: string;
  label: string;
  kind: 'url';
  amqpUrl: string;
  managementUrl: string;
}

export interface DockerTargetSpec {
  id: string;
  label: string;
  kind: 'docker';
  image: string;
  /** Config files (rabbitmq.conf, advanced.config, definitions.json, enabled_plugins, conf.d/*.conf). */
  configFiles: string[];
  /** Cluster size; 1 = single node. */
  nodes: number;
  env: Record<string, string>;
  /** Container limits (docker --cpus / --memory), also making runs more repeatable. */
  cpus?: number;
  /** docker --cpuset-cpus: the host CPUs the broker runs on (e.g. "1"), to keep it off the load
   *  generator's core. */
  cpuset?: string;
  memory?: string;
  /** rabbitmqctl / rabbitmqadmin lines run after boot, before trials. */
  setup: string[];
  network: 'host' | 'bridge';
  /** false: no broker evidence (nothing switched on or read in the broker); default true. */
  evidence?: boolean;
}

export interface NodeInfo {
  name: string;
  memUsedBytes?: number;
  memLimitBytes?: number;
  processors?: number;
}

/** What a broker turned out to be, recorded in every report. Secrets are never stored here. */
export interface TargetInfo {
  id: string;
  label: string;
  kind: TargetSpec['kind'];
  /** AMQP URL with the password replaced by ***. */
  amqpUrl: string;
  managementUrl: string;
  image?: string;
  /** Docker targets: the image ID the reference named when the broker started (sha256:…), and the
   *  image's registry digests (repo@sha256:…; none for a local build). */
  imageId?: string;
  repoDigests?: string[];
  /** sha256 over the image reference and every config file's content. */
  configDigest?: string;
  rabbitmqVersion: string;
  erlangVersion: string;
  /** The metadata store (feature flag khepri_db enabled → khepri; absent or disabled → mnesia);
   *  undefined when the management API did not say. */
  metadataStore?: MetadataStore;
  nodes: NodeInfo[];
  /** What the broker really runs with, read back from it (src/broker/effective.ts). */
  effective?: EffectiveConfig;
  /** Where the broker speaks streams, MQTT and AMQP 1.0 ("host:port", read from its listeners;
   *  src/broker/endpoints.ts). */
  endpoints?: Partial<Record<ProtocolName, string>>;
  /** Which broker evidence this target provides (src/metrics/evidence.ts), and why not the rest. */
  evidence?: { sources: string[]; missing: Array<{ source: string; why: string }> };
  /** Docker targets: what the gate started the containers with, and where each value came from
   *  (src/broker/container-env.ts); secrets masked. */
  declared?: Declared;
}

/** Where a value a container started with came from: the image (its ENV, or a file it ships), the
 *  target file, the gate itself (cookie, node names, ports, its own plugins), or a scenario of the run. */
export type ValueSource = 'image' | 'target' | 'gate' | 'scenario';

/** One part of a declared value and where it came from (`where`: e.g. the image's rabbitmq-env.conf). */
export interface DeclaredPart {
  value: string;
  from: ValueSource;
  where?: string;
}

/** An environment variable of node 1's container: its value in parts (in order), and the values it
 *  replaced (the image's, overridden by the target file or by the gate). */
export interface DeclaredEnv {
  name: string;
  parts: DeclaredPart[];
  replaced?: DeclaredPart[];
}

/** What a docker target's containers were started with. */
export interface Declared {
  env: DeclaredEnv[];
  /** The enabled_plugins the gate wrote, each plugin with where it came from. */
  plugins: Array<{ name: string; from: ValueSource }>;
  /** The files in /etc/rabbitmq (relative paths): the image's kept, the target's, the gate's. */
  files: Array<{ path: string; from: ValueSource; replaces?: boolean }>;
}

/** The Erlang VM of node 1 as it runs (docker targets: read in the node with `rabbitmqctl eval`). */
export interface VmEffect {
  /** The emulator flags as the node started (its own command line), in order, as written for
   *  `erl`: "+S 2:1". Includes RabbitMQ's defaults (+P, +stbt, +sbwt, +MBas …). */
  emulatorFlags: string[];
  /** Each emulator flag's value in effect (later flags override earlier ones): {"+S": "2:1"}. */
  flags: Record<string, string>;
  /** The init flags (`-kernel net_ticktime 120`); the cookie, node name, ports and paths left out. */
  initArgs: string[];
  /** What the VM reports: OTP release, schedulers online and their bind type, busy wait, async
   *  threads, process/port/atom limits, each allocator's strategy. */
  info: Record<string, string>;
}

/** A target's configuration as read back from the broker, not as declared. */
export interface EffectiveConfig {
  rabbitmqVersion: string;
  erlangVersion: string;
  metadataStore?: string;
  /** Enabled feature flags (undefined when the management API did not say). */
  featureFlags?: string[];
  plugins?: string[];
  /** What every trial vhost inherits from the target's vhost, one line each. */
  vhost: string[];
  /** The node's `rabbit` application environment (docker targets), secrets masked. */
  node?: Record<string, string>;
  /** The Erlang VM as it runs: emulator flags, schedulers, limits, allocators (docker targets). */
  vm?: VmEffect;
  /** The plugins actually running in node 1 (docker targets; `plugins` is what the management
   *  API lists as enabled, which includes a plugin that failed to start or is not installed). */
  activePlugins?: string[];
  /** sha256 over all of the above except per-instance values (ports, node names). */
  digest: string;
}

/** One queue of a trial as the broker ran it (read after the window). */
export interface QueueEffect {
  name: string;
  type: string;
  /** Classic queue version: the broker's own (backing_queue_status) or what argument/policy set. */
  version?: number;
  policy?: string;
  operatorPolicy?: string;
  /** The effective policy definition. */
  definition?: Record<string, unknown>;
  arguments: Record<string, unknown>;
}

export type MetadataStore = 'mnesia' | 'khepri';

export interface Fingerprint {
  tool: string;
  toolVersion: string;
  node: string;
  os: string;
  kernel: string;
  cpuModel: string;
  cores: number;
  memoryBytes: number;
}

export interface SeriesPoint {
  /** Seconds since the measured window began (negative during warm-up). */
  t: number;
  published: number;
  confirmed: number;
  consumed: number;
}

export interface GeneratorLoad {
  /** CPU time of the generator process over the measured window, µs per consumed (or published) message. */
  cpuMicrosPerMessage: number;
  /** Generator CPU as a share of one core over the window (1.0 = one core busy). */
  cpuCores: number;
  eventLoopDelayP99Ms: number;
  /** True when the generator rather than the broker was the limit. */
  saturated: boolean;
  /**
   * The generator's client path: 'fast' (src/workload/wire.ts) or 'plain' amqplib APIs (its
   * internals changed, or RABBITMQ_PERF_GATE_PLAIN_AMQP=1; src/workload/wire-check.ts).
   */
  amqpPath?: 'fast' | 'plain';
  /** Protocol scenarios: the client library that drove the workload, with its version. */
  client?: string;
}

export interface TrialResult {
  scenario: string;
  target: string;
  /** 0-based index of this trial among the scenario × target's trials. */
  trial: number;
  /** Position in the run's interleaved order. */
  order: number;
  startedAt: string;
  valid: boolean;
  invalidReason?: string;
  /** metric id → value; see src/metrics/definitions.ts for ids, units and directions. */
  metrics: Record<string, number>;
  series: SeriesPoint[];
  /** Compressed base64 HdrHistograms (µs) for exact merging and percentile plots. */
  histograms: Record<string, string>;
  generator?: GeneratorLoad;
  error?: string;
  /** The first trial of each scenario × target: its queues as the broker ran them. */
  queues?: QueueEffect[];
  /** What moved inside the broker over the window (src/metrics/evidence.ts ids); absent where
   *  the target offers no evidence or the runner announces no window (node restarts). */
  evidence?: Record<string, number>;
  /** The first trial of each scenario × target: its largest queue processes as the window closed. */
  topQueues?: TopQueue[];
  /** How busy the machine was from the trial's start to its end (src/metrics/machine.ts). */
  machine?: MachineLoad;
}

/** The machine's CPU over an interval (src/metrics/machine.ts): all of it, and what neither this
 *  run's load generator nor its brokers used. Cores are averages over the interval. */
export interface MachineLoad {
  seconds: number;
  /** Cores busy on the whole machine (/proc/stat, every CPU). */
  busyCores: number;
  /** Of those, used by other containers and processes than this run's generator and brokers. */
  otherCores: number;
  /** Shares of the machine's CPU time spent in steal (a hypervisor's other guests) and iowait. */
  steal: number;
  iowait: number;
  /** Share of the interval in which some runnable task waited for a CPU (/proc/pressure/cpu),
   *  where the kernel has PSI. */
  cpuPressure?: number;
  /** The other load's largest users. */
  top?: LoadUser[];
}

/** Another container or process that used the machine's CPU during a run. */
export interface LoadUser {
  kind: 'container' | 'process';
  /** A container's name, or a process's command name. */
  name: string;
  /** Processes counted under a process name. */
  count?: number;
  /** Cores, averaged over the interval. */
  cores: number;
}

/** The machine around a run: at its start, over its trials, and the broker containers of other
 *  runs it found (src/metrics/machine.ts, src/broker/cleanup.ts). */
export interface MachineSummary {
  cores: number;
  /** Before this run's brokers started. */
  start?: MachineLoad;
  /** Over the trials: the other load's median and maximum (cores), the trials that ran on a busy
   *  machine, and the other load's largest users averaged over all trials. */
  trials?: { median: number; max: number; busy: number; of: number; top: LoadUser[] };
  /** Other load of at least this many cores counts as a busy machine (a tenth of the cores). */
  busyAbove: number;
  busy: boolean;
  /** Broker containers of other runs running when this run started (they take CPU and memory
   *  from its measurements), and those removed because their run's process was gone. */
  otherRuns?: string[];
  removed?: string[];
}

/** Folded stacks of a profile: "scheduler;$gen_server2:handle_msg/2;…" → samples (src/metrics/flame.ts). */
export type Folded = Record<string, number>;

/** A differential flame graph of one failing scenario: both targets' folded stacks. */
export interface FlameGraph {
  scenario: string;
  /** The same-run reference's id, and both labels. */
  against: string;
  candidateLabel: string;
  baselineLabel: string;
  candidate: Folded;
  baseline: Folded;
}

/** One queue process of a trial, by memory, with its reductions (management API). */
export interface TopQueue {
  name: string;
  memoryBytes: number;
  /** Since the queue was declared (in this trial). */
  reductions?: number;
  reductionsPerSecond?: number;
  messages?: number;
}

export type Verdict = 'pass' | 'warn' | 'fail' | 'inconclusive';
/**
 * What a gating metric (or a run) says in words (src/compare/compare.ts): 'regression' (red: the
 * whole CI beyond the tolerance — verdict fail), 'no-regression' (green: the CI's bad end, a
 * one-sided 95 % bound, inside the equivalence margin — "no regression of X % or more"; verdict
 * pass, or warn for a significant slowdown within that bound), 'undecided' (grey: neither yet).
 */
export type Answer = 'regression' | 'no-regression' | 'undecided';
export type Change = 'better' | 'worse' | 'same' | 'unknown';

export interface Comparison {
  scenario: string;
  metric: string;
  unit: string;
  direction: Direction;
  /** What the candidate was compared against: 'stored' baseline file or a same-run target id. */
  against: string;
  baselineLabel: string;
  candidateLabel: string;
  nBaseline: number;
  nCandidate: number;
  baselineMedian: number | null;
  candidateMedian: number | null;
  /** candidate / baseline (of medians, or the Hodges-Lehmann ratio when available). */
  ratio: number | null;
  ciLow: number | null;
  ciHigh: number | null;
  pValue: number | null;
  pAdjusted: number | null;
  tolerance: number;
  /** Equivalence margin (src/compare/margins.ts): green once the CI's bad end lies inside it.
   *  Absent in reports written before it existed. */
  equivalence?: number;
  /** The CI's bad end as a fraction in the bad direction (0.062: "no regression of 6.2 % or more"
   *  can be claimed; negative: better even at the bad end); null without a CI. */
  bound?: number | null;
  /** The answer this comparison gives (absent in older reports: derived from verdict). */
  answer?: Answer;
  change: Change;
  verdict: Verdict;
  /** The decision rule and why it gave this verdict, in one sentence. */
  reason: string;
  gating: boolean;
  /** True: same-run trials paired by round (signed-rank test, n = pairs on each side); false or
   *  absent (older reports): independent samples (Mann-Whitney U). */
  paired?: boolean;
  /** Stored-baseline gating comparisons: the smallest change (as a ratio) this comparison could
   *  fail on, from the baseline's spread and this run's n (src/compare/compare.ts); null when none
   *  could (too few trials, or this runner may only warn). */
  failsBeyond?: number | null;
}

export interface RunError {
  scope: string;
  message: string;
}

export interface RunReport {
  schemaVersion: number;
  tool: { name: string; version: string };
  createdAt: string;
  mode: 'check' | 'refresh' | 'run';
  fingerprint: Fingerprint;
  preset: string;
  repetitions: number;
  seed: number;
  scenarios: ScenarioSpec[];
  targets: TargetInfo[];
  /** The target whose trials are judged. */
  candidate: string;
  trials: TrialResult[];
  comparisons: Comparison[];
  /** Which comparison decided and why. */
  decidedBy: string;
  /** How the targets were chosen (e.g. a pull request's base vs head target files). */
  targetNote?: string;
  /** Line diff of the two target descriptions, when a same-run A/B compares different ones. */
  targetDiff?: string;
  /** Broker evidence compared like the reported-only metrics (same-run A/B only; never gating). */
  evidence?: Comparison[];
  /** Differential flame graphs of the failing scenarios (--flame-graph; src/metrics/flame.ts). */
  flames?: FlameGraph[];
  /** Why there is no (complete) flame graph although one was asked for. */
  flameNote?: string;
  /** Two targets read back from their brokers: identical in effect, or where they differ. */
  effectNote?: string;
  effectDiff?: string[];
  verdict: Verdict;
  /** The run's answer from its gating comparisons (absent in older reports). */
  answer?: Answer;
  regressions: number;
  improvements: number;
  errors: RunError[];
  durationSeconds: number;
  /** A refresh on a docker target: the broker its trials ran on, to be started again by checks. */
  anchor?: BrokerAnchor;
  /** A group-sequential same-run A/B: its looks and where each scenario stopped. */
  sequential?: SequentialSummary;
  /** How busy the machine was at the start and during the trials. */
  machine?: MachineSummary;
  /** A run that stopped early (interrupted, time limit): what `run --resume DIR` needs to go on. */
  resume?: ResumeRecord;
  /** A resumed run: each resumption, with the trials it kept from before. */
  resumed?: Array<{ at: string; kept: number }>;
  /** A nightly run (mode: nightly): the history's series with their change points. */
  nightly?: NightlySummary;
}

/**
 * What resuming a run that stopped early needs besides its trials, scenarios, seed and targets:
 * the targets as they were given (before an anchored reference was added), secrets masked (env
 * values of secret-looking names as "***", URL passwords as ***), and the options that shape
 * its plan and trials.
 */
export interface ResumeRecord {
  candidate: TargetSpec;
  reference?: TargetSpec;
  freezeIdle: boolean;
  anchor: boolean;
  failFast: boolean;
  flameGraph: boolean;
  /** The stored baseline file a CLI run read (set by the CLI). */
  baselineFile?: string;
  targetNote?: string;
  targetDiff?: string;
  /** Trials planned when it stopped. */
  planned: number;
  /** The order of the trial the stop cut short (run again on resume). */
  cut?: number;
}

/** How a sequential A/B went (src/compare/sequential.ts). */
export interface SequentialSummary {
  /** Pairs at which each scenario was judged; the last is the cap. */
  looks: number[];
  /** The nominal one-sided level of every look (α spent across the looks). */
  level: number;
  /** The gating metrics of the whole selection (Bonferroni factor; shards share it). */
  family: number;
  /** Reports before the equivalence margins (src/compare/margins.ts) took its place: one futility
   *  margin for every metric. */
  futility?: number;
  /** scenario id → the pairs it ran when it stopped (decided, or at the cap). */
  stopped: Record<string, number>;
  /** The fixed design's pairs this replaces, and the trial time saved against it (negative: spent). */
  fixedPairs: number;
  savedSeconds: number;
  /** Fail-fast: the scenario whose fail at a look ended the run (the verdict could no longer
   *  change), and that look's pairs; the scenarios still undecided stopped there. */
  failedFast?: { scenario: string; pairs: number };
}

/**
 * The broker a baseline's trials ran on, recorded by `refresh` so that a later `check` can start
 * it again next to its candidate and decide by a same-run A/B (src/broker/anchor.ts).
 */
export interface BrokerAnchor extends Pick<DockerTargetSpec, 'image' | 'nodes' | 'env' | 'cpus' | 'cpuset' | 'memory' | 'setup' | 'network'> {
  // `image` is as the target declared it (a tag may move later); in `env`, values of
  // secret-looking names are stored as "***" and replaced by fresh random values when the
  // broker is started again.
  /** What the tag named at the refresh: the image ID (sha256:…) and its registry digests. */
  imageId: string;
  repoDigests: string[];
  /** Config files by name (the provider lays them out by basename), content in base64. */
  configFiles: Array<{ name: string; base64: string }>;
  configDigest?: string;
}

export interface BaselineScenario {
  /** metric id → every valid trial's value. */
  metrics: Record<string, number[]>;
  /** The trials' warm-up and window (seconds); absent in files written before it was recorded. */
  window?: { warmupSeconds: number; durationSeconds: number };
}

export interface BaselineHistoryEntry {
  createdAt: string;
  commit?: string;
  /** scenario id → metric id → median, for trends. */
  medians: Record<string, Record<string, number>>;
}

export interface Baseline {
  schemaVersion: number;
  createdAt: string;
  commit?: string;
  fingerprint: Fingerprint;
  target: TargetInfo;
  repetitions: number;
  scenarios: Record<string, BaselineScenario>;
  history: BaselineHistoryEntry[];
  /** The broker the trials ran on, when this tool started it (absent: attached by URL, or a file
   *  written before baselines recorded their broker): checks start it again and A/B against it. */
  anchor?: BrokerAnchor;
}

// --- Nightly history (src/compare/history-file.ts, src/compare/changepoint.ts) ---

/** A gating metric's paired ratio against the fixed reference broker on one night. */
export interface NightlyRatio {
  /** candidate / reference: the Hodges-Lehmann ratio of the night's pairs. */
  ratio: number;
  ciLow: number | null;
  ciHigh: number | null;
  pairs: number;
}

/**
 * One night of a nightly history: the baseline history's medians, plus what cancels the runner's
 * drift — each gating metric's paired ratio against a fixed reference broker started in the same
 * job (the stored baseline's anchored broker, its image ID recorded).
 */
export interface NightlyEntry extends BaselineHistoryEntry {
  /** The night's image as named, the image ID it resolved to, and its source commit when known
   *  (input `revision`, or the image's org.opencontainers.image.revision label). */
  image?: string;
  imageId?: string;
  revision?: string;
  /** The reference broker the ratios are against; ratios under another reference are another series. */
  reference?: { image: string; imageId?: string; label: string };
  /** scenario → its gating metrics (the series change points are looked for in). */
  gate?: Record<string, string[]>;
  /** scenario → gating metric → the paired ratio; absent when no reference could be started. */
  ratios?: Record<string, Record<string, NightlyRatio>>;
  verdict?: Verdict;
  runUrl?: string;
  /** Why the night has no ratios (the reference could not be started), in one sentence. */
  note?: string;
}

/** A step change point found in a nightly series and reported once. */
export interface NightlyStep {
  scenario: string;
  metric: string;
  /** The series it was found in: paired ratios, or absolute medians when there are none. */
  series: 'ratio' | 'median';
  /** createdAt of the last night before the step and of the first night after it. */
  before: string;
  at: string;
  /** Mean after / mean before − 1, and whether that is the metric's bad direction. */
  magnitude: number;
  worse: boolean;
  pValue: number;
  /** createdAt of the night whose run first reported it. */
  foundAt: string;
}

/** The nightly history file (.github/rabbitmq-perf/history.json): bounded, oldest first. */
export interface NightlyHistory {
  schemaVersion: number;
  kind: 'rabbitmq-perf-gate/nightly-history';
  entries: NightlyEntry[];
  /** Steps already reported, so a step is announced once. */
  steps: NightlyStep[];
}

/** One gating metric's series as a nightly run judged it (for the summary and the HTML chart). */
export interface NightlySeries {
  scenario: string;
  metric: string;
  series: 'ratio' | 'median';
  points: Array<{ createdAt: string; value: number; ciLow?: number | null; ciHigh?: number | null; image?: string; revision?: string }>;
  /** Steps found in it now (new or already reported), by the index of the first point after. */
  steps: Array<NightlyStep & { index: number; isNew: boolean }>;
}

/** What a nightly run adds to its report: the series with their steps, and the new steps. */
export interface NightlySummary {
  /** The history file, as the workflow names it. */
  file: string;
  nights: number;
  series: NightlySeries[];
  newSteps: NightlyStep[];
  /** Per new step, the command (and action inputs) that would bisect between its two nights. */
  bisect: Array<{ scenario: string; metric: string; command: string; note?: string }>;
  /** Why there are no ratios tonight, or other notes, one sentence each. */
  notes: string[];
}

// --- Bisect (src/compare/bisect.ts) ---

/** One image of a bisect's ordered list, with the commit it was built from when known. */
export interface BisectImage {
  image: string;
  commit?: string;
  subject?: string;
}

/** good: no regression against the good end (verdict pass); bad: a regression (fail); undecided:
 *  warn or inconclusive (repeated, widened); skipped: the image could not be pulled or booted. */
export type BisectOutcome = 'good' | 'bad' | 'undecided' | 'skipped';

/** One step of a bisect: a same-run paired A/B of one image against the good end. */
export interface BisectStep {
  index: number;
  image: string;
  /** The ends check: the known-bad end A/B'd against the known-good end before the search — does
   *  the range regress, and by how much (the midpoint later steps are judged at). */
  ends?: boolean;
  /** 1 for the first A/B of this image, 2 for its repeat, … */
  attempt: number;
  outcome: BisectOutcome;
  verdict?: Verdict;
  /** The gating comparison that says most: the worst fail, else the widest bad end. */
  scenario?: string;
  metric?: string;
  ratio?: number | null;
  ciLow?: number | null;
  ciHigh?: number | null;
  pairs?: number;
  /** The design it ran: group-sequential looks, or fixed pairs. */
  looks?: number[];
  repetitions?: number;
  seed?: number;
  seconds: number;
  startedAt: string;
  /** Why it was skipped or undecided, in one sentence. */
  note?: string;
  /** Every gating comparison of the step, for the report's detail. */
  gating?: Array<{ scenario: string; metric: string; ratio: number | null; ciLow: number | null; ciHigh: number | null; verdict: Verdict; pairs: number }>;
  /** The step's report.json, relative to the state file's folder. */
  report?: string;
}

/** A bisect's resumable state (written after every step) — the report is computed from it. */
export interface BisectState {
  schemaVersion: number;
  kind: 'rabbitmq-perf-gate/bisect-state';
  /** sha256 over what defines the search (images, scenarios, trial lengths, design): a state file
   *  is resumed only by the same search. */
  key: string;
  createdAt: string;
  updatedAt: string;
  /** The ordered images: [0] the known-good end, the last the known-bad end. */
  images: BisectImage[];
  scenarios: string;
  duration?: number;
  warmup?: number;
  looks?: number[];
  repetitions?: number;
  /** A/Bs an image gets before it is left undecided. */
  attempts: number;
  /** The git range the images stand for, when built from one. */
  range?: { repo?: string; spec: string; template: string };
  steps: BisectStep[];
  /** Wall seconds spent over all sessions. */
  seconds: number;
}

/** Where a bisect stands. */
export interface BisectStatus {
  /** found: one first-bad image; ambiguous: only skipped or undecided images are left between the
   *  last good and the first bad (the first bad is one of `suspects`); running: images are left to
   *  test (the search stopped at its time limit or was interrupted); no-regression: the ends check
   *  found the known-bad end no worse than the known-good end (nothing to search). */
  state: 'found' | 'ambiguous' | 'running' | 'no-regression';
  lastGood: number;
  firstBad: number;
  culprit?: number;
  suspects: number[];
  skipped: number[];
  undecided: number[];
  /** A/B runs (each a verdict, decided or not), skips not counted. */
  verdicts: number;
  /** What the ends check measured and how later steps are judged (absent before it, or when it
   *  did not show a regression to size). */
  calibration?: BisectCalibration;
}

/** Later steps of a bisect, sized by its ends check: only the scenarios that regressed between the
 *  ends are A/B'd, each regressed gating metric judged at the geometric midpoint of its step (a
 *  regression beyond it is bad, a CI whose bad end stays inside it good), so an image like either
 *  end is told apart at the first looks. */
export interface BisectCalibration {
  /** scenario → metric → the threshold, as a fraction in the bad direction (tolerance = margin). */
  thresholds: Record<string, Record<string, number>>;
  /** The step each regressed metric showed between the ends, and its threshold. */
  steps: Array<{ scenario: string; metric: string; ratio: number; threshold: number }>;
}

/** A bisect's report: its state, where it stands, why it stopped, and the commits the culprit stands for. */
export interface BisectReport {
  kind: 'rabbitmq-perf-gate/bisect';
  tool: { name: string; version: string };
  createdAt: string;
  state: BisectState;
  status: BisectStatus;
  /** Why this session ended before the search did: the time limit, or an interruption. */
  stopped?: string;
  /** The commits between the last good and the first bad image (git range), when known. */
  commits?: { range: string; count: number; list: Array<{ sha: string; subject: string }> };
  fingerprint?: Fingerprint;
}
