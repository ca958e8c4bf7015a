// `bisect`: the first image of an ordered list (--images, or --template with a git --range) that
// regresses against the list's known-good end, each step a same-run paired A/B through the
// pipeline (src/compare/bisect.ts owns the search and its state file). Progress on stderr; the
// report on stdout (a table on a terminal, Markdown when piped, JSON with --json), bisect.json,
// bisect.md and bisect.html in --out, the HTML also at --html. Exit: 0 culprit found, 1 only
// skipped or undecided images left where it is, 3 the time limit was reached (run it again to
// resume), 130 interrupted.
import { join, resolve } from 'node:path';
import { DEFAULTS } from '../config/defaults';
import type { BisectReport } from '../schema/types';
import { describeError } from '../schema/errors';
import { resolveScenarios } from '../config/catalogue';
import { parseLooks } from '../config/looks';
import { resolveBisectImages } from '../config/bisect-range';
import { runIdFromEnv } from '../config/cli-targets';
import { bisectSession } from '../compare/bisect';
import { writeFileAtomic } from '../compare/stored';
import { bisectTerminal, renderBisectHtml, renderBisectMarkdown } from '../report/bisect';
import { writeBisectFiles } from '../report/files';
import { terminalUi } from '../report/progress';
import { colorAllowed } from '../report/terminal';
import { candidateCouldNotStart, runPipeline } from '../pipeline/run';
import { numberOpt, type Values } from './shared';

/** The exit status of a finished session. */
export function bisectExit(r: BisectReport, interrupted: boolean): number {
  if (interrupted) return 130;
  if (r.status.state === 'running') return 3;
  return r.status.state === 'found' ? 0 : 1;
}

export async function bisectCommand(v: Values): Promise<number> {
  const scenarios = v.scenarios ?? DEFAULTS.scenarios;
  const { images, range } = await resolveBisectImages({ images: v.images, template: v.template, range: v.range, repo: v.repo === undefined ? undefined : resolve(v.repo), good: v.good, bad: v.bad });
  resolveScenarios(scenarios); // bad scenario input fails here, before any broker starts
  const out = resolve(v.out ?? DEFAULTS.reportDir);
  const stateFile = resolve(v.state ?? join(out, 'bisect-state.json'));
  const timeLimitMinutes = numberOpt('time-limit', v['time-limit'], 0) ?? DEFAULTS.timeLimitMinutes;
  const controller = new AbortController();
  const abort = () => controller.abort();
  process.once('SIGINT', abort);
  process.once('SIGTERM', abort);
  const log = terminalUi({});
  let report: BisectReport;
  try {
    report = await bisectSession(
      {
        definition: {
          images,
          range,
          scenarios,
          duration: numberOpt('duration', v.duration, 1),
          warmup: numberOpt('warmup', v.warmup, 0),
          looks: v.looks === undefined ? undefined : parseLooks(v.looks, '--looks'),
          repetitions: numberOpt('repetitions', v.repetitions, 1, true),
          attempts: numberOpt('attempts', v.attempts, 1, true),
        },
        stateFile,
        timeLimitMinutes,
        seed: numberOpt('seed', v.seed, 0, true),
        runId: runIdFromEnv(),
        signal: controller.signal,
      },
      {
        runAb: async (o) => {
          const ui = terminalUi({ [o.candidate.id]: o.candidate.label, [o.reference.id]: o.reference.label });
          try {
            return await runPipeline(o, ui);
          } finally {
            ui.stop();
          }
        },
        candidateFailed: (e) => candidateCouldNotStart(e),
        log: (m) => log.info(m),
        describe: describeError,
      },
    );
  } finally {
    log.stop();
    process.off('SIGINT', abort);
    process.off('SIGTERM', abort);
  }
  const markdown = renderBisectMarkdown(report, { name: 'rabbitmq-perf-gate' });
  const files = writeBisectFiles(out, report, markdown);
  if (v.html) {
    writeFileAtomic(resolve(v.html), renderBisectHtml(report));
    process.stderr.write(`HTML report: ${resolve(v.html)}\n`);
  }
  if (v.json) process.stdout.write(JSON.stringify(report, null, 1) + '\n');
  else if (process.stdout.isTTY) process.stdout.write(bisectTerminal(report, colorAllowed(process.stdout)));
  else process.stdout.write(markdown);
  process.stderr.write(`bisect report: ${files.json}; state: ${stateFile}\n`);
  if (report.stopped) process.stderr.write(`stopped: ${report.stopped}. Run the same command again to resume from ${stateFile}.\n`);
  return bisectExit(report, controller.signal.aborted);
}
