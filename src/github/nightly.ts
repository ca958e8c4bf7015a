// mode: nightly (a scheduled run) — tonight's broker-image A/B'd pair by pair against a fixed
// reference broker: the stored baseline's anchored broker (its recorded image ID or digest), or
// baseline-image. The night — each gating metric's paired ratio, which cancels the runner's
// drift, and the medians — is appended to history-file (bounded), every gating metric's series is
// searched for steps (E-divisive means, src/compare/nightly.ts), and the history file is committed
// as refresh-commit says: with `pr` the nights accumulate on the history pull request (read back
// from its branch each night until it is merged) and its description carries the new steps.
// A new step is in the job summary and the HTML report with the two nights around it and the
// bisect command that would search between them; a new regression is an error annotation and
// fails the step when fail-on-regression is true (a scheduled run's failure is its notification).
import * as core from '@actions/core';
import { resolve } from 'node:path';
import type { ActionSettings } from '../config/action-inputs';
import type { NightlySummary } from '../schema/types';
import { GateError } from '../schema/errors';
import { metricDef } from '../metrics/definitions';
import { imageLabel } from '../broker/docker-cli';
import { isRunScope } from '../compare/judge';
import { emptyHistory, parseHistory, readHistory } from '../compare/history-file';
import { recordNight } from '../compare/nightly';
import { newRunId, runPipeline } from '../pipeline/run';
import { type RunContext, workspaceDir } from './context';
import { actionUi, type Outcome, runProblem, storedBaseline } from './gate';
import { publishReport } from './publish';
import { commitFile, fileOnBranch, refreshBranch } from './refresh';
import { nightlySection } from './trend';

/** The image label a night's source commit is read from when input revision is empty. */
export const REVISION_LABEL = 'org.opencontainers.image.revision';

const signed = (m: number) => `${m >= 0 ? '+' : '−'}${Math.abs(m * 100).toFixed(1)} %`;

export async function nightlyMode(s: ActionSettings, ctx: RunContext, signal: AbortSignal): Promise<Outcome> {
  const workspace = workspaceDir();
  const historyPath = resolve(workspace, s.historyFile);
  // With refresh-commit: pr the nights accumulate on the history pull request's branch until it
  // is merged: tonight appends to that copy when there is one.
  const branch = refreshBranch(s.name, 'nightly-history');
  const pending = s.refreshCommit === 'pr' ? await fileOnBranch(historyPath, s, ctx, branch) : undefined;
  const read = pending !== undefined ? parseHistory(pending, `${s.historyFile} on ${branch}`) : readHistory(historyPath);
  if (read.status === 'unusable') throw read.error;
  const history = read.status === 'ok' ? read.history : emptyHistory();
  if (pending !== undefined && read.status === 'ok') core.info(`Appending to ${s.historyFile} as it is on ${branch} (${read.history.entries.length} nights, not merged yet).`);
  const baselinePath = resolve(workspace, s.baselineFile);
  const stored = storedBaseline(baselinePath, true);
  const image = s.targets.brokerImage;
  if (!image) throw new GateError('mode: nightly measures an image it starts', { field: 'broker-image' }, "give tonight's image, e.g. broker-image: pivotalrabbitmq/rabbitmq:main-otp28");
  const baselineImage = s.targets.baselineImage;
  if (!baselineImage && !stored?.anchor) {
    throw new GateError(
      `mode: nightly compares tonight's image pair by pair with a fixed reference broker, and ${s.baselineFile} ${stored ? 'records no broker to start again' : 'does not exist'}`,
      { file: s.baselineFile, field: 'baseline-file' },
      'run mode: refresh once with broker-image set to the reference image (it records that broker), or give baseline-image',
    );
  }
  const docker = (id: string, img: string, config: string[]) => ({
    id,
    label: img,
    kind: 'docker' as const,
    image: img,
    configFiles: config.map((f) => resolve(workspace, f)),
    nodes: s.targets.nodes,
    env: {},
    setup: [],
    network: 'host' as const,
  });
  const candidate = docker('candidate', image, s.targets.brokerConfig);
  const reference = baselineImage
    ? { ...docker('baseline', baselineImage, s.targets.baselineConfig ?? s.targets.brokerConfig), label: baselineImage === image ? `${baselineImage} (reference)` : baselineImage }
    : undefined;
  const runId = newRunId();
  core.saveState('run-id', runId);
  const report = await runPipeline(
    {
      scenarios: s.scenarios,
      candidate,
      reference,
      mode: 'check',
      stored,
      repetitions: s.repetitions,
      seed: s.seed,
      duration: s.duration,
      warmup: s.warmup,
      cwd: workspace,
      runId,
      signal,
      timeLimitSeconds: s.timeLimitMinutes * 60,
      anchor: true,
      sequential: s.sequential,
      failFast: s.failFast,
      looks: s.looks,
      targetNote: `nightly: ${image} against ${baselineImage ?? "the stored baseline's broker"}`,
    },
    actionUi,
  );
  const stopped = report.errors.find((e) => isRunScope(e.scope));
  let summary: NightlySummary | undefined;
  if (!signal.aborted && !stopped) {
    const revision = s.revision ?? (await imageLabel(image, REVISION_LABEL));
    summary = recordNight(report, history, {
      file: historyPath,
      displayFile: s.historyFile,
      commit: ctx.headSha,
      runUrl: ctx.runUrl,
      revision,
      template: s.bisect.template,
      scenarios: s.scenarios,
      notes: revision ? [] : [`no source commit recorded for ${image}: give input revision (or build the image with the label ${REVISION_LABEL}) so a new step comes with a bisect range`],
    }).summary;
    report.nightly = summary;
    core.info(`Nightly history ${s.historyFile}: ${summary.nights} nights, ${summary.newSteps.length} new step(s).`);
  } else core.warning(`${stopped?.message ?? 'The run was cancelled.'} A partial night is not recorded: ${s.historyFile} was left untouched.`);
  const pub = await publishReport(report, s, ctx, undefined, summary ? nightlySection(summary) : undefined);
  const out: Outcome = { report, reportFile: pub.json, decides: false, failed: pub.failed, problem: runProblem(report), stoppedEarly: !!stopped && !signal.aborted };
  if (!summary) return out;
  core.setOutput('new-steps', String(summary.newSteps.length));
  for (const step of summary.newSteps) {
    const text = `${step.scenario} ${metricDef(step.metric).label}: a step of ${signed(step.magnitude)} (${step.series === 'ratio' ? 'paired ratio against the reference' : 'median'}) between the nights of ${step.before} and ${step.at}`;
    if (step.worse) core.error(`Performance step: ${text}. See the job summary for the bisect command.`, { title: 'rabbitmq-perf-gate nightly' });
    else core.notice(`Performance step: ${text}.`, { title: 'rabbitmq-perf-gate nightly' });
  }
  if (summary.newSteps.some((x) => x.worse) && s.failOnRegression) out.failed = true;
  const n = summary.newSteps.length;
  out.refreshUrl = await commitFile(historyPath, s, ctx, {
    branch,
    what: 'Nightly history',
    message: `Nightly ${s.name} performance history: ${report.createdAt.slice(0, 10)}${n ? `, ${n} new step${n === 1 ? '' : 's'}` : ''}`,
    body: () =>
      [
        "Nightly run of rabbitmq-perf-gate: tonight's image against the fixed reference broker, appended to the history.",
        '',
        nightlySection(summary!),
        ctx.runUrl ? `[Workflow run](${ctx.runUrl})` : '',
      ].join('\n'),
  });
  return out;
}
