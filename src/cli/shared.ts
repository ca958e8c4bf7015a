// The CLI's shared pieces: the help text, the options and which command takes which, parsing,
// number options, and writing a result (HTML file, JSON,
// a terminal table or Markdown). One module per command sits beside it; src/cli.ts dispatches.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULTS } from '../config/defaults';
import type { RunReport } from '../schema/types';
import { GateError } from '../schema/errors';
import { writeFileAtomic } from '../compare/stored';
import { renderHtml } from '../report/html';
import { colorAllowed, terminalTable } from '../report/terminal';
import { TOOL_VERSION } from '../metrics/fingerprint';

export const HELP = `rabbitmq-perf-gate ${TOOL_VERSION} — RabbitMQ performance regression gate

Usage:
  rabbitmq-perf-gate run     [options]      run scenarios; compare with the stored baseline and/or a reference broker
  rabbitmq-perf-gate refresh [options]      run scenarios and rewrite the stored baseline
  rabbitmq-perf-gate compare NEW.json OLD.json  judge a report against an older report or a baseline.json
  rabbitmq-perf-gate report  REPORT.json    print a finished run's report (Markdown), or write it as HTML
  rabbitmq-perf-gate list                   presets and scenarios with expected durations
  rabbitmq-perf-gate cleanup                remove broker containers left by runs whose process is gone
                                            (a SIGKILL, an OOM kill); list those of runs still going
  rabbitmq-perf-gate bisect  [options]      find the first image of an ordered list that regresses against its first
  rabbitmq-perf-gate nightly [options]      A/B tonight's image against the stored baseline's broker, append the
                                            result to the history file and report new steps (change points)
  rabbitmq-perf-gate steps   HISTORY.json   the change points of a nightly history file

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
                         preset's looks — pr: 10,12,…,64 — unless --repetitions is given)
  --no-sequential        run only, A/B: the fixed design (the preset's pairs) even where it has looks
  --no-fail-fast         run only, sequential A/B: run every scenario until decided, not only until
                         the first look at which one fails
  --flame-graph          run only, A/B of containers: a differential flame graph (perf) of each
                         failing scenario in the HTML report (docs/evidence.md)
  --no-anchor            run only: compare with the stored trials even when the baseline records
                         the broker it was refreshed on (by default that broker is started again
                         next to the candidate and a same-run A/B decides)
  --baseline-file F      stored baseline (default: ${DEFAULTS.baselineFile})
  --repetitions N        trials per scenario and target (default: what the selection's gating
                         metrics need to reach significance, at least 5; A/B runs compare pairs
                         and need more; a preset may ask for more still (pr: 24 pairs when
                         fixed) — see 'list'); in an A/B it gives the fixed design
  --duration S, --warmup S  override every scenario's measured window / warm-up (seconds)
  --seed N               reproduce a trial order
  --out DIR              where report.json and summary.md go (default: ${DEFAULTS.reportDir})
  --resume DIR           go on with an interrupted run from the report in DIR (its --out): the same
                         seed, plan and settings; its targets (or the ones given) are started again
                         and must be the same brokers; the trials it kept plus the rest of its plan
                         are written to DIR (or --out)
Options for bisect (and --scenarios, --duration, --warmup, --looks, --repetitions, --seed, --out):
  --images A,B,…         the images in order: the first known good, the last known bad
  --good X, --bad Y      in --images: the known-good and known-bad images (names or positions)
  --template T --range GOOD..BAD   or: the image of each first-parent commit of a git range,
                         T with {sha} (or {sha:N}) where the commit goes, e.g. my/rabbitmq:sha-{sha}
  --repo DIR             the git checkout the range is read from (default: the current directory)
  --state FILE           the search's state, written after every step; the same command resumes
                         from it (default: OUT/bisect-state.json)
  --time-limit MIN       minutes this session may take (default ${DEFAULTS.timeLimitMinutes}; 0 = none); resume to go on
  --attempts N           A/Bs an undecided image gets, each with a wider cap (default 2)
  Each step is a same-run paired A/B of one image against the good end (as run --baseline-image):
  a regression = bad, no regression = good, not decided = undecided (repeated, never guessed); an image that
  cannot be pulled or started is skipped and named. Exit status: 0 culprit found, 1 only skipped or
  undecided images left between the last good and first bad, 3 time limit reached (run it again).
Options for nightly (and the run options): --image IMG (tonight's), --history-file F (default
  ${DEFAULTS.historyFile}), --revision SHA (its source commit), --template T (for the bisect command
  a new step suggests). The reference is the stored baseline's broker (--baseline-file; refresh it
  once with --image), or --baseline-image.
Options for steps: --min-magnitude F (default 0.03), --p-value P (default 0.001)
Output options (run, refresh, compare, report, bisect, nightly; steps takes --json):
  --json                 print the JSON report instead of a table / Markdown
  --html FILE            also write the self-contained HTML report (charts, no network needed)
  -h, --help             this help
  --version              print the version (also in every report's fingerprint)

Exit status: 0 pass, warn or inconclusive; 1 a regression beyond tolerance; 2 bad input or a
broken environment; 130 interrupted by SIGINT (Ctrl-C), 143 by SIGTERM: the containers are
removed, the trials that ran are still written (no baseline) and --resume goes on with them; a
second signal quits at once.

Examples:
  rabbitmq-perf-gate list
  rabbitmq-perf-gate run --scenarios smoke --repetitions 3
  rabbitmq-perf-gate run --image my/rabbitmq:pr-123 --baseline-image rabbitmq:4.0-management --scenarios pr
  rabbitmq-perf-gate run --target khepri.yml --baseline-target mnesia.yml --scenarios metadata
  rabbitmq-perf-gate refresh --scenarios pr --baseline-file .github/rabbitmq-perf/baseline.json
  rabbitmq-perf-gate compare new/report.json .github/rabbitmq-perf/baseline.json
  rabbitmq-perf-gate report rabbitmq-perf-gate-report/report.json --html report.html
  rabbitmq-perf-gate run --resume rabbitmq-perf-gate-report
  rabbitmq-perf-gate run --broker-url amqp://user:pass@10.0.0.5:5672 --management-url http://10.0.0.5:15672 --json > result.json
  rabbitmq-perf-gate bisect --template pivotalrabbitmq/rabbitmq:sha-{sha}-otp28 --range v3.13.1..v3.13.2 --repo ../rabbitmq-server --scenarios one_fast
  rabbitmq-perf-gate nightly --image pivotalrabbitmq/rabbitmq:main-otp28 --scenarios pr
`;

