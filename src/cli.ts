#!/usr/bin/env node
// The terminal front end: run and refresh (the same pipeline as the action), compare (two finished
// reports, or a report against a baseline.json), report (Markdown or a self-contained HTML file),
// list, cleanup (containers left by killed runs), bisect (the first regressing image of a list or git range), nightly (append a night to the
// history and report new steps) and steps (a history's change points). Progress goes to stderr (a
// bar with ETA on a terminal, plain lines in logs); results go to stdout: a coloured table on a
// terminal (no colour with NO_COLOR), Markdown when piped, JSON with --json. Exit status: 0
// pass/warn/inconclusive, 1 on a regression, 2 on bad input or a broken environment, 130 when
// interrupted (bisect and nightly: see their modules). This file only dispatches: each command is
// a module in src/cli/ (run.ts, list.ts, cleanup.ts, report.ts: report and compare, bisect.ts, nightly.ts:
// nightly and steps), their shared options in shared.ts.
import { describeError } from './schema/errors';
import { TOOL_VERSION } from './metrics/fingerprint';
import { COMMANDS, HELP, parse } from './cli/shared';
import { runCommand } from './cli/run';
import { listCommand } from './cli/list';
import { cleanupCommand } from './cli/cleanup';
import { compareCommand, reportCommand } from './cli/report';
import { bisectCommand } from './cli/bisect';
import { nightlyCommand, stepsCommand } from './cli/nightly';

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
  if (values.version && !command) {
    process.stdout.write(`${TOOL_VERSION}\n`);
    return 0;
  }
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
  if (args.length < spec.args) {
    return usageError(
      command === 'report'
        ? 'report needs the path of a report.json'
        : command === 'steps'
          ? 'steps needs the path of a nightly history file'
          : 'compare needs two files: NEW/report.json and OLD/report.json or a baseline.json',
    );
  }
  try {
    switch (command) {
      case 'run':
        return await runCommand('check', values);
      case 'refresh':
        return await runCommand('refresh', values);
      case 'list':
        return listCommand(values);
      case 'cleanup':
        return await cleanupCommand(values);
      case 'report':
        return reportCommand(args[0], values);
      case 'bisect':
        return await bisectCommand(values);
      case 'nightly':
        return await nightlyCommand(values);
      case 'steps':
        return stepsCommand(args[0], values);
      default:
        return compareCommand(args, values);
    }
  } catch (e) {
    process.stderr.write(`error: ${describeError(e)}\n`);
    return 2;
  }
}

process.exitCode = await main(process.argv.slice(2));
