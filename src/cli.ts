#!/usr/bin/env node
// The terminal front end: the same pipeline as the action (run, refresh), plus compare, report
// and list. Progress goes to stderr (a bar with ETA on a terminal, plain lines in logs); results
// go to stdout (Markdown, or JSON with --json). Exit status: 0 pass/warn/inconclusive, 1 on a
// regression, 2 on bad input or a broken environment.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Baseline, RunReport, TargetSpec, TrialResult } from './schema/types';
import { describeError, GateError } from './config/errors';
import { catalogueIds, loadPresets, resolveScenarios } from './config/catalogue';
import { readBaseline, baselineFromRun, writeBaseline } from './compare/baseline-file';
import { runPipeline, type Ui } from './pipeline';
import { estimateSeconds, buildPlan } from './plan/plan';
import { renderSummary } from './report/markdown';
import { writeReportFiles } from './report/files';
import { TOOL_VERSION } from './metrics/fingerprint';

const HELP = `rabbitmq-perf-gate ${TOOL_VERSION} — RabbitMQ performance regression gate

Usage:
  rabbitmq-perf-gate run     [options]   run scenarios, compare with the stored baseline if any
  rabbitmq-perf-gate refresh [options]   run scenarios and rewrite the stored baseline
  rabbitmq-perf-gate list                presets and scenarios with expected durations
  rabbitmq-perf-gate report  REPORT.json print the Markdown report of a finished run

Options:
  --scenarios X        preset, scenario file/folder, or ids (default: pr)
  --broker-url URL     AMQP URL (default: amqp://guest:guest@127.0.0.1:5672)
  --management-url URL management API URL (default: http://127.0.0.1:15672)
  --baseline-file F    stored baseline (default: .github/rabbitmq-perf/baseline.json)
  --repetitions N      trials per scenario and target (default: 5)
  --duration S         override every scenario's measured window (seconds)
  --warmup S           override every scenario's warm-up (seconds)
  --seed N             reproduce a trial order
  --out DIR            where report.json and summary.md go (default: rabbitmq-perf-gate-report)
  --json               print the JSON report instead of Markdown
  -h, --help           this help

Examples:
  rabbitmq-perf-gate list
  rabbitmq-perf-gate run --scenarios smoke --repetitions 3
  rabbitmq-perf-gate refresh --scenarios pr --baseline-file .github/rabbitmq-perf/baseline.json
  rabbitmq-perf-gate run --broker-url amqp://user:pass@127.0.0.1:5672 --management-url http://127.0.0.1:15672 --json
`;

const OPTIONS = {
  scenarios: { type: 'string' },
  'broker-url': { type: 'string' },
  'management-url': { type: 'string' },
  'baseline-file': { type: 'string' },
  repetitions: { type: 'string' },
  duration: { type: 'string' },
  warmup: { type: 'string' },
  seed: { type: 'string' },
  out: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

function numberOpt(name: string, v: string | undefined, min: number): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n < min) throw new GateError(`--${name} is "${v}"`, { field: `--${name}` }, `use a number of at least ${min}`);
  return n;
}

function terminalUi(): Ui {
  const tty = process.stderr.isTTY;
  const started = Date.now();
  return {
    info: (m) => process.stderr.write(`${tty ? '\r\x1b[K' : ''}${m}\n`),
    warn: (m) => process.stderr.write(`${tty ? '\r\x1b[K\x1b[33m' : ''}warning: ${m}${tty ? '\x1b[0m' : ''}\n`),
    group: async (name, fn) => {
      process.stderr.write(`${name}…\n`);
      return fn();
    },
    trialDone: (done: number, total: number, t: TrialResult, eta: number) => {
      const m = t.metrics;
      const figs = t.valid ? ['published_rate', 'consumed_rate', 'latency_p99_ms'].filter((k) => k in m).map((k) => `${k}=${m[k]}`).join(' ') : `INVALID: ${t.invalidReason}`;
      if (!tty) {
        process.stderr.write(`[${done}/${total}] ${t.scenario} on ${t.target} #${t.trial + 1}: ${figs}\n`);
        return;
      }
      const width = 24;
      const filled = Math.round((done / total) * width);
      const elapsed = Math.round((Date.now() - started) / 1000);
      process.stderr.write(`\r\x1b[K${t.scenario} #${t.trial + 1} on ${t.target}: ${figs}\n`);
      process.stderr.write(`[${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${done}/${total}  ${elapsed}s elapsed, ~${Math.round(eta)}s left`);
      if (done === total) process.stderr.write('\n');
    },
  };
}

