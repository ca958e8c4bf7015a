#!/usr/bin/env node
// The terminal front end: run and refresh (the same pipeline as the action), compare (two finished
// reports, or a report against a baseline.json), report (Markdown or a self-contained HTML file)
// and list. Progress goes to stderr (a bar with ETA on a terminal, plain lines in logs); results go
// to stdout: a coloured table on a terminal (no colour with NO_COLOR), Markdown when piped, JSON
// with --json. Exit status: 0 pass/warn/inconclusive, 1 on a regression, 2 on bad input or a
// broken environment, 130 when interrupted.
import { DEFAULTS } from './config/defaults';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Baseline, RunReport } from './schema/types';
import { describeError, GateError } from './schema/errors';
import { catalogueIds, loadPresets, resolveScenarios } from './config/catalogue';
import { parseLooks } from './config/looks';
import { abEstimate } from './compare/sequential';
import { readBaseline, baselineFromRun, writeBaseline, trialValues, writeFileAtomic } from './compare/baseline-file';
import { defaultRepetitions } from './compare/compare';
import { isRunScope, judge } from './compare/judge';
import { runPipeline } from './pipeline';
import { estimateSeconds, buildPlan } from './plan/plan';
import { renderSummary } from './report/markdown';
import { renderHtml } from './report/html';
import { writeReportFiles } from './report/files';
import { colorAllowed, terminalTable } from './report/terminal';
import { terminalUi } from './report/progress';
import { cliTargets, runIdFromEnv } from './config/cli-targets';
import { fingerprintMismatch, TOOL_VERSION } from './metrics/fingerprint';

const HELP = `rabbitmq-perf-gate ${TOOL_VERSION} — RabbitMQ performance regression gate

Usage:
  rabbitmq-perf-gate run     [options]      run scenarios; compare with the stored baseline and/or a reference broker
  rabbitmq-perf-gate refresh [options]      run scenarios and rewrite the stored baseline
  rabbitmq-perf-gate compare NEW.json OLD.json  judge a report against an older report or a baseline.json
  rabbitmq-perf-gate report  REPORT.json    print a finished run's report (Markdown), or write it as HTML
  rabbitmq-perf-gate list                   presets and scenarios with expected durations

Options for run and refresh:
  --scenarios X          preset, scenario file/folder, or comma-separated ids (default: pr)
  --broker-url URL       AMQP URL of the broker to measure (default: ${DEFAULTS.cli.amqpUrl})
  --management-url URL   its management API (default: ${DEFAULTS.cli.managementUrl})
  --broker-label NAME    name shown for it (default: broker)
  --image IMG            measure a broker started from this Docker image instead of --broker-url
  --target FILE          measure the broker a target file describes (image, config, env, setup; docs/targets.md)
  --baseline-image IMG   run only: also start this image and A/B it in the same run (decides the verdict)
  --baseline-target FILE run only: the same with a target file instead of an image
  --no-freeze            run only: keep the idle target running during the other's trials (by
                         default a docker target is frozen while the other one is measured)
  --looks N,N,…          run only, A/B: group-sequential — judge each scenario after these many
                         pairs and stop it once decided; the last is the cap (default: the
                         preset's looks, e.g. pr 8,12,16,24,32, unless --repetitions is given)
  --no-sequential        run only, A/B: the fixed design (the preset's pairs) even where it has looks
  --no-anchor            run only: compare with the stored trials even when the baseline records
                         the broker it was refreshed on (by default that broker is started again
                         next to the candidate and a same-run A/B decides)
  --baseline-file F      stored baseline (default: ${DEFAULTS.baselineFile})
  --repetitions N        trials per scenario and target (default: what the selection's gating
                         metrics need to reach significance, at least 5; A/B runs compare pairs
                         and need more; a preset may ask for more still (pr: 24 pairs) — see 'list')
  --duration S, --warmup S  override every scenario's measured window / warm-up (seconds)
  --seed N               reproduce a trial order
  --out DIR              where report.json and summary.md go (default: ${DEFAULTS.reportDir})
Output options (run, refresh, compare, report):
  --json                 print the JSON report instead of a table / Markdown
  --html FILE            also write the self-contained HTML report (charts, no network needed)
  -h, --help             this help

Exit status: 0 pass, warn or inconclusive; 1 a regression beyond tolerance; 2 bad input or a
broken environment; 130 interrupted (partial results are still written).

Examples:
  rabbitmq-perf-gate list
  rabbitmq-perf-gate run --scenarios smoke --repetitions 3
  rabbitmq-perf-gate run --image my/rabbitmq:pr-123 --baseline-image rabbitmq:4.0-management --scenarios pr
  rabbitmq-perf-gate run --target khepri.yml --baseline-target mnesia.yml --scenarios metadata
  rabbitmq-perf-gate refresh --scenarios pr --baseline-file .github/rabbitmq-perf/baseline.json
  rabbitmq-perf-gate compare new/report.json .github/rabbitmq-perf/baseline.json
  rabbitmq-perf-gate report rabbitmq-perf-gate-report/report.json --html report.html
  rabbitmq-perf-gate run --broker-url amqp://user:pass@10.0.0.5:5672 --management-url http://10.0.0.5:15672 --json > result.json
`;

