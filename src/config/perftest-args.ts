// Translates a PerfTest command line (the flags rabbitmq/testing and the blog posts use) into
// WorkloadParams, so scenario files can carry the original command verbatim. Unknown flags are
// errors: silently ignoring one would run a different workload than the user pasted.
import type { WorkloadParams } from '../schema/types';
import { GateError, type Where } from '../schema/errors';

/** PerfTest's defaults (PerfTest.java), in our vocabulary. */
export function perfTestDefaults(queue: string): WorkloadParams {
  return {
    producers: 1,
    consumers: 1,
    confirm: null,
    qos: null,
    multiAckEvery: 0,
    autoAck: false,
    rate: null,
    publishingInterval: null,
    size: 12,
    persistent: false,
    mandatory: false,
    queue,
    queuePattern: null,
    queuePatternFrom: 1,
    queuePatternTo: 1,
    queueArgs: {},
    exchange: 'direct',
    exchangeType: 'direct',
    routingKey: null,
    autoDelete: true,
    exclusive: false,
    predeclared: false,
    nack: false,
    requeue: true,
    messageProperties: {},
    consumerStartDelay: 0,
    producerMessageLimit: 0,
  };
}

type Apply = (w: WorkloadParams, value: string, run: RunFlags) => void;
export interface RunFlags {
  time?: number;
  /** -ew: only meaningful in a drain phase (which always ends when the queues are empty). */
  exitWhen?: 'empty' | 'idle';
  /** Honest deviations, e.g. a size below PerfTest's 12-byte minimum clamped to 12. */
  notes: string[];
}

/** Body bytes PerfTest needs for its sequence and timestamp; smaller sizes run as 12. */
export const MIN_SIZE = 12;

/** Clamps a size to MIN_SIZE, noting the change (PerfTest itself never sends fewer bytes). */
export function clampSize(size: number, notes: string[]): number {
  if (size >= MIN_SIZE) return size;
  notes.push(`size ${size} runs as ${MIN_SIZE} bytes: the body carries a 4-byte sequence and an 8-byte send time (PerfTest's minimum)`);
  return MIN_SIZE;
}

const num = (flag: string, min: number, v: string): number => {
  const n = Number(v);
  if (!Number.isFinite(n) || n < min) throw new Error(`${flag} needs a number ≥ ${min}, got "${v}"`);
  return n;
};

/** key=value,key=value with numbers and booleans typed. */
export function parseKeyValues(v: string): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const part of v.split(',').filter(Boolean)) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new Error(`"${part}" is not key=value`);
    const key = part.slice(0, eq).trim();
    const raw = part.slice(eq + 1).trim();
    out[key] = raw === 'true' ? true : raw === 'false' ? false : /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
  }
  return out;
}

