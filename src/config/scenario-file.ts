// Scenario files: YAML validated against schema/scenario.schema.json, every error reported with
// file, line and field. A file's `perf-test:` line is translated first, then `workload:` fields
// override it, so users can paste PerfTest commands from RabbitMQ's blog posts. A file may hold
// `phases:` (fill, then drain), `churn:`, `import:` or `restart:` instead of one messaging run, and
// expands over `axes:` (size × queue type) after `scale:` trims its counts (see src/config/axes.ts).
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';
import { LineCounter, parseDocument, isMap, isPair, isScalar, type Document } from 'yaml';
import type {
  ChurnScenario,
  ChurnSpec,
  ImportScenario,
  ImportSpec,
  MessagingScenario,
  PhaseSpec,
  PhasesScenario,
  ProtocolScenario,
  RestartScenario,
  RestartSpec,
  ScenarioKind,
  ScenarioSpec,
  SetupSpec,
  WorkloadParams,
} from '../schema/types';
import { CHURN_METRIC, DEFAULT_GATE, isKnownMetric } from '../metrics/definitions';
import { isEvidence } from '../metrics/evidence';
import { GateError, type Where } from '../schema/errors';
import { applyPerfTestArgs, perfTestDefaults, type RunFlags } from './perftest-args';
import { applyQueueType, DEFAULT_SCALED, expandAxes, scaleImport, scaleRestart, scaleWorkload, type Axes, type Scalable } from './axes';
import { packagePath } from './paths';
import { checkProtocolWorkload, parseProtocol, type RawProtocol } from './protocol';

interface RawWorkload {
  'perf-test'?: string;
  workload?: Partial<WorkloadParams>;
}
interface RawPhase extends RawWorkload {
  role: PhaseSpec['role'];
  keepPublishing?: boolean;
}
interface RawPolicy {
  name: string;
  pattern: string;
  definition: Record<string, unknown>;
  'apply-to'?: SetupSpec['policies'][number]['applyTo'];
  priority?: number;
}
interface RawScenario extends RawWorkload {
  id: string;
  description: string;
  origin: { source: string; command: string };
  warmup?: number;
  duration?: number;
  gate?: string[];
  tolerances?: Record<string, number>;
  margins?: Record<string, number>;
  phases?: RawPhase[];
  churn?: Partial<ChurnSpec> & Pick<ChurnSpec, 'object'>;
  import?: Partial<ImportSpec> & Pick<ImportSpec, 'queues'>;
  restart?: Partial<RestartSpec> & Pick<RestartSpec, 'queues'>;
  protocol?: RawProtocol;
  setup?: { policies?: RawPolicy[]; queues?: string[]; deadLetterQueue?: string };
  axes?: Axes;
  scale?: number;
  scaled?: Scalable[];
  notes?: string[];
}

export interface LoadOptions {
  /** Multiplies the `scale:` of files that declare one (tests use it to run thousands of clients small). */
  scale?: number;
}

let validator: ReturnType<Ajv['compile']> | undefined;
function validate(data: unknown): ErrorObject[] {
  if (!validator) {
    const schema = JSON.parse(readFileSync(packagePath('schema/scenario.schema.json'), 'utf8'));
    validator = new Ajv({ allErrors: true, strict: false }).compile(schema);
  }
  return validator(data) ? [] : (validator.errors ?? []);
}

/** Parses YAML text into a document, turning syntax errors into located GateErrors. */
export function parseYaml(text: string, file: string): { doc: Document; lines: LineCounter; data: unknown } {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  if (doc.errors.length) {
    const e = doc.errors[0];
    const line = lines.linePos(e.pos[0]).line;
    throw new GateError(`malformed YAML: ${e.message.split('\n')[0]}`, { file, line }, 'fix the YAML syntax at that line');
  }
  return { doc, lines, data: doc.toJS() };
}