const OPTIONS = {
  scenarios: { type: 'string' }, 'broker-url': { type: 'string' }, 'management-url': { type: 'string' },
  'broker-label': { type: 'string' }, image: { type: 'string' }, 'baseline-image': { type: 'string' },
  target: { type: 'string' }, 'baseline-target': { type: 'string' },
  'baseline-file': { type: 'string' }, repetitions: { type: 'string' }, duration: { type: 'string' },
  warmup: { type: 'string' }, seed: { type: 'string' }, out: { type: 'string' },
  json: { type: 'boolean' }, html: { type: 'string' }, help: { type: 'boolean', short: 'h' }, 'no-freeze': { type: 'boolean' }, 'no-anchor': { type: 'boolean' }, looks: { type: 'string' }, 'no-sequential': { type: 'boolean' },
} as const;
type Values = ReturnType<typeof parse>['values'];

const RUN_OPTS = ['scenarios', 'broker-url', 'management-url', 'broker-label', 'image', 'target', 'baseline-file', 'repetitions', 'duration', 'warmup', 'seed', 'out', 'json', 'html'];
const COMMANDS: Record<string, { options: string[]; args: number }> = {
  run: { options: [...RUN_OPTS, 'baseline-image', 'baseline-target', 'no-freeze', 'no-anchor', 'looks', 'no-sequential'], args: 0 },
  refresh: { options: RUN_OPTS, args: 0 },
  compare: { options: ['json', 'html'], args: 2 },
  report: { options: ['json', 'html'], args: 1 },
  list: { options: ['json'], args: 0 },
};

function numberOpt(name: string, v: string | undefined, min: number, integer = false): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) {
    throw new GateError(`must be ${integer ? 'a whole number' : 'a number'} of at least ${min}, got "${v}"`, { field: `--${name}` });
  }
  return n;
}

function emit(report: RunReport, v: Values, markdown: () => string): void {
  if (v.html) {
    writeFileAtomic(resolve(v.html), renderHtml(report));
    process.stderr.write(`HTML report: ${resolve(v.html)}\n`);
  }
  if (v.json) process.stdout.write(JSON.stringify(report, null, 1) + '\n');
  else if (process.stdout.isTTY) process.stdout.write(terminalTable(report, colorAllowed(process.stdout)));
  else process.stdout.write(markdown());
}

async function runCommand(mode: 'check' | 'refresh', v: Values): Promise<number> {
  const baselineFile = resolve(v['baseline-file'] ?? DEFAULTS.baselineFile);
  const { candidate, reference, note, diff } = await cliTargets(mode, v);
  const runId = runIdFromEnv();
  resolveScenarios(v.scenarios ?? DEFAULTS.scenarios); // bad scenario input fails here, before anything else is said
  const opts = {
    repetitions: numberOpt('repetitions', v.repetitions, 1, true), seed: numberOpt('seed', v.seed, 0, true),
    duration: numberOpt('duration', v.duration, 1), warmup: numberOpt('warmup', v.warmup, 0), freezeIdle: !v['no-freeze'],
    anchor: !v['no-anchor'], sequential: !v['no-sequential'], looks: v.looks === undefined ? undefined : parseLooks(v.looks, '--looks'),
  };
  const ui = terminalUi(Object.fromEntries([candidate, reference].filter((t) => t).map((t) => [t!.id, t!.label])));
  const read = readBaseline(baselineFile);
  if (read.status === 'unusable') ui.warn(`${read.error.describe()} — continuing without a stored baseline`);
  if (read.status === 'missing' && mode === 'check' && !reference) ui.info(`no stored baseline at ${baselineFile}: nothing to compare with (create one with "refresh")`);
  const stored: Baseline | undefined = read.status === 'ok' ? read.baseline : undefined;
  const controller = new AbortController();
  const abort = () => controller.abort();
  process.once('SIGINT', abort);
  process.once('SIGTERM', abort);
  let report: RunReport;
  try {
    report = await runPipeline({ scenarios: v.scenarios ?? DEFAULTS.scenarios, candidate, reference, mode, stored, signal: controller.signal, runId, targetNote: note, targetDiff: diff, ...opts }, ui);
  } finally {
    ui.stop();
    process.off('SIGINT', abort);
    process.off('SIGTERM', abort);
  }
  const summary = renderSummary(report, { name: 'rabbitmq-perf-gate' });
  const files = writeReportFiles(resolve(v.out ?? DEFAULTS.reportDir), report, summary);
  if (mode === 'refresh' && !controller.signal.aborted) {
    if (!report.trials.some((t) => t.valid && t.target === report.candidate)) throw new GateError('no valid trials; the stored baseline was left untouched', { file: baselineFile });
    writeBaseline(baselineFile, baselineFromRun(report, stored));
    ui.info(`baseline written to ${baselineFile}`);
  }
  emit(report, v, () => summary);
  ui.info(`report: ${files.json}`);
  if (controller.signal.aborted) {
    ui.warn('interrupted: the report holds the trials that finished');
    return 130;
  }
  return report.verdict === 'fail' ? 1 : 0;
}

