// `nightly` and `steps`. nightly: tonight's image (--image) A/B'd against a fixed reference — the
// stored baseline's anchored broker, or --baseline-image — through the pipeline; the night's
// paired ratios and medians appended to the history file (--history-file), every gating metric's
// series searched for steps (src/compare/nightly.ts), and a new step reported with the bisect
// command that would search between its two nights. Exit 1 when a new step is a regression.
// steps: the change points of a history file, without running anything.
import { resolve } from 'node:path';
import { DEFAULTS } from '../config/defaults';
import type { NightlyHistory, RunReport } from '../schema/types';
import { GateError } from '../schema/errors';
import { resolveScenarios } from '../config/catalogue';
import { parseLooks } from '../config/looks';
import { cliTargets, runIdFromEnv } from '../config/cli-targets';
import { imageLabel } from '../broker/docker-cli';
import { readBaseline } from '../compare/stored';
import { emptyHistory, readHistory } from '../compare/history-file';
import { detectSteps, nightlySummary, recordNight } from '../compare/nightly';
import { isRunScope } from '../compare/judge';
import { runPipeline } from '../pipeline/run';
import { renderSummary } from '../report/markdown';
import { writeReportFiles } from '../report/files';
import { terminalUi } from '../report/progress';
import { nightlySection } from '../github/trend';
import { emit, numberOpt, type Values } from './shared';

export const REVISION_LABEL = 'org.opencontainers.image.revision';

/** The history to append to: the file's, a new one when it is missing, an error when it is broken. */
export function historyOrEmpty(file: string): NightlyHistory {
  const read = readHistory(file);
  if (read.status === 'unusable') throw read.error;
  return read.status === 'ok' ? read.history : emptyHistory();
}

export async function nightlyCommand(v: Values): Promise<number> {
  if (!v.image && !v.target) throw new GateError('nightly measures an image it starts', { field: '--image' }, "give tonight's image, e.g. --image pivotalrabbitmq/rabbitmq:main-otp28");
  const baselineFile = resolve(v['baseline-file'] ?? DEFAULTS.baselineFile);
  const historyFile = resolve(v['history-file'] ?? DEFAULTS.historyFile);
  const scenarios = v.scenarios ?? DEFAULTS.scenarios;
  const { candidate, reference } = await cliTargets('check', v);
  resolveScenarios(scenarios);
  const history = historyOrEmpty(historyFile);
  const read = readBaseline(baselineFile);
  if (read.status === 'unusable') throw read.error;
  const stored = read.status === 'ok' ? read.baseline : undefined;
  if (!reference && !stored?.anchor) {
    throw new GateError(
      `nightly compares tonight's image pair by pair with a fixed reference broker, and ${baselineFile} ${stored ? 'records no broker to start again' : 'does not exist'}`,
      { file: baselineFile, field: '--baseline-file' },
      'refresh a baseline once on the reference image (rabbitmq-perf-gate refresh --image IMG), or give --baseline-image',
    );
  }
  const controller = new AbortController();
  const abort = () => controller.abort();
  process.once('SIGINT', abort);
  process.once('SIGTERM', abort);
  const ui = terminalUi(Object.fromEntries([candidate, reference].filter((t) => t).map((t) => [t!.id, t!.label])));
  let report: RunReport;
  try {
    report = await runPipeline(
      {
        scenarios,
        candidate,
        reference,
        mode: 'check',
        stored,
        signal: controller.signal,
        runId: runIdFromEnv(),
        repetitions: numberOpt('repetitions', v.repetitions, 1, true),
        seed: numberOpt('seed', v.seed, 0, true),
        duration: numberOpt('duration', v.duration, 1),
        warmup: numberOpt('warmup', v.warmup, 0),
        timeLimitSeconds: (numberOpt('time-limit', v['time-limit'], 0) ?? DEFAULTS.timeLimitMinutes) * 60,
        sequential: !v['no-sequential'],
        looks: v.looks === undefined ? undefined : parseLooks(v.looks, '--looks'),
      },
      ui,
    );
  } finally {
    ui.stop();
    process.off('SIGINT', abort);
    process.off('SIGTERM', abort);
  }
  const stopped = report.errors.find((e) => isRunScope(e.scope));
  if (!controller.signal.aborted && !stopped) {
    const image = candidate.kind === 'docker' ? candidate.image : undefined;
    const revision = v.revision ?? (image ? await imageLabel(image, REVISION_LABEL) : undefined);
    const { summary } = recordNight(report, history, { file: historyFile, displayFile: v['history-file'] ?? DEFAULTS.historyFile, revision, template: v.template, scenarios });
    report.nightly = summary;
    ui.info(`history: ${historyFile} (${summary.nights} nights)`);
  } else ui.warn(`${stopped?.message ?? 'interrupted'}: a partial night is not recorded; ${historyFile} was left untouched`);
  const section = report.nightly ? nightlySection(report.nightly) : '';
  const summaryMd = renderSummary(report, { name: 'rabbitmq-perf-gate', trend: section });
  const files = writeReportFiles(resolve(v.out ?? DEFAULTS.reportDir), report, summaryMd);
  emit(report, v, () => summaryMd);
  if (process.stdout.isTTY && !v.json && section) process.stdout.write(`\n${section}`);
  ui.info(`report: ${files.json}`);
  if (controller.signal.aborted) return 130;
  if (stopped) return 2;
  return report.nightly?.newSteps.some((s) => s.worse) ? 1 : 0;
}

export function stepsCommand(file: string, v: Values): number {
  const read = readHistory(file);
  if (read.status === 'missing') throw new GateError('no such history file', { file }, 'give the path of a nightly history (written by nightly)');
  if (read.status === 'unusable') throw read.error;
  const h = read.history;
  const last = h.entries.at(-1);
  // Every step in the series counts as new here: nothing is recorded.
  const d = detectSteps({ ...h, steps: [] }, last?.createdAt ?? new Date().toISOString(), {
    minMagnitude: numberOpt('min-magnitude', v['min-magnitude'], 0),
    pValue: numberOpt('p-value', v['p-value'], 0),
  });
  const summary = nightlySummary(d, file);
  if (v.json) process.stdout.write(JSON.stringify(summary, null, 1) + '\n');
  else process.stdout.write(nightlySection(summary));
  return 0;
}
