// The action's orchestrator, kept small: inputs → stored baseline → pipeline → report files →
// job summary, annotations, comment → baseline refresh → outputs and exit status.
import * as core from '@actions/core';
import { isAbsolute, relative, resolve } from 'node:path';
import type { Baseline, RunReport, TrialResult } from './schema/types';
import { readActionInputs } from './config/action-inputs';
import { describeError, GateError } from './config/errors';
import { readBaseline, baselineFromRun, writeBaseline } from './compare/baseline-file';
import { runPipeline, newRunId, type Ui } from './pipeline';
import { renderSummary } from './report/markdown';
import { writeReportFiles } from './report/files';
import { readRunContext } from './github/context';
import { annotateComparisons, commentOnPullRequest, writeJobSummary } from './github/publish';

const actionUi: Ui = {
  info: (m) => core.info(m),
  warn: (m) => core.warning(m),
  group: (name, fn) => core.group(name, fn),
  trialDone: (done: number, total: number, t: TrialResult, eta: number) => {
    const m = t.metrics;
    const figures = ['published_rate', 'consumed_rate', 'latency_p99_ms'].filter((k) => k in m).map((k) => `${k}=${m[k]}`).join(' ');
    core.info(`[${done}/${total}] ${t.scenario} on ${t.target} #${t.trial + 1}: ${t.valid ? figures : `INVALID (${t.invalidReason})`} — about ${Math.round(eta)} s left`);
  },
};

/** One error annotation for a problem, pointing at the file and line when there is one. */
export function annotate(err: unknown): void {
  if (!(err instanceof GateError) || !err.where.file) {
    core.error(describeError(err), { title: 'rabbitmq-perf-gate' });
    return;
  }
  const workspace = process.env.GITHUB_WORKSPACE ?? process.cwd();
  const rel = relative(workspace, err.where.file);
  const file = rel.startsWith('..') || isAbsolute(rel) ? err.where.file : rel;
  core.error(`${file}${err.where.line ? `:${err.where.line}` : ''}: ${err.describe(false)}`, { title: 'rabbitmq-perf-gate', file, startLine: err.where.line });
}

function storedBaseline(file: string): Baseline | undefined {
  const read = readBaseline(file);
  if (read.status === 'ok') return read.baseline;
  if (read.status === 'missing') core.notice(`No stored baseline at ${file}: nothing to compare with until a refresh writes one.`);
  else annotate(read.error);
  return undefined;
}

export async function run(): Promise<void> {
  const controller = new AbortController();
  const cancel = () => controller.abort();
  process.once('SIGTERM', cancel);
  process.once('SIGINT', cancel);
  try {
    const s = readActionInputs();
    const ctx = readRunContext();
    const workspace = process.env.GITHUB_WORKSPACE ?? process.cwd();
    const baselinePath = resolve(workspace, s.baselineFile);
    const runId = newRunId();
    core.saveState('run-id', runId);
    const stored = storedBaseline(baselinePath);
    const report: RunReport = await runPipeline({
      scenarios: s.scenarios, candidate: s.candidate, repetitions: s.repetitions, seed: s.seed,
      mode: s.mode, stored, duration: s.duration, warmup: s.warmup, cwd: workspace, runId, signal: controller.signal,
    }, actionUi);

    const summary = renderSummary(report, { name: s.name, runUrl: ctx.runUrl });
    const files = writeReportFiles(resolve(workspace, s.reportDir), report, summary);
    await writeJobSummary(summary);
    annotateComparisons(report, workspace);
    if (s.mode === 'check') core.info(await commentOnPullRequest(report, ctx, { token: s.token, mode: s.comment, name: s.name }));
    if (s.mode === 'refresh') refresh(report, baselinePath, stored, ctx.headSha);

    core.setOutput('verdict', report.verdict);
    core.setOutput('regressions', String(report.regressions));
    core.setOutput('report', files.json);
    if (controller.signal.aborted) core.setFailed('The run was cancelled; partial results are in the report.');
    else if (report.verdict === 'fail' && s.failOnRegression) {
      core.setFailed(`${report.regressions} performance regression(s) beyond tolerance (see the job summary).`);
    }
  } catch (err) {
    annotate(err);
    process.exitCode = core.ExitCode.Failure;
  } finally {
    process.off('SIGTERM', cancel);
    process.off('SIGINT', cancel);
  }
}

function refresh(report: RunReport, file: string, previous: Baseline | undefined, commit?: string): void {
  const valid = report.trials.filter((t) => t.target === report.candidate && t.valid).length;
  if (!valid) {
    throw new GateError('no valid trials, so the stored baseline was left untouched', { file, field: 'baseline-file' }, 'fix the errors above and refresh again');
  }
  writeBaseline(file, baselineFromRun(report, previous, commit));
  core.info(`Baseline written to ${file} (${valid} valid trials).`);
}