function listCommand(v: Values): number {
  const presets = loadPresets().map((p) => {
    const { scenarios } = resolveScenarios(p.name);
    const repetitions = defaultRepetitions(scenarios);
    const ab = abEstimate(scenarios, p.pairs, p.looks);
    return {
      name: p.name, description: p.description, scenarios: scenarios.map((s) => s.id),
      repetitions, secondsPerTarget: Math.round(estimateSeconds(buildPlan(scenarios, ['candidate'], repetitions, 1))), abRepetitions: ab.pairs, abSeconds: ab.seconds,
      ...(ab.looks ? { abLooks: ab.looks, abSecondsFirstLook: ab.firstSeconds, abSecondsCap: ab.capSeconds } : {}),
    };
  });
  const scenarios = catalogueIds().map((id) => {
    const specs = resolveScenarios(id).scenarios;
    const s = specs[0];
    return { id, variants: specs.map((x) => x.id), warmupSeconds: s.warmupSeconds, durationSeconds: s.durationSeconds, gate: s.gate, description: s.description };
  });
  if (v.json) {
    process.stdout.write(JSON.stringify({ presets, scenarios }, null, 1) + '\n');
    return 0;
  }
  const lines = ['Presets:'];
  for (const p of presets) {
    lines.push(`  ${p.name.padEnd(10)} ${String(p.scenarios.length).padStart(3)} scenarios, ~${Math.ceil(p.secondsPerTarget / 60)} min alone (${p.repetitions} trials), `
      + (p.abLooks ? `~${Math.ceil(p.abSecondsFirstLook! / 60)}–${Math.ceil(p.abSecondsCap! / 60)} min A/B (sequential, ${p.abLooks[0]}–${p.abLooks.at(-1)} pairs; fixed ${p.abRepetitions} pairs ~${Math.ceil(p.abSeconds / 60)} min)`
        : `~${Math.ceil(p.abSeconds / 60)} min A/B (${p.abRepetitions} pairs)`) + ` — ${p.description}`);
  }
  lines.push('', 'Scenarios (warm-up + measured seconds; ×N: variants over the file\'s axes):');
  for (const s of scenarios) {
    const text = s.description.replace(/\s+/g, ' ');
    const short = text.length > 80 ? `${text.slice(0, 79).replace(/\s+\S*$/, '')}…` : text;
    const variants = s.variants.length > 1 ? `×${s.variants.length}` : '';
    lines.push(`  ${s.id.padEnd(30)} ${`${s.warmupSeconds}+${s.durationSeconds} s`.padEnd(7)} ${variants.padEnd(3)} ${short}`);
  }
  process.stdout.write(lines.join('\n') + '\n');
  return 0;
}

