// One command-line parser for the bench scripts (node:util parseArgs underneath): options are
// declared with their defaults, and the default's type is the option's type — a number is
// checked and converted, an array collects a repeated option, `list()` / `numberList()` split a
// comma-separated value, `optional()` has no default. `--help` prints the script's header
// comment (its usage line); an unknown option or a bad number is one error line and exit 2,
// never a stack trace. The broker options several benches share (`--broker`, `--image`, `--url`,
// `--management`) and the offline images are declared once here too.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';

/** The offline images scripts/build-images.sh builds (docs/performance.md's brokers). */
export const IMAGES = { v3: 'rabbitmq-perf-gate/rabbitmq:3.10.8', v4: 'rabbitmq-perf-gate/rabbitmq:4.0.5' };

/** A comma-separated option: `--modes a,b` → ['a', 'b']. */
export const list = (fallback) => ({ kind: 'list', fallback, numbers: false });
/** A comma-separated list of numbers: `--cpus 1.3,1.2` → [1.3, 1.2]. */
export const numberList = (fallback) => ({ kind: 'list', fallback, numbers: true });
/** A string option without a default (undefined unless given). */
export const optional = (kind = 'string') => ({ kind: kind === 'number' ? 'optional-number' : 'optional-string' });

/**
 * Where a bench's broker comes from: 'shared' = the broker at --url/--management (the machine's
 * RabbitMQ service unless PERF_GATE_BENCH_AMQP_URL / _MANAGEMENT_URL say otherwise), 'container'
 * = a private one from --image (bench/lib/container-broker.ts).
 */
export function brokerOptions(broker = 'shared') {
  return {
    broker,
    image: IMAGES.v3,
    url: process.env.PERF_GATE_BENCH_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
    management: process.env.PERF_GATE_BENCH_MANAGEMENT_URL ?? 'http://guest:guest@127.0.0.1:15672',
  };
}

/** The leading comment block of a script: its description and usage lines. */
export function headerOf(file) {
  try {
    const lines = readFileSync(file, 'utf8').split('\n');
    const start = lines[0].startsWith('#!') ? 1 : 0;
    const out = [];
    for (const l of lines.slice(start)) {
      if (!l.startsWith('//')) break;
      out.push(l.replace(/^\/\/ ?/, ''));
    }
    return out.join('\n');
  } catch {
    return '';
  }
}

function fail(script, message) {
  console.error(`${script}: ${message} (--help shows the options)`);
  process.exit(2);
}

/**
 * Parses `argv` (default: this process's arguments) against `spec` ({ name: default | list() |
 * optional() }); returns { values, positionals }. `script` names the bench in errors and `help`
 * is what --help prints (default: the header comment of the file being run).
 */
export function benchArgs(spec, { argv = process.argv.slice(2), script = basename(process.argv[1] ?? 'bench'), help, positionals = false } = {}) {
  const options = { help: { type: 'boolean', short: 'h', default: false } };
  for (const [name, d] of Object.entries(spec)) {
    if (typeof d === 'boolean') options[name] = { type: 'boolean', default: d };
    else if (Array.isArray(d)) options[name] = { type: 'string', multiple: true, default: d.map(String) };
    else if (d && typeof d === 'object' && d.kind) options[name] = { type: 'string' };
    else options[name] = { type: 'string', default: String(d) };
  }
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: positionals, strict: true });
  } catch (e) {
    fail(script, e.message.replace(/\. To specify a positional argument.*$/s, ''));
  }
  if (parsed.values.help) {
    console.log(help ?? headerOf(process.argv[1] ?? ''));
    process.exit(0);
  }
  const number = (name, text) => {
    const x = Number(text);
    if (text === '' || !Number.isFinite(x)) fail(script, `--${name} must be a number, got "${text}"`);
    return x;
  };
  const values = {};
  for (const [name, d] of Object.entries(spec)) {
    const v = parsed.values[name];
    if (typeof d === 'number') values[name] = number(name, v);
    else if (d && typeof d === 'object' && d.kind === 'list') {
      const items = (v ?? (Array.isArray(d.fallback) ? d.fallback.join(',') : String(d.fallback ?? '')))
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      values[name] = d.numbers ? items.map((s) => number(name, s)) : items;
    } else if (d && typeof d === 'object' && d.kind === 'optional-number') values[name] = v === undefined ? undefined : number(name, v);
    else values[name] = v;
  }
  return { values, positionals: parsed.positionals };
}
