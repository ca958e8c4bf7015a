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

/** Writes the arms' target files into `dir` and returns arm → CLI arguments. */
export function armArgs(dir, image, { cpus10 = 1.47, cpus5 = 1.55 } = {}) {
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
    cpu: target('cpu', 'cpus 1.16', 'resources:\n  cpus: 1.16\n'),
    cpu10: target('cpu10', `cpus ${cpus10}`, `resources:\n  cpus: ${cpus10}\n`),
    cpu5: target('cpu5', `cpus ${cpus5}`, `resources:\n  cpus: ${cpus5}\n`),
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

/** The quota an arm puts on its candidate, if any (kept in the ledger's rows). */
export const armQuota = (arm, { cpus10 = 1.47, cpus5 = 1.55 } = {}) => ({ cpu: 1.16, cpu10: cpus10, cpu5: cpus5 })[arm];

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
