// Scenario files: malformed input gives file:line:field errors; phases, axes, scale, setup and
// metadata kinds (churn, import, restart) parse into the specs the engine expects.
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../src/config/scenario-file';
import { GateError } from '../../src/schema/errors';
import { applyPerfTestArgs, perfTestDefaults } from '../../src/config/perftest-args';
import { buildPlan, estimateSeconds, trialSeconds } from '../../src/plan/plan';
import { ofKind } from '../support/kinds';

const HEAD = 'id: t\ndescription: d\norigin: { source: s, command: c }\n';

function errorOf(text: string): GateError {
  try {
    parseScenario(text, 'bad.yml');
  } catch (e) {
    if (e instanceof GateError) return e;
    throw e;
  }
  throw new Error('expected a GateError');
}

describe('malformed scenario files name file, line and field', () => {
  it.each([
    ['bad YAML', `${HEAD}warmup: 1\n  duration: 3\n`, 4, undefined, /malformed YAML: Nested mappings/],
    ['duplicate key', `${HEAD}warmup: 1\nwarmup: 2\n`, 5, undefined, /keys must be unique/],
    ['unknown field', `${HEAD}warmup: 1\ndurration: 3\n`, 5, 'durration', /unknown field "durration"/],
    ['unknown nested field', `${HEAD}workload:\n  producers: 1\n  prodcers: 2\n`, 6, 'workload.prodcers', /unknown field/],
    ['wrong type', `${HEAD}duration: ten\n`, 4, 'duration', /must be number/],
    ['wrong type in a phase', `${HEAD}phases:\n  - role: fill\n    keepPublishing: yes please\n`, 6, 'phases.0.keepPublishing', /boolean/],
    ['unknown PerfTest flag', `${HEAD}perf-test: -x 1 --bogus 2\n`, 4, 'perf-test', /unknown PerfTest flag "--bogus"/],
    ['unknown flag in a phase', `${HEAD}perf-test: -u q\nphases:\n  - role: fill\n    perf-test: -x 1 -y 0 --nope\n`, 7, 'phases.0.perf-test', /--nope/],
    ['bad flag value', `${HEAD}perf-test: -x many\n`, 4, 'perf-test', /-x needs a number/],
    ['unknown gate metric', `${HEAD}gate:\n  - consumed_rate\n  - consumd_rate\n`, 6, 'gate', /unknown metric "consumd_rate"/],
    ['unknown tolerance metric', `${HEAD}tolerances:\n  nope_ms: 0.2\n`, 5, 'tolerances.nope_ms', /unknown metric/],
    ['fill with consumers', `${HEAD}phases:\n  - role: fill\n    perf-test: -x 1\n`, 6, 'phases.0', /fill phase publishes only/],
    ['drain first', `${HEAD}phases:\n  - role: drain\n`, 5, 'phases.0.role', /fill/],
    ['--exit-when outside a drain', `${HEAD}perf-test: -x 0 -y 1 --exit-when empty\n`, 4, 'perf-test', /drain phase/],
    ['phases and churn', `${HEAD}phases:\n  - role: fill\n    perf-test: -y 0\nchurn: { object: queue }\n`, 7, 'churn', /one of phases, churn, import, restart or protocol/],
    ['import and restart', `${HEAD}import: { queues: 10 }\nrestart: { queues: 10 }\n`, 5, 'restart', /one of phases, churn, import, restart or protocol/],
    ['unknown field in restart', `${HEAD}restart:\n  queues: 10\n  queueTyp: quorum\n`, 6, 'restart.queueTyp', /unknown field "queueTyp"/],
    ['restart without queues', `${HEAD}restart:\n  queueType: quorum\n`, 5, 'restart', /missing required field "queues"/],
    ['restart of no queues', `${HEAD}restart:\n  queues: 0\n`, 5, 'restart.queues', /must be >= 1/],
    ['restart queue type', `${HEAD}restart:\n  queues: 10\n  queueType: stream\n`, 6, 'restart.queueType', /must be one of classic, quorum/],
    ['restart method', `${HEAD}restart:\n  queues: 10\n  method: reboot\n`, 6, 'restart.method', /must be one of container, app/],
    ['transient quorum queues', `${HEAD}restart:\n  queues: 10\n  queueType: quorum\n  durable: false\n`, 7, 'restart.durable', /quorum queues are always durable/],
    ['messages in transient queues', `${HEAD}restart:\n  queues: 10\n  durable: false\n  messagesPerQueue: 5\n`, 7, 'restart.messagesPerQueue', /do not survive a restart/],
    ['restart with axes', `${HEAD}restart: { queues: 10 }\naxes:\n  queueType: [quorum]\n`, 6, 'axes', /restart scenarios take no axes/],
    ['bad axis value', `${HEAD}axes:\n  queueType: [classic, quorom]\n`, 5, 'axes.queueType.1', /must be one of/],
    ['stream axis on phases', `${HEAD}phases:\n  - role: fill\n    perf-test: -y 0\naxes:\n  queueType: [stream]\n`, 8, 'axes.queueType', /streams/],
    ['scale above 1', `${HEAD}scale: 2\n`, 4, 'scale', /must be <= 1/],
    ['unknown protocol', `${HEAD}protocol: { name: stomp }\n`, 4, 'protocol.name', /must be one of stream, mqtt, amqp-1.0/],
    ['an MQTT setting on a stream', `${HEAD}protocol:\n  name: stream\n  qos: 1\n`, 6, 'protocol.qos', /protocol.qos is a mqtt setting, not one of stream/],
    ['a PerfTest flag the protocol lacks', `${HEAD}perf-test: -x 1 -y 1 -A 10\nprotocol: { name: mqtt }\n`, 4, 'perf-test', /workload.multiAckEvery has no equivalent over mqtt/],
    ['a replay with nothing to replay', `${HEAD}perf-test: -x 0 -y 1\nprotocol:\n  name: stream\n  offset: first\n`, 6, 'protocol.backlog', /need a backlog/],
    ['idle connections with clients', `${HEAD}perf-test: -x 1 -y 0\nprotocol:\n  name: mqtt\n  idleConnections: 10\n`, 7, 'protocol.idleConnections', /no producers or consumers/],
    ['sub-entry axis on MQTT', `${HEAD}protocol: { name: mqtt }\naxes:\n  subEntrySize: [1, 10]\n`, 6, 'axes.subEntrySize', /axis of stream scenarios/],
    ['queue type axis on a stream', `${HEAD}protocol: { name: stream }\naxes:\n  queueType: [quorum]\n`, 6, 'axes.queueType', /stream takes no queue type axis/],
    ['protocol axis on an import', `${HEAD}import: { queues: 10 }\naxes:\n  protocol: [mqtt]\n`, 6, 'axes.protocol', /import scenarios have no protocol axis/],
    ['a protocol axis over a flag MQTT lacks', `${HEAD}perf-test: -x 1 -y 1 --nack\naxes:\n  protocol: [amqp-0-9-1, mqtt]\n`, 6, 'axes.protocol', /workload.nack has no equivalent over mqtt/],
  ])('%s', (_name, text, line, field, message) => {
    const e = errorOf(text);
    expect(e.where.file).toBe('bad.yml');
    expect(e.where.line).toBe(line);
    if (field) expect(e.where.field).toBe(field);
    expect(e.message).toMatch(message);
    expect(e.describe()).toMatch(/^bad\.yml:\d+: /);
  });
});