/** Line of the node at a JSON pointer (e.g. /workload/size), or of its parent when absent. */
export function lineOf(doc: Document, lines: LineCounter, pointer: string, key?: string): number {
  const path = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  for (let n = path.length; n >= 0; n--) {
    const node = doc.getIn(path.slice(0, n), true) as { range?: [number, number, number]; items?: unknown[] } | undefined;
    if (!node?.range) continue;
    if (n === path.length && key && isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && p.key.value === key);
      const range = pair && isPair(pair) && isScalar(pair.key) ? pair.key.range : undefined;
      if (range) return lines.linePos(range[0]).line;
    }
    return lines.linePos(node.range[0]).line;
  }
  return 1;
}

function schemaError(e: ErrorObject, file: string, doc: Document, lines: LineCounter): GateError {
  const extra = e.keyword === 'additionalProperties' ? String(e.params.additionalProperty) : undefined;
  const field = [e.instancePath.slice(1).replace(/\//g, '.'), extra].filter(Boolean).join('.') || '(top level)';
  const line = lineOf(doc, lines, e.instancePath, extra);
  const msg = extra
    ? `unknown field "${extra}"`
    : e.keyword === 'required'
      ? `missing required field "${e.params.missingProperty}"`
      : e.keyword === 'enum'
        ? `must be one of ${(e.params.allowedValues as unknown[]).join(', ')}`
        : (e.message ?? 'is invalid');
  const fix = extra ? 'remove it or check its spelling against schema/scenario.schema.json' : 'see schema/scenario.schema.json';
  return new GateError(msg, { file, line, field }, fix);
}

export function loadScenarioFile(file: string, opts: LoadOptions = {}): ScenarioSpec[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new GateError(`cannot read scenario file (${(e as NodeJS.ErrnoException).code})`, { file }, 'check the path');
  }
  return parseScenario(text, file, opts);
}

/** Parses one scenario file into its specs: one, or one per combination of `axes:` values. */
export function parseScenario(text: string, file: string, opts: LoadOptions = {}): ScenarioSpec[] {
  const { doc, lines, data } = parseYaml(text, file);
  if (!data || typeof data !== 'object' || Array.isArray(data)) {
    throw new GateError('a scenario file must be a YAML mapping', { file, line: 1 }, 'start from one of the files in scenarios/');
  }
  const errors = validate(data);
  if (errors.length) throw schemaError(errors[0], file, doc, lines);
  const raw = data as RawScenario;
  const fieldLines: Record<string, number> = {};
  for (const k of Object.keys(raw)) fieldLines[k] = lineOf(doc, lines, `/${k}`);
  const at = (pointer: string, field: string): Where => ({ file, line: lineOf(doc, lines, pointer), field });
  const notes = [...(raw.notes ?? [])];

  // The base workload, then each phase's on top of it.
  const build = (from: WorkloadParams, r: RawWorkload, ptr: string, drain = false): { w: WorkloadParams; run: RunFlags } => {
    const w = structuredClone(from);
    let run: RunFlags = { notes: [] };
    if (r['perf-test']) run = applyPerfTestArgs(w, r['perf-test'], at(`${ptr}/perf-test`, `${ptr.slice(1).replace(/\//g, '.')}${ptr ? '.' : ''}perf-test`));
    if (run.exitWhen && !drain) {
      throw new GateError(
        '--exit-when only belongs in a drain phase (which always runs until the queues are empty)',
        at(`${ptr}/perf-test`, 'perf-test'),
        'move the consuming command into `phases:` with role: drain',
      );
    }
    Object.assign(w, r.workload ?? {});
    if (r.workload?.queueArgs) w.queueArgs = { ...from.queueArgs, ...w.queueArgs, ...r.workload.queueArgs };
    if (r.workload?.messageProperties) w.messageProperties = { ...from.messageProperties, ...r.workload.messageProperties };
    if (w.queuePattern && w.queuePatternTo < w.queuePatternFrom) throw new GateError('queuePatternTo is below queuePatternFrom', at(`${ptr}/workload/queuePatternTo`, 'workload.queuePatternTo'));
    for (const n of run.notes) if (!notes.includes(n)) notes.push(n);
    return { w, run };
  };
  const { w: workload, run } = build(perfTestDefaults(raw.id), raw, '');

  const present = (['phases', 'churn', 'import', 'restart', 'protocol'] as const).filter((k) => raw[k] !== undefined);
  if (present.length > 1)
    throw new GateError(`a scenario is one of phases, churn, import, restart or protocol, not ${present.join(' and ')}`, at(`/${present[1]}`, present[1]), 'split it into two files');
  const kind: ScenarioKind = (present[0] as ScenarioKind | undefined) ?? 'messaging';

  const phases = raw.phases?.map((p, i): PhaseSpec => {
    const ptr = `/phases/${i}`;
    const w = build(workload, p, ptr, p.role === 'drain').w;
    if (p.role !== (i === 0 ? 'fill' : 'drain')) throw new GateError('phases are a fill (publish), optionally followed by a drain (consume)', at(`${ptr}/role`, `phases.${i}.role`));
    if (p.role === 'fill' && w.consumers > 0) throw new GateError(`a fill phase publishes only, but it has ${w.consumers} consumers`, at(`${ptr}/perf-test`, `phases.${i}`), 'add -y 0');
    if (p.role === 'drain' && w.producers > 0)
      throw new GateError(
        `a drain phase consumes only, but it has ${w.producers} producers`,
        at(`${ptr}/perf-test`, `phases.${i}`),
        "add -x 0 (keepPublishing: true keeps the fill phase's producers running)",
      );
    if (p.role === 'drain' && w.consumers === 0) throw new GateError('a drain phase needs consumers', at(`${ptr}/perf-test`, `phases.${i}`), 'set -y');
    if (p.keepPublishing && p.role !== 'drain') throw new GateError('keepPublishing only applies to a drain phase', at(`${ptr}/keepPublishing`, `phases.${i}.keepPublishing`));
    const same = (['queue', 'queuePattern', 'queuePatternFrom', 'queuePatternTo'] as const).every((k) => w[k] === workload[k]);
    if (!same) throw new GateError("every phase must use the scenario's queues (set -u / -qp on the top-level perf-test)", at(`${ptr}/perf-test`, `phases.${i}`));
    return { role: p.role, workload: w, keepPublishing: p.keepPublishing ?? false };
  });

  const churn: ChurnSpec | undefined = raw.churn && { object: raw.churn.object, durable: raw.churn.durable ?? false, concurrency: raw.churn.concurrency ?? 1 };
  const imp: ImportSpec | undefined = raw.import && {
    queues: raw.import.queues,
    bindingsPerQueue: raw.import.bindingsPerQueue ?? 0,
    vhosts: raw.import.vhosts ?? 0,
    queueType: raw.import.queueType ?? 'classic',
    reimport: raw.import.reimport ?? true,
  };
  if (imp && imp.queues === 0 && imp.vhosts === 0) throw new GateError('an import needs queues, vhosts or both', at('/import/queues', 'import.queues'));
  const restart = raw.restart && parseRestart(raw.restart, at);
  const protocol = raw.protocol && parseProtocol(raw.protocol, workload, at);
  const setup: SetupSpec | undefined = raw.setup && {
    policies: (raw.setup.policies ?? []).map((p) => ({ name: p.name, pattern: p.pattern, definition: p.definition, applyTo: p['apply-to'] ?? 'queues', priority: p.priority ?? 0 })),
    queues: raw.setup.queues ?? [],
    deadLetterQueue: raw.setup.deadLetterQueue,
  };

  const scale = raw.scale === undefined ? 1 : raw.scale * (opts.scale ?? 1);
  const scaled = raw.scaled ?? DEFAULT_SCALED;
  for (const w of [workload, ...(phases ?? []).map((p) => p.workload)]) scaleWorkload(w, scale, scaled);
  if (imp) scaleImport(imp, scale, scaled);
  if (restart) scaleRestart(restart, scale, scaled);

  checkAxes(raw, kind, workload, phases, at);
  // The kind's own block (the parser checked above that at most one is present).
  const own: KindFields = phases
    ? { kind: 'phases', phases }
    : churn
      ? { kind: 'churn', churn }
      : imp
        ? { kind: 'import', import: imp }
        : restart
          ? { kind: 'restart', restart }
          : protocol
            ? { kind: 'protocol', protocol }
            : { kind: 'messaging' };
  const gate = raw.gate ?? defaultGate(own, workload);
  for (const [i, id] of gate.entries()) {
    if (!isKnownMetric(id)) throw new GateError(`unknown metric "${id}"`, at(`/gate/${i}`, 'gate'), 'use a metric id from docs/scenarios.md (src/metrics/definitions.ts)');
    if (isEvidence(id)) {
      throw new GateError(
        `"${id}" is broker evidence: it explains a change next to the gating metrics and cannot gate itself`,
        at(`/gate/${i}`, 'gate'),
        'gate on what the clients see (a rate or latency); the evidence is compared and shown anyway (docs/evidence.md)',
      );
    }
  }
  for (const key of ['tolerances', 'margins'] as const)
    for (const id of Object.keys(raw[key] ?? {})) {
      if (!isKnownMetric(id))
        throw new GateError(`unknown metric "${id}"`, { file, line: lineOf(doc, lines, `/${key}`, id), field: `${key}.${id}` }, 'use a metric id from src/metrics/definitions.ts');
    }

  const base: ScenarioSpec = {
    id: raw.id,
    description: raw.description.trim(),
    origin: { source: raw.origin.source, command: raw.origin.command.trim() },
    workload,
    warmupSeconds: raw.warmup ?? (kind === 'import' || kind === 'restart' ? 0 : 2),
    durationSeconds: raw.duration ?? run.time ?? 10,
    gate,
    tolerances: raw.tolerances ?? {},
    ...(raw.margins ? { margins: raw.margins } : {}),
    file,
    lines: fieldLines,
    ...own,
    ...(setup ? { setup } : {}),
    ...(scale !== 1 ? { scale } : {}),
    ...(notes.length ? { notes } : {}),
  };
  // A protocol scenario (by its block or its protocol axis) runs only what its driver implements;
  // over streams, the workload takes a stream's arguments as PerfTest's -sq does.
  const where = raw.axes?.protocol ? at('/axes/protocol', 'axes.protocol') : at('/perf-test', 'perf-test');
  return expandAxes(base, raw.axes, Object.keys(raw.axes ?? {})).map((s) => {
    if (s.kind !== 'protocol') return s;
    checkProtocolWorkload(s, where);
    if (s.protocol.name !== 'stream') return s;
    const streamNotes = [...(s.notes ?? [])];
    applyQueueType(s.workload, 'stream', streamNotes);
    return { ...s, notes: streamNotes.length ? streamNotes : undefined };
  });
}

/** The fields a scenario's kind adds: `kind` and its own block. */
type KindFields =
  | Pick<MessagingScenario, 'kind'>
  | Pick<PhasesScenario, 'kind' | 'phases'>
  | Pick<ChurnScenario, 'kind' | 'churn'>
  | Pick<ImportScenario, 'kind' | 'import'>
  | Pick<RestartScenario, 'kind' | 'restart'>
  | Pick<ProtocolScenario, 'kind' | 'protocol'>;

function defaultGate(own: KindFields, w: WorkloadParams): string[] {
  if (own.kind === 'phases') return ['fill_rate', 'drain_rate'];
  if (own.kind === 'churn') return [CHURN_METRIC[own.churn.object]];
  if (own.kind === 'import') return own.import.reimport ? ['import_seconds', 'reimport_seconds'] : ['import_seconds'];
  if (own.kind === 'restart') return ['node_start_seconds'];
  if (own.kind === 'protocol' && own.protocol.name === 'mqtt' && own.protocol.idleConnections > 0) return ['memory_per_connection_kib'];
  return DEFAULT_GATE.filter((m) => (m === 'published_rate' ? w.producers > 0 : m === 'consumed_rate' ? w.consumers > 0 : w.producers > 0 && w.consumers > 0));
}

/** The restart block with its defaults; only combinations that can come back are accepted. */
function parseRestart(r: NonNullable<RawScenario['restart']>, at: (p: string, f: string) => Where): RestartSpec {
  const spec: RestartSpec = {
    queues: r.queues,
    queueType: r.queueType ?? 'classic',
    durable: r.durable ?? true,
    messagesPerQueue: r.messagesPerQueue ?? 0,
    messageSize: r.messageSize ?? 100,
    method: r.method ?? 'container',
  };
  if (!spec.durable && spec.queueType === 'quorum') {
    throw new GateError('quorum queues are always durable', at('/restart/durable', 'restart.durable'), 'remove durable: false, or use queueType: classic');
  }
  if (!spec.durable && spec.messagesPerQueue > 0) {
    throw new GateError('messages in transient queues do not survive a restart', at('/restart/messagesPerQueue', 'restart.messagesPerQueue'), 'set durable: true, or messagesPerQueue: 0');
  }
  return spec;
}

function checkAxes(raw: RawScenario, kind: ScenarioKind, w: WorkloadParams, phases: PhaseSpec[] | undefined, at: (p: string, f: string) => Where): void {
  const types = raw.axes?.queueType ?? [];
  const where = at('/axes/queueType', 'axes.queueType');
  if (kind === 'churn' && raw.axes) throw new GateError('churn scenarios take no axes', at('/axes', 'axes'), 'use churn.durable, or one file per variant');
  if (kind === 'restart' && raw.axes) throw new GateError('restart scenarios take no axes', at('/axes', 'axes'), 'use restart.queueType, one file per queue type');
  checkProtocolAxes(raw, kind, at);
  if (kind === 'import' && raw.axes?.size) throw new GateError('import scenarios have no message size', at('/axes/size', 'axes.size'));
  if (kind === 'import' && types.some((t) => t.startsWith('classic-'))) throw new GateError('import takes classic, quorum or stream', where);
  if (!types.includes('stream')) return;
  if (kind === 'phases') throw new GateError('streams are not drained (consuming does not remove messages): no stream axis on phases', where);
  const all = [w, ...(phases ?? []).map((p) => p.workload)];
  if (all.some((x) => x.nack)) throw new GateError('streams do not take nacks', where);
  if (raw.setup) throw new GateError('streams ignore dead-letter policies: no stream axis with setup', where);
}

/** The protocol axes: `protocol` on messaging or protocol scenarios; `subEntrySize` on a stream
 *  file and `qos` on an MQTT file (each meaningless elsewhere); queue types only where there are queues. */
function checkProtocolAxes(raw: RawScenario, kind: ScenarioKind, at: (p: string, f: string) => Where): void {
  const a = raw.axes ?? {};
  const name = raw.protocol?.name;
  if (a.protocol && kind !== 'messaging' && kind !== 'protocol') throw new GateError(`${kind} scenarios have no protocol axis`, at('/axes/protocol', 'axes.protocol'));
  if (a.protocol && raw.protocol?.idleConnections) throw new GateError('idle MQTT connections measure MQTT only: no protocol axis', at('/axes/protocol', 'axes.protocol'));
  if (a.subEntrySize && (name !== 'stream' || a.protocol)) {
    throw new GateError('subEntrySize is an axis of stream scenarios', at('/axes/subEntrySize', 'axes.subEntrySize'), 'set protocol: {name: stream} and no protocol axis');
  }
  if (a.qos && (name !== 'mqtt' || a.protocol)) throw new GateError('qos is an axis of MQTT scenarios', at('/axes/qos', 'axes.qos'), 'set protocol: {name: mqtt} and no protocol axis');
  if (a.queueType && (name === 'stream' || name === 'mqtt' || a.protocol)) {
    throw new GateError(
      `${a.protocol ? 'a protocol axis' : name} takes no queue type axis`,
      at('/axes/queueType', 'axes.queueType'),
      'streams are streams, MQTT publishes to a topic; give AMQP 1.0 its queue type with -qq or x-queue-type',
    );
  }
}