/** A report.json or baseline.json, with JSON errors located by line. */
function readResult(file: string): { report?: RunReport; baseline?: Baseline } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new GateError(`cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, { file });
  }
  let data: Record<string, unknown>;
  try {
    data = JSON.parse(text);
  } catch (e) {
    const pos = /position (\d+)/.exec((e as Error).message);
    throw new GateError(`not valid JSON (${(e as Error).message})`, { file, line: pos ? text.slice(0, Number(pos[1])).split('\n').length : undefined });
  }
  if (data && Array.isArray(data.trials) && Array.isArray(data.scenarios) && Array.isArray(data.comparisons)) return { report: data as unknown as RunReport };
  if (data?.scenarios && typeof data.scenarios === 'object' && !Array.isArray(data.scenarios)) {
    const read = readBaseline(file);
    if (read.status === 'ok') return { baseline: read.baseline };
    if (read.status === 'unusable') throw read.error;
  }
  throw new GateError('neither a report.json (trials, scenarios, comparisons) nor a baseline.json', { file }, 'pass the report.json of a run or a stored baseline');
}

function reportCommand(file: string, v: Values): number {
  const { report } = readResult(file);
  if (!report) throw new GateError('this is a baseline.json, not a report', { file }, `compare a run with it: rabbitmq-perf-gate compare REPORT.json ${file}`);
  emit(report, { ...v, json: v.json }, () => renderSummary(report, { name: 'rabbitmq-perf-gate' }));
  return 0;
}

function compareCommand(files: string[], v: Values): number {
  let [a, b] = files.map((f) => ({ file: f, ...readResult(f) }));
  if (a.baseline && b.report) [a, b] = [b, a]; // a baseline is always the reference
  const cand = a.report;
  if (!cand) throw new GateError('compare needs at least one report.json', { file: a.file }, 'compare NEW/report.json OLD/report.json, or NEW/report.json baseline.json');
  const candTarget = cand.targets.find((t) => t.id === cand.candidate);
  const candidate = { label: candTarget?.label ?? cand.candidate, values: trialValues(cand, cand.candidate) };
  const refReport = b.report;
  const refId = refReport ? (cand.targets.some((t) => t.id === 'reference') ? 'reference-run' : 'reference') : 'stored';
  const refTarget = refReport ? refReport.targets.find((t) => t.id === refReport.candidate) : b.baseline!.target;
  const reference = refReport
    ? { label: `${refTarget?.label ?? refReport.candidate} (${b.file})`, values: trialValues(refReport, refReport.candidate) }
    : { label: 'stored baseline', values: Object.fromEntries(Object.entries(b.baseline!.scenarios).map(([k, s]) => [k, s.metrics])) };
  const mismatch = candTarget ? fingerprintMismatch((refReport ?? b.baseline!).fingerprint, refTarget, cand.fingerprint, candTarget) : undefined;
  const judgement = judge({
    scenarios: cand.scenarios, trials: cand.trials, candidate: { id: cand.candidate, ...candidate },
    independent: { sample: reference, against: refId, mayNotFail: mismatch, what: `${a.file} compared with ${b.file}` },
    judged: true, incomplete: cand.errors.some((e) => isRunScope(e.scope)),
  });
  const report: RunReport = {
    ...cand, mode: 'check', ...judgement,
    // Two reports: both runs' judged trials side by side, so the HTML shows the A/B layout.
    targets: [...cand.targets.filter((t) => t.id === cand.candidate), ...(refReport && refTarget ? [{ ...refTarget, id: refId, label: reference.label }] : [])],
    trials: [...cand.trials.filter((t) => t.target === cand.candidate), ...(refReport ? refReport.trials.filter((t) => t.target === refReport.candidate).map((t) => ({ ...t, target: refId })) : [])],
  };
  emit(report, v, () => renderSummary(report, { name: 'rabbitmq-perf-gate' }));
  return report.verdict === 'fail' ? 1 : 0;
}

function parse(argv: string[]) {
  return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
}

function usageError(message: string): number {
  process.stderr.write(`error: ${message} (see "rabbitmq-perf-gate --help")\n`);
  return 2;
}

export async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (e) {
    const m = /^(Unknown option|Option) '([^']+)'[^.]*/.exec((e as Error).message);
    return usageError(m ? m[0] : (e as Error).message.split('\n')[0]);
  }
  const { values, positionals } = parsed;
  const [command, ...args] = positionals;
  if (values.help || command === 'help') {
    process.stdout.write(HELP);
    return 0;
  }
  if (!command) {
    process.stderr.write(HELP);
    return 2;
  }
  const spec = COMMANDS[command];
  if (!spec) return usageError(`unknown command "${command}"`);
  const wrong = Object.keys(values).filter((k) => !spec.options.includes(k));
  if (wrong.length) return usageError(`--${wrong[0]} does not apply to "${command}"`);
  if (args.length > spec.args) return usageError(`"${command}" takes ${spec.args || 'no'} file argument${spec.args === 1 ? '' : 's'}, got "${args.join('" "')}"`);
  if (args.length < spec.args) return usageError(command === 'report' ? 'report needs the path of a report.json' : 'compare needs two files: NEW/report.json and OLD/report.json or a baseline.json');
  try {
    switch (command) {
      case 'run': return await runCommand('check', values);
      case 'refresh': return await runCommand('refresh', values);
      case 'list': return listCommand(values);
      case 'report': return reportCommand(args[0], values);
      default: return compareCommand(args, values);
    }
  } catch (e) {
    process.stderr.write(`error: ${describeError(e)}\n`);
    return 2;
  }
}

process.exitCode = await main(process.argv.slice(2));