async function runCommand(mode: 'check' | 'refresh', v: ReturnType<typeof parse>['values']): Promise<number> {
  const baselineFile = resolve(v['baseline-file'] ?? '.github/rabbitmq-perf/baseline.json');
  const read = readBaseline(baselineFile);
  const ui = terminalUi();
  if (read.status === 'unusable') ui.warn(`${read.error.describe()} — continuing without a stored baseline`);
  const stored: Baseline | undefined = read.status === 'ok' ? read.baseline : undefined;
  const candidate: TargetSpec = {
    id: 'candidate', label: 'broker', kind: 'url',
    amqpUrl: v['broker-url'] ?? 'amqp://guest:guest@127.0.0.1:5672',
    managementUrl: v['management-url'] ?? 'http://127.0.0.1:15672',
  };
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort());
  process.once('SIGTERM', () => controller.abort());
  const report = await runPipeline({
    scenarios: v.scenarios ?? 'pr', candidate, mode, stored, signal: controller.signal,
    repetitions: numberOpt('repetitions', v.repetitions, 1) ?? 5,
    duration: numberOpt('duration', v.duration, 1), warmup: numberOpt('warmup', v.warmup, 0), seed: numberOpt('seed', v.seed, 0),
  }, ui);
  const summary = renderSummary(report, { name: 'rabbitmq-perf-gate' });
  const files = writeReportFiles(resolve(v.out ?? 'rabbitmq-perf-gate-report'), report, summary);
  if (mode === 'refresh') {
    if (!report.trials.some((t) => t.valid)) throw new GateError('no valid trials; the stored baseline was left untouched', { file: baselineFile });
    writeBaseline(baselineFile, baselineFromRun(report, stored));
    ui.info(`baseline written to ${baselineFile}`);
  }
  process.stdout.write(v.json ? JSON.stringify(report, null, 1) + '\n' : summary);
  ui.info(`report: ${files.json}`);
  return report.verdict === 'fail' ? 1 : 0;
}

function listCommand(): number {
  const lines = ['Presets:'];
  for (const p of loadPresets()) {
    const { scenarios } = resolveScenarios(p.name);
    const secs = estimateSeconds(buildPlan(scenarios, ['candidate'], 5, 1));
    lines.push(`  ${p.name.padEnd(10)} ${String(scenarios.length).padStart(3)} scenarios, ~${Math.ceil(secs / 60)} min per target at 5 repetitions — ${p.description}`);
  }
  lines.push('', 'Scenarios:');
  for (const id of catalogueIds()) {
    const [s] = resolveScenarios(id).scenarios;
    lines.push(`  ${id.padEnd(32)} ${s.warmupSeconds}+${s.durationSeconds} s  ${s.description.slice(0, 90)}`);
  }
  process.stdout.write(lines.join('\n') + '\n');
  return 0;
}

function reportCommand(file: string | undefined, json: boolean): number {
  if (!file) throw new GateError('report needs the path of a report.json', {}, 'rabbitmq-perf-gate report rabbitmq-perf-gate-report/report.json');
  let report: RunReport;
  try {
    report = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new GateError(`cannot read the report (${(e as Error).message})`, { file });
  }
  process.stdout.write(json ? JSON.stringify(report, null, 1) + '\n' : renderSummary(report, { name: 'rabbitmq-perf-gate' }));
  return 0;
}

function parse(argv: string[]) {
  return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
}

export async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (e) {
    process.stderr.write(`error: ${(e as Error).message}\n\n${HELP}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, arg] = positionals;
  if (values.help || !command) {
    process.stdout.write(HELP);
    return command || values.help ? 0 : 2;
  }
  try {
    switch (command) {
      case 'run': return await runCommand('check', values);
      case 'refresh': return await runCommand('refresh', values);
      case 'list': return listCommand();
      case 'report': return reportCommand(arg, Boolean(values.json));
      default:
        process.stderr.write(`error: unknown command "${command}"\n\n${HELP}`);
        return 2;
    }
  } catch (e) {
    process.stderr.write(`error: ${describeError(e)}\n`);
    return 2;
  }
}

process.exitCode = await main(process.argv.slice(2));