const OPTIONS = {
  scenarios: { type: 'string' },
  'broker-url': { type: 'string' },
  'management-url': { type: 'string' },
  'broker-label': { type: 'string' },
  image: { type: 'string' },
  'baseline-image': { type: 'string' },
  target: { type: 'string' },
  'baseline-target': { type: 'string' },
  'baseline-file': { type: 'string' },
  repetitions: { type: 'string' },
  duration: { type: 'string' },
  warmup: { type: 'string' },
  seed: { type: 'string' },
  out: { type: 'string' },
  resume: { type: 'string' },
  images: { type: 'string' },
  template: { type: 'string' },
  range: { type: 'string' },
  repo: { type: 'string' },
  good: { type: 'string' },
  bad: { type: 'string' },
  state: { type: 'string' },
  'time-limit': { type: 'string' },
  attempts: { type: 'string' },
  'history-file': { type: 'string' },
  revision: { type: 'string' },
  'min-magnitude': { type: 'string' },
  'p-value': { type: 'string' },
  json: { type: 'boolean' },
  html: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
  'no-freeze': { type: 'boolean' },
  'no-anchor': { type: 'boolean' },
  looks: { type: 'string' },
  'no-sequential': { type: 'boolean' },
  'no-fail-fast': { type: 'boolean' },
  'flame-graph': { type: 'boolean' },
} as const;

const RUN_OPTS = ['scenarios', 'broker-url', 'management-url', 'broker-label', 'image', 'target', 'baseline-file', 'repetitions', 'duration', 'warmup', 'seed', 'out', 'resume', 'json', 'html'];
export const COMMANDS: Record<string, { options: string[]; args: number }> = {
  run: { options: [...RUN_OPTS, 'baseline-image', 'baseline-target', 'no-freeze', 'no-anchor', 'looks', 'no-sequential', 'no-fail-fast', 'flame-graph'], args: 0 },
  refresh: { options: RUN_OPTS, args: 0 },
  compare: { options: ['json', 'html'], args: 2 },
  report: { options: ['json', 'html'], args: 1 },
  list: { options: ['json'], args: 0 },
  cleanup: { options: ['json'], args: 0 },
  bisect: {
    options: ['images', 'good', 'bad', 'template', 'range', 'repo', 'state', 'time-limit', 'attempts', 'scenarios', 'duration', 'warmup', 'looks', 'repetitions', 'seed', 'out', 'json', 'html'],
    args: 0,
  },
  nightly: { options: [...RUN_OPTS, 'baseline-image', 'history-file', 'revision', 'template', 'time-limit', 'looks', 'no-sequential'], args: 0 },
  steps: { options: ['min-magnitude', 'p-value', 'json'], args: 1 },
};

export function parse(argv: string[]) {
  return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
}

export type Values = ReturnType<typeof parse>['values'];

export function numberOpt(name: string, v: string | undefined, min: number, integer = false): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) {
    throw new GateError(`must be ${integer ? 'a whole number' : 'a number'} of at least ${min}, got "${v}"`, { field: `--${name}` });
  }
  return n;
}

export function emit(report: RunReport, v: Values, markdown: () => string): void {
  if (v.html) {
    writeFileAtomic(resolve(v.html), renderHtml(report));
    process.stderr.write(`HTML report: ${resolve(v.html)}\n`);
  }
  if (v.json) process.stdout.write(JSON.stringify(report, null, 1) + '\n');
  else if (process.stdout.isTTY) process.stdout.write(terminalTable(report, colorAllowed(process.stdout)));
  else process.stdout.write(markdown());
}