describe('scenario file features', () => {
  it('expands axes into ids, clamps sizes below 12 and says so', () => {
    const specs = parseScenario(`${HEAD}perf-test: -x 2 -y 2 -c 3000 -ad false -f persistent\naxes:\n  size: [10, 5000]\n  queueType: [classic-v2, quorum, stream]\n`, 'f.yml');
    expect(specs.map((s) => s.id)).toEqual([
      't[size=12,queue=classic-v2]',
      't[size=12,queue=quorum]',
      't[size=12,queue=stream]',
      't[size=5000,queue=classic-v2]',
      't[size=5000,queue=quorum]',
      't[size=5000,queue=stream]',
    ]);
    expect(specs[0].workload.size).toBe(12);
    expect(specs[0].notes?.join(' ')).toMatch(/size 10 runs as 12 bytes/);
    expect(specs[3].notes).toBeUndefined();
    expect(specs[0].workload.queueArgs).toEqual({ 'x-queue-version': 2 });
    expect(specs[1].workload.queueArgs['x-queue-type']).toBe('quorum');
    expect(specs[2].workload.queueArgs['x-queue-type']).toBe('stream');
    expect(specs[2].workload.qos).toBe(200);
    expect(specs[2].axes).toEqual({ size: 12, queue: 'stream' });
  });

  it('scales client, queue and message counts by one factor, never below 1', () => {
    const [s] = parseScenario(`${HEAD}perf-test: -x 7000 -y 7 -P 1 -c 1 -qp q-%d -qpf 1 -qpt 1000 -C 100\nscale: 0.05\n`, 'f.yml');
    expect([s.workload.producers, s.workload.consumers, s.workload.queuePatternTo, s.workload.producerMessageLimit]).toEqual([350, 1, 50, 100]);
    expect(s.scale).toBe(0.05);
    const [t] = parseScenario(`${HEAD}perf-test: -x 7000 -y 7\nscale: 0.05\n`, 'f.yml', { scale: 0.1 });
    expect([t.workload.producers, t.workload.consumers]).toEqual([35, 1]);
    const [u] = parseScenario(`${HEAD}perf-test: -x 2 -C 5000000\nscale: 0.01\nscaled: [messages]\n`, 'f.yml');
    expect([u.workload.producers, u.workload.producerMessageLimit]).toEqual([2, 50000]);
  });

  it('parses phases on top of the top-level command', () => {
    const [parsed] = parseScenario(
      `${HEAD}perf-test: -u q -qa x-max-length=10 -ad false -f persistent\nphases:\n  - role: fill\n    perf-test: -x 2 -y 0 -c 700\n  - role: drain\n    perf-test: -x 0 -y 1 -q 300 --exit-when empty\n    keepPublishing: true\n`,
      'f.yml',
    );
    expect(parsed.kind).toBe('phases');
    const s = ofKind(parsed, 'phases');
    expect(s.gate).toEqual(['fill_rate', 'drain_rate']);
    expect(s.phases.map((p) => [p.role, p.workload.producers, p.workload.consumers, p.workload.queue, p.keepPublishing])).toEqual([
      ['fill', 2, 0, 'q', false],
      ['drain', 0, 1, 'q', true],
    ]);
    expect(s.phases[1].workload.qos).toBe(300);
    expect(s.phases[1].workload.queueArgs).toEqual({ 'x-max-length': 10 });
  });

  it('parses setup, churn and import with their default gates', () => {
    const [ttl] = parseScenario(
      `${HEAD}perf-test: -y 0\nsetup:\n  policies:\n    - { name: p, pattern: q, definition: { dead-letter-exchange: '' } }\n  queues: [dlq]\n  deadLetterQueue: dlq\n`,
      'f.yml',
    );
    expect(ttl.setup).toEqual({ policies: [{ name: 'p', pattern: 'q', definition: { 'dead-letter-exchange': '' }, applyTo: 'queues', priority: 0 }], queues: ['dlq'], deadLetterQueue: 'dlq' });
    expect(ttl.gate).toEqual(['published_rate']);
    const churn = ofKind(parseScenario(`${HEAD}churn: { object: binding, durable: true }\n`, 'f.yml')[0], 'churn');
    expect([churn.kind, churn.churn, churn.gate]).toEqual(['churn', { object: 'binding', durable: true, concurrency: 1 }, ['bind_churn_ops']]);
    const imp = ofKind(parseScenario(`${HEAD}import: { queues: 1000, vhosts: 10 }\nscale: 0.1\nscaled: [imports]\n`, 'f.yml')[0], 'import');
    expect([imp.kind, imp.import, imp.gate, imp.warmupSeconds]).toEqual([
      'import',
      { queues: 100, bindingsPerQueue: 0, vhosts: 1, queueType: 'classic', reimport: true },
      ['import_seconds', 'reimport_seconds'],
      0,
    ]);
  });

  it('parses a restart block with its defaults, scale and gate, and estimates its trials from it', () => {
    const s = ofKind(parseScenario(`${HEAD}restart:\n  queues: 100000\nscale: 0.01\nscaled: [queues]\n`, 'f.yml')[0], 'restart');
    expect([s.kind, s.restart, s.gate, s.warmupSeconds]).toEqual([
      'restart',
      { queues: 1000, queueType: 'classic', durable: true, messagesPerQueue: 0, messageSize: 100, method: 'container' },
      ['node_start_seconds'],
      0,
    ]);
    expect(s.lines.restart).toBe(5);
    const q = ofKind(
      parseScenario(`${HEAD}restart: { queues: 10000, queueType: quorum, messagesPerQueue: 100, messageSize: 1000 }\nscale: 0.01\nscaled: [queues, messages]\n`, 'f.yml', { scale: 0.1 })[0],
      'restart',
    );
    expect(q.restart).toEqual({ queues: 10, queueType: 'quorum', durable: true, messagesPerQueue: 1, messageSize: 1000, method: 'container' });
    // A restart's estimate is boot + queues, whatever the window says; quorum queues cost more.
    const c = ofKind(parseScenario(`${HEAD}restart: { queues: 10 }\nduration: 1\n`, 'f.yml')[0], 'restart');
    expect(trialSeconds(c)).toBeGreaterThan(5);
    expect(trialSeconds({ ...c, restart: { ...c.restart, queues: 1000 } })).toBeGreaterThan(trialSeconds(c));
    expect(trialSeconds({ ...c, restart: { ...c.restart, queues: 1000, queueType: 'quorum' } })).toBeGreaterThan(trialSeconds({ ...c, restart: { ...c.restart, queues: 1000 } }));
    expect(estimateSeconds(buildPlan([c], ['a', 'b'], 3, 1))).toBeCloseTo(6 * (trialSeconds(c) + 0.5));
  });

  it('translates PerfTest flags, clamping -s below 12 with a note', () => {
    const w = perfTestDefaults('x');
    const run = applyPerfTestArgs(w, 'perf-test --quorum-queue -s 10 -z 30 --multi-ack-every 10 --nack --requeue false -mp expiration=1000', {});
    expect([w.size, w.queueArgs['x-queue-type'], w.multiAckEvery, w.nack, w.requeue, w.messageProperties]).toEqual([12, 'quorum', 10, true, false, { expiration: 1000 }]);
    expect(run.time).toBe(30);
    expect(run.notes[0]).toMatch(/size 10 runs as 12/);
  });
});
