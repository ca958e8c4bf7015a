// The candidates the measuring benches A/B against the plain image: A/A and each broker-side knob
// that injects a regression, written once as target files (docs/targets.md) in a scratch folder.
// time-to-verdict.mjs runs them as the preset's sequential A/B (the ledger), knob-calibrate.mjs as
// a fixed A/B to size each knob's effect. Each arm is the CLI arguments that name its candidate.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './common.mjs';

/** What each knob does to the candidate broker, for the scripts' headers and --help. */
export const ARM_NOTES = {
  aa: 'the same image (A/A)',
  s21: 'Erlang +S 2:1 (two schedulers, one online): about −21 % on one_fast',
  cpu: 'a cgroup quota of 1.16 cores: −13 to −23 % depending on what else runs',
  cpu10: 'a cgroup quota of --cpus10 cores (fanout10 −10 % when it bites)',
  cpu5: 'a cgroup quota of --cpus5 cores (fanout10 −5 % when it bites)',
  ttl: 'a message-ttl policy on every queue (per-message expiry)',
  rates: 'management.rates_mode = detailed (per-message counters by channel, exchange and queue)',
  lazy: 'a queue-mode lazy policy on every queue (3.x: messages go to disk)',
  credit100: 'credit_flow_default_credit {100, 50} in advanced.config (default {400, 200})',
  credit50: 'credit_flow_default_credit {50, 25} in advanced.config',
  credit25: 'credit_flow_default_credit {25, 12} in advanced.config',
  embed0: 'queue_index_embed_msgs_below = 0 (every persistent message through the message store)',
  cqv2: 'classic_queue.default_version = 2 (3.10: the new classic queue index and store)',
  stats100: 'collect_statistics_interval = 100 (management stats emitted every 100 ms, not 5 s)',
  busy10: 'a high-priority process in the broker busy for --busy10 of every 20 ms (work the VM does beside messaging)',
  busy5: 'the same process busy for --busy5 of every 20 ms',
  count10: 'call counting (a breakpoint on every call, as cprof sets) in the broker modules --count10 names',
  count5: 'the same in the modules --count5 names',
};

/** The rabbitmq.conf arms: name → the one line their candidate's conf.d file holds. */
export const CONF_LINES = {
  rates: 'management.rates_mode = detailed',
  embed0: 'queue_index_embed_msgs_below = 0',
  cqv2: 'classic_queue.default_version = 2',
  stats100: 'collect_statistics_interval = 100',
};

/** The credit-flow arms: name → {initial, more-after} credit (rabbit's default is {400, 200}). */
const CREDITS = { credit100: [100, 50], credit50: [50, 25], credit25: [25, 12] };

/** The busy arms' setup: one Erlang process in the broker node, at high priority (so the broker's
 *  own processes cannot push it aside), spinning for `share` of every 20 ms and sleeping the rest —
 *  a fixed share of one scheduler taken from messaging, as a plugin's periodic work would. The
 *  second line reads it back from the node, so a knob that did not take fails the boot. */
export function busySetup(share) {
  const busyUs = Math.round(share * 20_000);
  const sleepMs = Math.max(1, Math.round(20 - busyUs / 1000));
  const spawn = [
    'Spin = fun S(E) -> case erlang:monotonic_time(microsecond) < E of true -> S(E); false -> ok end end,',
    `Cycle = fun C() -> Spin(erlang:monotonic_time(microsecond) + ${busyUs}), timer:sleep(${sleepMs}), C() end,`,
    'Pid = spawn(fun() -> process_flag(priority, high), Cycle() end),',
    'register(perf_gate_knob_busy, Pid), ok.',
  ].join(' ');
  return `setup:\n  - "rabbitmqctl eval '${spawn}'"\n  - "rabbitmqctl eval 'true = is_pid(whereis(perf_gate_knob_busy)), ok.'"\n`;
}

/** The count arms' setup: call-count breakpoints (erlang:trace_pattern's call_count, local calls
 *  too; what cprof sets, for every process, no tracer) on every function of `modules` ('+'-joined
 *  module names) — a fixed cost on each call the broker makes into them, so a cost per message
 *  where those modules handle messages. The second line reads the breakpoints back from the node,
 *  so a knob that did not take fails the boot. */
export function countSetup(modules) {
  const mods = `[${modules.split('+').join(', ')}]`;
  const all = 'list_to_atom(\\"_\\")';
  const set = `[begin {module, M} = code:ensure_loaded(M), true = erlang:trace_pattern({M, ${all}, ${all}}, true, [call_count, local]) > 0 end || M <- ${mods}], ok.`;
  const check = `true = lists:all(fun(M) -> erlang:trace_info({M, module_info, 0}, call_count) =/= {call_count, false} end, ${mods}), ok.`;
  return `setup:\n  - "rabbitmqctl eval '${set}'"\n  - "rabbitmqctl eval '${check}'"\n`;
}

/** The count arms' modules: the 13 on 3.10.8's per-message path of an AMQP 0-9-1 publish, delivery
 *  and ack (COUNT5), and those plus 17 more (queue index, message store, routing, confirms: COUNT10).
 *  Their size moves from session to session (COUNT5 −8 to −11 % on fanout10 in one, −2 to −6 % in
 *  the next; COUNT10 −9 to −11 %): each gate run's own estimate is what counts, and the measured
 *  sizes are in docs/statistics.md (call counting in the broker). */
const COUNT5 =
  'gen_server2+rabbit_channel+rabbit_amqqueue_process+rabbit_variable_queue+rabbit_reader+rabbit_writer+rabbit_binary_parser+rabbit_binary_generator+credit_flow+rabbit_command_assembler+rabbit_framing_amqp_0_9_1+rabbit_basic+rabbit_misc';
