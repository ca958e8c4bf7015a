// The action's orchestrator, kept small: inputs → the mode's work (src/github/: check/refresh run
// the matrix or a shard of it, merge combines shards, comment posts a fork's report from a
// workflow_run job, nightly appends to the history, bisect searches images and sets its own
// outputs) → outputs and exit status. Problems become one annotation each.
import * as core from '@actions/core';
import { readActionInputs } from './config/action-inputs';
import { readRunContext } from './github/context';
import { mergeMode, runMode, type Outcome } from './github/gate';
import { commentMode } from './github/comment-mode';
import { bisectMode } from './github/bisect';
import { nightlyMode } from './github/nightly';
import { annotate } from './github/publish';
import { interruptible } from './broker/cleanup';
import { headlineText, runAnswer } from './report/format';

export async function run(): Promise<void> {
  // On a cancel (SIGINT, then SIGTERM 7.5 s later), the containers go first and the partial
  // report is written within 7 s (src/broker/cleanup.ts: interruptible).
  await interruptible(
    async (signal) => {
      try {
        const s = readActionInputs();
        const ctx = readRunContext();
        if (s.mode === 'bisect') {
          await bisectMode(s, ctx, signal); // sets its own outputs and status
          return;
        }
        const out: Outcome =
          s.mode === 'comment' ? await commentMode(s, ctx) : s.mode === 'merge' ? await mergeMode(s, ctx) : s.mode === 'nightly' ? await nightlyMode(s, ctx, signal) : await runMode(s, ctx, signal);
        const { report } = out;
        core.setOutput('verdict', report.verdict);
        core.setOutput('answer', runAnswer(report));
        core.setOutput('headline', headlineText(report));
        core.setOutput('regressions', String(report.regressions));
        core.setOutput('report', out.reportFile);
        if (out.commentUrl) core.setOutput('comment-url', out.commentUrl);
        if (out.refreshUrl) core.setOutput('refresh-url', out.refreshUrl);
        if (signal.aborted) core.setFailed(`The run was cancelled; the partial results (${report.trials.length} trials) are in the report.`);
        else if (out.stoppedEarly) core.setFailed(out.problem ?? 'The run stopped early.');
        else {
          if (out.problem) core.error(out.problem, { title: 'rabbitmq-perf-gate' });
          if (out.decides && report.verdict === 'fail' && s.failOnRegression) {
            core.setFailed(`${report.regressions} performance regression(s) beyond tolerance (see the job summary).`);
          } else if (out.failed) process.exitCode = core.ExitCode.Failure; // already annotated
        }
      } catch (err) {
        annotate(err);
        process.exitCode = core.ExitCode.Failure;
      }
    },
    { reason: () => 'the run was cancelled', drainMs: 7_000 },
  );
}
