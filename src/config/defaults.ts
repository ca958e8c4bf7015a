// Every input default in one place, for the action (action.yml states them too; a test keeps the
// two equal) and the CLI. The only difference between them is where a broker is looked for: the
// action's `localhost` (a `services:` container), the CLI's 127.0.0.1 (this machine).
export const DEFAULTS = {
  scenarios: 'pr',
  brokerLabel: 'broker',
  baselineFile: '.github/rabbitmq-perf/baseline.json',
  historyFile: '.github/rabbitmq-perf/history.json',
  targetFile: '.github/rabbitmq-perf/target.yml',
  reportDir: 'rabbitmq-perf-gate-report',
  mode: 'check',
  comment: 'always',
  name: 'rabbitmq-perf-gate',
  refreshCommit: 'none',
  brokerNodes: 1,
  failOnRegression: true,
  anchoredBaseline: true,
  sequential: true,
  failFast: true,
  flameGraph: false,
  timeLimitMinutes: 60,
  action: { amqpUrl: 'amqp://guest:guest@localhost:5672', managementUrl: 'http://localhost:15672' },
  cli: { amqpUrl: 'amqp://guest:guest@127.0.0.1:5672', managementUrl: 'http://127.0.0.1:15672' },
} as const;

/** action.yml input name → the default it must state (test/unit/defaults.test.ts). */
export const ACTION_INPUT_DEFAULTS: Record<string, string> = {
  scenarios: DEFAULTS.scenarios,
  'broker-url': DEFAULTS.action.amqpUrl,
  'management-url': DEFAULTS.action.managementUrl,
  'broker-nodes': String(DEFAULTS.brokerNodes),
  'target-file': DEFAULTS.targetFile,
  'broker-label': DEFAULTS.brokerLabel,
  'baseline-file': DEFAULTS.baselineFile,
  mode: DEFAULTS.mode,
  'fail-on-regression': String(DEFAULTS.failOnRegression),
  'anchored-baseline': String(DEFAULTS.anchoredBaseline),
  sequential: String(DEFAULTS.sequential),
  'fail-fast': String(DEFAULTS.failFast),
  'flame-graph': String(DEFAULTS.flameGraph),
  comment: DEFAULTS.comment,
  name: DEFAULTS.name,
  'report-dir': DEFAULTS.reportDir,
  'time-limit': String(DEFAULTS.timeLimitMinutes),
  'refresh-commit': DEFAULTS.refreshCommit,
  'history-file': DEFAULTS.historyFile,
};