const FLAGS: Record<string, { aliases: string[]; takesValue: boolean; apply: Apply }> = {
  producers: {
    aliases: ['-x', '--producers'],
    takesValue: true,
    apply: (w, v) => {
      w.producers = num('-x', 0, v);
    },
  },
  consumers: {
    aliases: ['-y', '--consumers'],
    takesValue: true,
    apply: (w, v) => {
      w.consumers = num('-y', 0, v);
    },
  },
  confirm: {
    aliases: ['-c', '--confirm'],
    takesValue: true,
    apply: (w, v) => {
      const n = num('-c', -1, v);
      w.confirm = n > 0 ? n : null;
    },
  },
  qos: {
    aliases: ['-q', '--qos'],
    takesValue: true,
    apply: (w, v) => {
      const n = num('-q', 0, v);
      w.qos = n > 0 ? n : null;
    },
  },
  multiAck: {
    aliases: ['-A', '--multi-ack-every'],
    takesValue: true,
    apply: (w, v) => {
      w.multiAckEvery = num('-A', 0, v);
    },
  },
  autoAck: {
    aliases: ['-a', '--autoack'],
    takesValue: false,
    apply: (w) => {
      w.autoAck = true;
    },
  },
  rate: {
    aliases: ['-r', '--rate'],
    takesValue: true,
    apply: (w, v) => {
      const n = num('-r', -1, v);
      w.rate = n > 0 ? n : null;
    },
  },
  interval: {
    aliases: ['-P', '--publishing-interval'],
    takesValue: true,
    apply: (w, v) => {
      w.publishingInterval = num('-P', 0.1, v);
    },
  },
  size: {
    aliases: ['-s', '--size'],
    takesValue: true,
    apply: (w, v, run) => {
      w.size = clampSize(num('-s', 1, v), run.notes);
    },
  },
  flag: {
    aliases: ['-f', '--flag'],
    takesValue: true,
    apply: (w, v) => {
      if (v === 'persistent') w.persistent = true;
      else if (v === 'mandatory') w.mandatory = true;
      else throw new Error(`-f takes persistent or mandatory, got "${v}"`);
    },
  },
  queue: {
    aliases: ['-u', '--queue'],
    takesValue: true,
    apply: (w, v) => {
      w.queue = v;
    },
  },
  queuePattern: {
    aliases: ['-qp', '--queue-pattern'],
    takesValue: true,
    apply: (w, v) => {
      w.queuePattern = v;
    },
  },
  queueFrom: {
    aliases: ['-qpf', '--queue-pattern-from'],
    takesValue: true,
    apply: (w, v) => {
      w.queuePatternFrom = num('-qpf', 0, v);
    },
  },
  queueTo: {
    aliases: ['-qpt', '--queue-pattern-to'],
    takesValue: true,
    apply: (w, v) => {
      w.queuePatternTo = num('-qpt', 0, v);
    },
  },
  queueArgs: {
    aliases: ['-qa', '--queue-args'],
    takesValue: true,
    apply: (w, v) => {
      Object.assign(w.queueArgs, parseKeyValues(v));
    },
  },
  exchange: {
    aliases: ['-e', '--exchange'],
    takesValue: true,
    apply: (w, v) => {
      w.exchange = v;
    },
  },
  type: {
    aliases: ['-t', '--type'],
    takesValue: true,
    apply: (w, v) => {
      w.exchangeType = v;
    },
  },
  routingKey: {
    aliases: ['-k', '--routing-key'],
    takesValue: true,
    apply: (w, v) => {
      w.routingKey = v;
    },
  },
  autoDelete: {
    aliases: ['-ad', '--auto-delete'],
    takesValue: true,
    apply: (w, v) => {
      w.autoDelete = v !== 'false';
    },
  },
  exclusive: {
    aliases: ['-E', '--exclusive'],
    takesValue: false,
    apply: (w) => {
      w.exclusive = true;
    },
  },
  predeclared: {
    aliases: ['-p', '--predeclared'],
    takesValue: false,
    apply: (w) => {
      w.predeclared = true;
    },
  },
  nack: {
    aliases: ['-na', '--nack'],
    takesValue: false,
    apply: (w) => {
      w.nack = true;
    },
  },
  requeue: {
    aliases: ['-re', '--requeue'],
    takesValue: true,
    apply: (w, v) => {
      w.requeue = v !== 'false';
    },
  },
  props: {
    aliases: ['-mp', '--message-properties'],
    takesValue: true,
    apply: (w, v) => {
      for (const [k, val] of Object.entries(parseKeyValues(v))) w.messageProperties[k] = typeof val === 'boolean' ? String(val) : val;
    },
  },
  consumerDelay: {
    aliases: ['-csd', '--consumer-start-delay'],
    takesValue: true,
    apply: (w, v) => {
      w.consumerStartDelay = num('-csd', 0, v);
    },
  },
  pmessages: {
    aliases: ['-C', '--pmessages'],
    takesValue: true,
    apply: (w, v) => {
      w.producerMessageLimit = num('-C', 0, v);
    },
  },
  quorum: {
    aliases: ['-qq', '--quorum-queue'],
    takesValue: false,
    apply: (w) => {
      w.persistent = true;
      w.queueArgs['x-queue-type'] = 'quorum';
      w.autoDelete = false;
    },
  },
  stream: {
    aliases: ['-sq', '--stream-queue'],
    takesValue: false,
    apply: (w) => {
      w.persistent = true;
      w.autoDelete = false;
      w.qos = 200;
      Object.assign(w.queueArgs, { 'x-queue-type': 'stream', 'x-max-length-bytes': 20_000_000_000, 'x-stream-max-segment-size-bytes': 500_000_000 });
    },
  },
  time: {
    aliases: ['-z', '--time'],
    takesValue: true,
    apply: (_w, v, run) => {
      run.time = num('-z', 1, v);
    },
  },
  exitWhen: {
    aliases: ['-ew', '--exit-when'],
    takesValue: true,
    apply: (_w, v, run) => {
      if (v !== 'empty' && v !== 'idle') throw new Error(`-ew takes empty or idle, got "${v}"`);
      run.exitWhen = v;
    },
  },
  // Accepted and ignored: they shape PerfTest's own output or multi-instance runs, not the workload.
  ignored: {
    aliases: ['--metrics-prometheus', '-mpr', '--metrics-command-line-arguments', '-mcla', '--use-millis', '-ms'],
    takesValue: false,
    apply: () => undefined,
  },
  ignoredValue: {
    aliases: [
      '--id',
      '-d',
      '--uri',
      '-h',
      '-mf',
      '--metrics-format',
      '-ei',
      '--expected-instances',
      '-ist',
      '--instance-sync-timeout',
      '-ct',
      '--confirm-timeout',
      '-sst',
      '--servers-startup-timeout',
      '-prsd',
      '--producer-random-start-delay',
      '-mt',
      '--metrics-tags',
    ],
    takesValue: true,
    apply: () => undefined,
  },
};

/** The accepted flags, for docs/scenarios.md: `ignored` ones only shape PerfTest's own output. */
export const PERF_TEST_FLAGS = Object.entries(FLAGS).map(([name, f]) => ({ name, aliases: f.aliases, takesValue: f.takesValue, ignored: name.startsWith('ignored') }));

const BY_ALIAS = new Map<string, (typeof FLAGS)[string]>();
for (const f of Object.values(FLAGS)) for (const a of f.aliases) BY_ALIAS.set(a, f);

/** Splits a command line on whitespace, honouring simple single/double quotes. */
function tokenize(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]);
}

export function applyPerfTestArgs(w: WorkloadParams, line: string, where: Where): RunFlags {
  const tokens = tokenize(line.replace(/^\s*(perf-test|perf_test\s+\S+)\s*/, ''));
  const run: RunFlags = { notes: [] };
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i];
    const flag = BY_ALIAS.get(tok);
    if (!flag) {
      throw new GateError(
        `unknown PerfTest flag "${tok}"`,
        where,
        `use one of the supported flags (${[...BY_ALIAS.keys()]
          .filter((k) => k.startsWith('--'))
          .slice(0, 12)
          .join(', ')}, …; see docs/scenarios.md) or set the parameter under workload:`,
      );
    }
    let value = '';
    if (flag.takesValue) {
      if (i + 1 >= tokens.length) throw new GateError(`PerfTest flag ${tok} needs a value`, where);
      value = tokens[++i];
    }
    try {
      flag.apply(w, value, run);
    } catch (e) {
      throw new GateError(`PerfTest flag ${tok}: ${(e as Error).message}`, where);
    }
  }
  return run;
}