const COUNT10 = `${COUNT5}+rabbit_queue_index+rabbit_msg_store+rabbit_amqqueue+rabbit_queue_type+rabbit_classic_queue+rabbit_exchange+rabbit_router+rabbit_limiter+rabbit_queue_consumers+queue+pmon+rabbit_net+rabbit_confirms+file_handle_cache+rabbit_exchange_type_direct+rabbit_trace+rabbit_event`;

/** The sizes of the knobs that take one (each script's --cpus10, --cpus5, --busy10, --busy5):
 *  quotas set for the scenario a quota slows most (fanout10's broker uses ~1.63 cores on a quiet
 *  machine, so 1.47 and 1.55 are its −10 % and −5 % when they bite), and the busy process's share
 *  of a scheduler (0.2 is about −15 % on one_one_one; see docs/statistics.md). */
export const KNOB_DEFAULTS = { cpus10: 1.47, cpus5: 1.55, busy10: 0.2, busy5: 0.1, count10: COUNT10, count5: COUNT5 };
/** The `cpu` arm's fixed quota (−13 to −23 % depending on what else runs). */
const CPU_QUOTA = 1.16;

/** Writes the arms' target files into `dir` and returns arm → CLI arguments. */
export function armArgs(dir, image, sizes = {}) {
  const { cpus10, cpus5, busy10, busy5, count10, count5 } = { ...KNOB_DEFAULTS, ...sizes };
  const target = (name, label, body) => {
    writeFileSync(join(dir, `${name}.yml`), `label: ${label}\nimage: ${image}\n${body}`);
    return ['--target', join(dir, `${name}.yml`)];
  };
  const policy = (name, definition) => `setup:\n  - rabbitmqctl set_policy knob-${name} ".*" '${JSON.stringify(definition)}' --apply-to queues\n`;
  /** A target whose candidate is given one config file (`fileName` in `dir`, holding `text`). */
  const withConfig = (name, label, fileName, text) => {
    writeFileSync(join(dir, fileName), text);
    return target(name, label, `config: [${join(dir, fileName)}]\n`);
  };
  return {
    aa: ['--image', image, '--broker-label', 'A/A candidate'],
    s21: target('s21', '+S 2:1', 'env:\n  RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: "+S 2:1"\n'),
    cpu: target('cpu', `cpus ${CPU_QUOTA}`, `resources:\n  cpus: ${CPU_QUOTA}\n`),
    cpu10: target('cpu10', `cpus ${cpus10}`, `resources:\n  cpus: ${cpus10}\n`),
    cpu5: target('cpu5', `cpus ${cpus5}`, `resources:\n  cpus: ${cpus5}\n`),
    busy10: target('busy10', `busy ${busy10} of a scheduler`, busySetup(busy10)),
    busy5: target('busy5', `busy ${busy5} of a scheduler`, busySetup(busy5)),
    count10: target('count10', `call counting in ${count10.split('+').length} modules`, countSetup(count10)),
    count5: target('count5', `call counting in ${count5.split('+').length} modules`, countSetup(count5)),
    ttl: target('ttl', 'message-ttl policy', policy('ttl', { 'message-ttl': 3600000 })),
    lazy: target('lazy', 'lazy queues policy', policy('lazy', { 'queue-mode': 'lazy' })),
    ...Object.fromEntries(
      Object.entries(CREDITS).map(([name, [initial, more]]) => [
        name,
        withConfig(name, `credit flow {${initial}, ${more}}`, `${name}.config`, `[{rabbit, [{credit_flow_default_credit, {${initial}, ${more}}}]}].\n`),
      ]),
    ),
    ...Object.fromEntries(Object.entries(CONF_LINES).map(([name, line]) => [name, withConfig(name, line, `${name}.conf`, `${line}\n`)])),
  };
}

/** The size an arm's knob was set to, if it has one, as the ledger's rows keep it: a quota's
 *  `cpus`, a busy process's `busy` share of a scheduler, the count arms' `count` modules; {} for the others. */
export function armSize(arm, sizes = {}) {
  const { cpus10, cpus5, busy10, busy5, count10, count5 } = { ...KNOB_DEFAULTS, ...sizes };
  const cpus = { cpu: CPU_QUOTA, cpu10: cpus10, cpu5: cpus5 }[arm];
  const busy = { busy10, busy5 }[arm];
  const count = { count10, count5 }[arm];
  return cpus !== undefined ? { cpus } : busy !== undefined ? { busy } : count !== undefined ? { count } : {};
}

/** Exits 2 with one line naming `script` when an arm in `arms` is not one of `known`'s. */
export function checkArms(script, arms, known) {
  const unknown = arms.filter((a) => !known[a]);
  if (!unknown.length) return;
  console.error(`${script}: unknown arm ${unknown.join(', ')} (of ${Object.keys(known).join(', ')}) (--help shows the options)`);
  process.exit(2);
}

/** One same-run A/B of an arm's candidate (`armArgs`) against the plain `image` through the bundled
 *  CLI (`--json`), `cli` its other arguments; returns the report (undefined when the CLI wrote
 *  none), its stderr and exit status, and the wall time in seconds. */
export function runArm(candidate, { image, scenarios, dir, out, cli = [] }) {
  const t0 = Date.now();
  const r = spawnSync(
    process.execPath,
    [join(ROOT, 'dist/cli.js'), 'run', '--scenarios', scenarios, ...candidate, '--baseline-image', image, '--baseline-file', join(dir, 'none.json'), '--out', out, '--json', ...cli],
    { encoding: 'utf8', maxBuffer: 1 << 30 },
  );
  let report;
  try {
    report = JSON.parse(r.stdout);
  } catch {
    report = undefined;
  }
  return { report, stderr: r.stderr, status: r.status, seconds: (Date.now() - t0) / 1000 };
}
