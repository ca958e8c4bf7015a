// `run` and `refresh`: the same pipeline as the action, on this machine's brokers or containers;
// progress on stderr, the result on stdout, report files in --out, and with refresh the baseline.
import { resolve } from 'node:path';
import { DEFAULTS } from '../config/defaults';
import type { Baseline, RunReport } from '../schema/types';
import { GateError } from '../schema/errors';
import { resolveScenarios } from '../config/catalogue';
import { parseLooks } from '../config/looks';
import { cliTargets, runIdFromEnv } from '../config/cli-targets';
import { readBaseline, baselineFromRun, writeBaseline } from '../compare/baseline-file';
import { runPipeline } from '../pipeline';
import { renderSummary } from '../report/markdown';
import { writeReportFiles } from '../report/files';
import { terminalUi } from '../report/progress';
import { emit, numberOpt, type Values } from './shared';

export async function runCommand(mode: 'check' | 'refresh', v: Values): Promise<number> {
  const baselineFile = resolve(v['baseline-file'] ?? DEFAULTS.baselineFile);
  const { candidate, reference, note, diff } = await cliTargets(mode, v);
  const runId = runIdFromEnv();
  resolveScenarios(v.scenarios ?? DEFAULTS.scenarios); // bad scenario input fails here, before anything else is said
  const opts = {
    repetitions: numberOpt('repetitions', v.repetitions, 1, true), seed: numberOpt('seed', v.seed, 0, true),
    duration: numberOpt('duration', v.duration, 1), warmup: numberOpt('warmup', v.warmup, 0), freezeIdle: !v['no-freeze'],
    anchor: !v['no-anchor'], sequential: !v['no-sequential'], failFast: !v['no-fail-fast'], flameGraph: v['flame-graph'] === true, looks: v.looks === undefined ? undefined : parseLooks(v.looks, '--looks'),
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

