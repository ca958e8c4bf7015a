#!/usr/bin/env node
import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  CHARTS_JS,
  DEFAULTS,
  HTML_CSS,
  SCHEMA_VERSION,
  TOOL,
  TOOL_VERSION,
  abEstimate,
  baselineFromRun,
  baselineHint,
  buildPlan,
  catalogueIds,
  ciLabel,
  defaultRepetitions,
  delta,
  estimateSeconds,
  evidenceForRegressions,
  fingerprint,
  fingerprintMismatch,
  headlineText,
  html,
  inlineSafe,
  isRunScope,
  jsonScript,
  judge,
  lineDiff,
  loadPresets,
  loadTarget,
  md,
  measuredRows,
  median,
  metricDef,
  nText,
  nightlySection,
  nothingToCompare,
  num,
  parseLooks,
  pct,
  readBaseline,
  renderHtml,
  renderSummary,
  resolveScenarios,
  rng,
  runPipeline,
  sequentialText,
  startFailedTarget,
  storedPowerText,
  trialValues,
  uplotAssets,
  withScenarioKind,
  workingTree,
  writeBaseline,
  writeFileAtomic,
  writeReportFiles
} from "./chunks/chunk-CY4PLG3V.js";
import {
  GateError,
  assertDockerAvailable,
  describeError,
  imageLabel
} from "./chunks/chunk-6WY7LTPX.js";
import "./chunks/chunk-FDGYIFXX.js";

// src/cli/shared.ts
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";

// src/report/terminal.ts
var colorAllowed = (s) => Boolean(process.env.FORCE_COLOR) && process.env.FORCE_COLOR !== "0" || Boolean(s.isTTY) && !process.env.NO_COLOR && process.env.TERM !== "dumb";
var paint = (on) => (code, s) => on ? `\x1B[${code}m${s}\x1B[0m` : s;
function columns(header, rows, right) {
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  return { pad: (row) => row.map((s, i) => right.has(i) ? s.padStart(w[i]) : s.padEnd(w[i])) };
}
function measuredTable(r, c) {
  const rows = measuredRows(r).map((m) => [m.target, m.scenario, m.label, num(m.median, m.unit), `${num(m.min)} \u2013 ${num(m.max)}`, `${m.n} of ${m.trials}`]);
  const header = ["Target", "Scenario", "Metric", "Median", "Min \u2013 max", "Valid trials"];
  const { pad } = columns(header, rows, /* @__PURE__ */ new Set([3, 4, 5]));
  return [c("1", pad(header).join("  ").trimEnd()), ...rows.map((row) => pad(row).join("  ").trimEnd()), "", baselineHint(r).replace(/`/g, ""), ""].join("\n");
}
function terminalTable(r, color) {
  const c = paint(color);
  const vc = { pass: "32", warn: "33", fail: "1;31", inconclusive: "2" };
  const icon = { pass: "\u2714", warn: "!", fail: "\u2718", inconclusive: "?" };
  if (nothingToCompare(r)) return `${c("1", "= MEASURED")}  ${headlineText(r)}

${measuredTable(r, c)}`;
  const head = `${c(vc[r.verdict] ?? "0", `${icon[r.verdict] ?? "?"} ${String(r.verdict).toUpperCase()}`)}  ${headlineText(r)}: ${r.regressions} regression(s), ${r.improvements} improvement(s) \u2014 decided by ${r.decidedBy}`;
  if (!r.comparisons.length) return `${head}
`;
  const power = storedPowerText(r);
  const order = (x) => x.verdict === "fail" ? 0 : x.verdict === "warn" ? 1 : x.gating ? 2 : 3;
  const cs = r.comparisons.filter((x) => x.gating || x.verdict === "fail" || x.verdict === "warn" || x.change === "better" || x.change === "worse").sort((a, b) => order(a) - order(b));
  const multi = new Set(r.comparisons.map((x) => x.against)).size > 1;
  const rows = cs.map((x) => [
    x.scenario + (multi ? ` vs ${x.against === "stored" ? "stored" : x.baselineLabel}` : ""),
    metricDef(x.metric).label + (x.gating ? " \u2605" : ""),
    num(x.baselineMedian, x.unit),
    num(x.candidateMedian, x.unit),
    delta(x),
    nText(x),
    x.verdict + (x.gating ? "" : " (info)")
  ]);
  const hidden = r.comparisons.length - cs.length;
  const against = multi ? "" : `${r.comparisons[0].candidateLabel} vs ${r.comparisons[0].against === "stored" ? "the stored baseline" : r.comparisons[0].baselineLabel}
`;
  const header = ["Scenario", "Metric", "Baseline", "Now", `\u0394 [${ciLabel(r)}]`, "n", "Verdict"];
  const { pad } = columns(header, rows, /* @__PURE__ */ new Set([2, 3, 4, 5]));
  const body = rows.map((row, k) => {
    const x = cs[k];
    const cells = pad(row);
    if (x.change !== "same" && x.change !== "unknown") cells[4] = c(x.change === "better" ? "32" : "31", cells[4]);
    cells[6] = c(vc[x.verdict] ?? "0", row[6]);
    return cells.join("  ").trimEnd();
  });
  const foot = `\u2605 gating metric; \u0394 is the Hodges-Lehmann ratio with its ${ciLabel(r)}${hidden ? `; ${hidden} unchanged reported-only metric${hidden === 1 ? "" : "s"} not shown (see --json or --html)` : ""}.`;
  const seq = sequentialText(r);
  const inside = evidenceForRegressions(r).map((g) => `  ${g.scenario} vs ${g.baselineLabel}: ${g.lines.length ? g.lines.join("; ") : g.none}`);
  const evidence = inside.length ? [c("1", "What moved inside the broker"), ...inside, ""] : [];
  return [head, ...power ? [power] : [], ...seq ? [seq] : [], ...r.effectNote ? [r.effectNote] : [], against, c("1", pad(header).join("  ").trimEnd()), ...body, "", ...evidence, foot, ""].join("\n");
}

// src/cli/shared.ts
var HELP = `rabbitmq-perf-gate ${TOOL_VERSION} \u2014 RabbitMQ performance regression gate

Usage:
  rabbitmq-perf-gate run     [options]      run scenarios; compare with the stored baseline and/or a reference broker
  rabbitmq-perf-gate refresh [options]      run scenarios and rewrite the stored baseline
  rabbitmq-perf-gate compare NEW.json OLD.json  judge a report against an older report or a baseline.json
  rabbitmq-perf-gate report  REPORT.json    print a finished run's report (Markdown), or write it as HTML
  rabbitmq-perf-gate list                   presets and scenarios with expected durations
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
  --looks N,N,\u2026          run only, A/B: group-sequential \u2014 judge each scenario after these many
                         pairs and stop it once decided; the last is the cap (default: the
                         preset's looks \u2014 pr: 10,12,16,24,32,40 \u2014 unless --repetitions is given)
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
                         fixed) \u2014 see 'list'); in an A/B it gives the fixed design
  --duration S, --warmup S  override every scenario's measured window / warm-up (seconds)
  --seed N               reproduce a trial order
  --out DIR              where report.json and summary.md go (default: ${DEFAULTS.reportDir})
Options for bisect (and --scenarios, --duration, --warmup, --looks, --repetitions, --seed, --out):
  --images A,B,\u2026         the images in order: the first known good, the last known bad
  --good X, --bad Y      in --images: the known-good and known-bad images (names or positions)
  --template T --range GOOD..BAD   or: the image of each first-parent commit of a git range,
                         T with {sha} (or {sha:N}) where the commit goes, e.g. my/rabbitmq:sha-{sha}
  --repo DIR             the git checkout the range is read from (default: the current directory)
  --state FILE           the search's state, written after every step; the same command resumes
                         from it (default: OUT/bisect-state.json)
  --time-limit MIN       minutes this session may take (default ${DEFAULTS.timeLimitMinutes}; 0 = none); resume to go on
  --attempts N           A/Bs an undecided image gets, each with a wider cap (default 2)
  Each step is a same-run paired A/B of one image against the good end (as run --baseline-image):
  fail = bad, pass = good, warn/inconclusive = undecided (repeated, never guessed); an image that
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
  rabbitmq-perf-gate bisect --template pivotalrabbitmq/rabbitmq:sha-{sha}-otp28 --range v3.13.1..v3.13.2 --repo ../rabbitmq-server --scenarios one_fast
  rabbitmq-perf-gate nightly --image pivotalrabbitmq/rabbitmq:main-otp28 --scenarios pr
`;
var OPTIONS = {
  scenarios: { type: "string" },
  "broker-url": { type: "string" },
  "management-url": { type: "string" },
  "broker-label": { type: "string" },
  image: { type: "string" },
  "baseline-image": { type: "string" },
  target: { type: "string" },
  "baseline-target": { type: "string" },
  "baseline-file": { type: "string" },
  repetitions: { type: "string" },
  duration: { type: "string" },
  warmup: { type: "string" },
  seed: { type: "string" },
  out: { type: "string" },
  images: { type: "string" },
  template: { type: "string" },
  range: { type: "string" },
  repo: { type: "string" },
  good: { type: "string" },
  bad: { type: "string" },
  state: { type: "string" },
  "time-limit": { type: "string" },
  attempts: { type: "string" },
  "history-file": { type: "string" },
  revision: { type: "string" },
  "min-magnitude": { type: "string" },
  "p-value": { type: "string" },
  json: { type: "boolean" },
  html: { type: "string" },
  help: { type: "boolean", short: "h" },
  "no-freeze": { type: "boolean" },
  "no-anchor": { type: "boolean" },
  looks: { type: "string" },
  "no-sequential": { type: "boolean" },
  "no-fail-fast": { type: "boolean" },
  "flame-graph": { type: "boolean" }
};
var RUN_OPTS = ["scenarios", "broker-url", "management-url", "broker-label", "image", "target", "baseline-file", "repetitions", "duration", "warmup", "seed", "out", "json", "html"];
var COMMANDS = {
  run: { options: [...RUN_OPTS, "baseline-image", "baseline-target", "no-freeze", "no-anchor", "looks", "no-sequential", "no-fail-fast", "flame-graph"], args: 0 },
  refresh: { options: RUN_OPTS, args: 0 },
  compare: { options: ["json", "html"], args: 2 },
  report: { options: ["json", "html"], args: 1 },
  list: { options: ["json"], args: 0 },
  bisect: { options: ["images", "good", "bad", "template", "range", "repo", "state", "time-limit", "attempts", "scenarios", "duration", "warmup", "looks", "repetitions", "seed", "out", "json", "html"], args: 0 },
  nightly: { options: [...RUN_OPTS, "baseline-image", "history-file", "revision", "template", "time-limit", "looks", "no-sequential"], args: 0 },
  steps: { options: ["min-magnitude", "p-value", "json"], args: 1 }
};
function parse(argv) {
  return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
}
function numberOpt(name, v, min, integer = false) {
  if (v === void 0) return void 0;
  const n = Number(v);
  if (v.trim() === "" || !Number.isFinite(n) || n < min || integer && !Number.isInteger(n)) {
    throw new GateError(`must be ${integer ? "a whole number" : "a number"} of at least ${min}, got "${v}"`, { field: `--${name}` });
  }
  return n;
}
function emit(report, v, markdown) {
  if (v.html) {
    writeFileAtomic(resolve(v.html), renderHtml(report));
    process.stderr.write(`HTML report: ${resolve(v.html)}
`);
  }
  if (v.json) process.stdout.write(JSON.stringify(report, null, 1) + "\n");
  else if (process.stdout.isTTY) process.stdout.write(terminalTable(report, colorAllowed(process.stdout)));
  else process.stdout.write(markdown());
}
function readResult(file) {
  let text;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new GateError(`cannot read it (${e.code ?? e.message})`, { file });
  }
  let data;
  try {
    data = JSON.parse(text);
  } catch (e) {
    const pos = /position (\d+)/.exec(e.message);
    throw new GateError(`not valid JSON (${e.message})`, { file, line: pos ? text.slice(0, Number(pos[1])).split("\n").length : void 0 });
  }
  if (data && Array.isArray(data.trials) && Array.isArray(data.scenarios) && Array.isArray(data.comparisons)) {
    return { report: { ...data, scenarios: data.scenarios.map(withScenarioKind) } };
  }
  if (data?.scenarios && typeof data.scenarios === "object" && !Array.isArray(data.scenarios)) {
    const read = readBaseline(file);
    if (read.status === "ok") return { baseline: read.baseline };
    if (read.status === "unusable") throw read.error;
  }
  throw new GateError("neither a report.json (trials, scenarios, comparisons) nor a baseline.json", { file }, "pass the report.json of a run or a stored baseline");
}

// src/cli/run.ts
import { resolve as resolve3 } from "node:path";

// src/config/cli-targets.ts
import { existsSync, statSync } from "node:fs";
import { basename, resolve as resolve2 } from "node:path";
async function targetFile(option, file, id) {
  if (!existsSync(file) || !statSync(file).isFile()) {
    throw new GateError("target file not found", { file, field: `--${option}` }, "give the path of a target file (see docs/targets.md), relative to the current directory");
  }
  const t = await loadTarget(workingTree(process.cwd()), file, id);
  const secrets = Object.entries(t.spec.env ?? {}).filter(([k, x]) => /PASS|SECRET|TOKEN|COOKIE|KEY/i.test(k) && x && x !== "guest").map(([, x]) => x);
  const text = secrets.reduce((acc, x) => acc.split(x).join("***"), t.text);
  return { ...t, text, spec: { ...t.spec, configFiles: t.spec.configFiles.map((f) => resolve2(f)) } };
}
async function cliTargets(mode, v) {
  const url = v["broker-url"] ? "--broker-url" : v["management-url"] ? "--management-url" : void 0;
  if (v.image && v.target) throw new GateError("cannot be combined with --image: both describe the broker to measure", { field: "--target" }, "keep one of them");
  if (v["baseline-image"] && v["baseline-target"]) throw new GateError("cannot be combined with --baseline-image: both describe the reference broker", { field: "--baseline-target" }, "keep one of them");
  for (const opt of ["image", "target"]) {
    if (v[opt] && url) throw new GateError(`starts its own broker, so it cannot be combined with ${url}`, { field: `--${opt}` }, `drop ${url}, or drop --${opt} to measure the broker at the URL`);
  }
  const docker = (id, image) => ({ id, label: image, kind: "docker", image, configFiles: [], nodes: 1, env: {}, setup: [], network: "host" });
  const candFile = v.target ? await targetFile("target", v.target, "candidate") : void 0;
  const refFile = mode === "check" && v["baseline-target"] ? await targetFile("baseline-target", v["baseline-target"], "baseline") : void 0;
  const candidate = candFile ? candFile.spec : v.image ? docker("candidate", v.image) : {
    id: "candidate",
    label: v["broker-label"] ?? DEFAULTS.brokerLabel,
    kind: "url",
    amqpUrl: v["broker-url"] ?? DEFAULTS.cli.amqpUrl,
    managementUrl: v["management-url"] ?? DEFAULTS.cli.managementUrl
  };
  if ((v.image || v.target) && v["broker-label"]) candidate.label = v["broker-label"];
  const reference = refFile ? refFile.spec : mode === "check" && v["baseline-image"] ? docker("baseline", v["baseline-image"]) : void 0;
  if (reference && reference.label === candidate.label) {
    reference.label = `${reference.label} (${refFile ? basename(v["baseline-target"]) : "baseline"})`;
    candidate.label = `${candidate.label} (${candFile ? basename(v.target) : "candidate"})`;
  }
  if (!candFile && !refFile) return { candidate, reference };
  const describe = (file, t) => file ?? (t.kind === "docker" ? `image ${t.image}` : `the broker at --broker-url (${t.label})`);
  const note = reference ? `${describe(v.target, candidate)} against ${describe(v["baseline-target"], reference)}${candFile && refFile && candFile.digest === refFile.digest ? " \u2014 identical descriptions: an A/A run" : ""}` : `${v.target} against the stored baseline`;
  const diff = candFile && refFile && candFile.digest !== refFile.digest ? lineDiff(refFile.text, candFile.text) : void 0;
  return { candidate, reference, note, diff };
}
function runIdFromEnv() {
  const id = process.env.RABBITMQ_PERF_GATE_RUN_ID;
  if (!id) return void 0;
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw new GateError(`is "${id}"`, { field: "RABBITMQ_PERF_GATE_RUN_ID" }, "use up to 64 letters, digits, - or _");
  return id;
}

// src/report/progress.ts
var clock = (s) => {
  const t = Math.max(0, Math.round(s));
  return `${Math.floor(t / 60)}:${String(t % 60).padStart(2, "0")}`;
};
function trialFigures(t) {
  if (!t.valid) return `INVALID: ${t.invalidReason ?? t.error ?? "unknown reason"}`;
  const m = t.metrics;
  const main2 = ["published_rate", "consumed_rate", "latency_p99_ms"].filter((k) => k in m);
  return (main2.length ? main2 : Object.keys(m).slice(0, 3)).map((k) => `${metricDef(k).label} ${num(m[k], metricDef(k).unit)}`).join(", ");
}
function terminalUi(labels) {
  const out = process.stderr;
  const tty = Boolean(out.isTTY);
  const c = paint(colorAllowed(out));
  const started = Date.now();
  let bar;
  let ticker;
  const clear = () => tty && bar ? "\r\x1B[K" : "";
  const drawBar = () => {
    if (!tty || !bar) return;
    const width = 28;
    const filled = Math.round(bar.done / bar.total * width);
    const left = Math.max(0, bar.eta - (Date.now() - bar.at) / 1e3);
    out.write(`\r\x1B[K${c("36", "\u2588".repeat(filled))}${c("2", "\u2591".repeat(width - filled))} ${bar.done}/${bar.total} trials \xB7 ${clock((Date.now() - started) / 1e3)} elapsed \xB7 ~${clock(left)} left`);
  };
  const line = (s) => {
    out.write(`${clear()}${s}
`);
    drawBar();
  };
  const stop = () => {
    if (ticker) clearInterval(ticker);
    ticker = void 0;
    if (tty && bar) out.write("\r\x1B[K");
    bar = void 0;
  };
  return {
    stop,
    info: (m) => {
      line(m);
      const plan = /^Running (\d+) trials.*about (\d+) s/.exec(m);
      if (tty && plan) {
        bar = { done: 0, total: Number(plan[1]), eta: Number(plan[2]), at: Date.now() };
        ticker ??= setInterval(drawBar, 1e3).unref();
        drawBar();
      }
    },
    warn: (m) => line(c("33", `warning: ${m}`)),
    group: async (name, fn) => {
      line(c("1", `${name}\u2026`));
      return fn();
    },
    trialDone: (done, total, t, eta) => {
      const who = `${t.scenario} #${t.trial + 1} on ${labels[t.target] ?? t.target}`;
      if (!tty) {
        out.write(`[${done}/${total}] ${who}: ${trialFigures(t)} (~${Math.round(eta)} s left)
`);
        return;
      }
      bar = { done, total, eta, at: Date.now() };
      ticker ??= setInterval(drawBar, 1e3).unref();
      line(`${t.valid ? c("32", "\u2713") : c("31", "\u2717")} ${who}: ${t.valid ? trialFigures(t) : c("33", trialFigures(t))}`);
      if (done === total) stop();
    }
  };
}

// src/cli/run.ts
async function runCommand(mode, v) {
  const baselineFile = resolve3(v["baseline-file"] ?? DEFAULTS.baselineFile);
  const { candidate, reference, note, diff } = await cliTargets(mode, v);
  const runId = runIdFromEnv();
  resolveScenarios(v.scenarios ?? DEFAULTS.scenarios);
  const opts = {
    repetitions: numberOpt("repetitions", v.repetitions, 1, true),
    seed: numberOpt("seed", v.seed, 0, true),
    duration: numberOpt("duration", v.duration, 1),
    warmup: numberOpt("warmup", v.warmup, 0),
    freezeIdle: !v["no-freeze"],
    anchor: !v["no-anchor"],
    sequential: !v["no-sequential"],
    failFast: !v["no-fail-fast"],
    flameGraph: v["flame-graph"] === true,
    looks: v.looks === void 0 ? void 0 : parseLooks(v.looks, "--looks")
  };
  const ui = terminalUi(Object.fromEntries([candidate, reference].filter((t) => t).map((t) => [t.id, t.label])));
  const read = readBaseline(baselineFile);
  if (read.status === "unusable") ui.warn(`${read.error.describe()} \u2014 continuing without a stored baseline`);
  if (read.status === "missing" && mode === "check" && !reference) ui.info(`no stored baseline at ${baselineFile}: nothing to compare with (create one with "refresh")`);
  const stored = read.status === "ok" ? read.baseline : void 0;
  const controller = new AbortController();
  const abort = () => controller.abort();
  process.once("SIGINT", abort);
  process.once("SIGTERM", abort);
  let report;
  try {
    report = await runPipeline({ scenarios: v.scenarios ?? DEFAULTS.scenarios, candidate, reference, mode, stored, signal: controller.signal, runId, targetNote: note, targetDiff: diff, ...opts }, ui);
  } finally {
    ui.stop();
    process.off("SIGINT", abort);
    process.off("SIGTERM", abort);
  }
  const summary = renderSummary(report, { name: "rabbitmq-perf-gate" });
  const files = writeReportFiles(resolve3(v.out ?? DEFAULTS.reportDir), report, summary);
  if (mode === "refresh" && !controller.signal.aborted) {
    if (!report.trials.some((t) => t.valid && t.target === report.candidate)) throw new GateError("no valid trials; the stored baseline was left untouched", { file: baselineFile });
    writeBaseline(baselineFile, baselineFromRun(report, stored));
    ui.info(`baseline written to ${baselineFile}`);
  }
  emit(report, v, () => summary);
  ui.info(`report: ${files.json}`);
  if (controller.signal.aborted) {
    ui.warn("interrupted: the report holds the trials that finished");
    return 130;
  }
  return report.verdict === "fail" ? 1 : 0;
}

// src/cli/list.ts
function listCommand(v) {
  const presets = loadPresets().map((p) => {
    const { scenarios: scenarios2 } = resolveScenarios(p.name);
    const repetitions = defaultRepetitions(scenarios2);
    const ab = abEstimate(scenarios2, p.pairs, p.looks);
    return {
      name: p.name,
      description: p.description,
      scenarios: scenarios2.map((s) => s.id),
      repetitions,
      secondsPerTarget: Math.round(estimateSeconds(buildPlan(scenarios2, ["candidate"], repetitions, 1))),
      abRepetitions: ab.pairs,
      abSeconds: ab.seconds,
      ...ab.looks ? { abLooks: ab.looks, abSecondsFirstLook: ab.firstSeconds, abSecondsCap: ab.capSeconds } : {}
    };
  });
  const scenarios = catalogueIds().map((id) => {
    const specs = resolveScenarios(id).scenarios;
    const s = specs[0];
    return { id, variants: specs.map((x) => x.id), warmupSeconds: s.warmupSeconds, durationSeconds: s.durationSeconds, gate: s.gate, description: s.description };
  });
  if (v.json) {
    process.stdout.write(JSON.stringify({ presets, scenarios }, null, 1) + "\n");
    return 0;
  }
  const lines = ["Presets:"];
  for (const p of presets) {
    lines.push(`  ${p.name.padEnd(10)} ${String(p.scenarios.length).padStart(3)} scenarios, ~${Math.ceil(p.secondsPerTarget / 60)} min alone (${p.repetitions} trials), ` + (p.abLooks ? `~${Math.ceil(p.abSecondsFirstLook / 60)}\u2013${Math.ceil(p.abSecondsCap / 60)} min A/B (sequential, ${p.abLooks[0]}\u2013${p.abLooks.at(-1)} pairs; fixed ${p.abRepetitions} pairs ~${Math.ceil(p.abSeconds / 60)} min)` : `~${Math.ceil(p.abSeconds / 60)} min A/B (${p.abRepetitions} pairs)`) + ` \u2014 ${p.description}`);
  }
  lines.push("", "Scenarios (warm-up + measured seconds; \xD7N: variants over the file's axes):");
  for (const s of scenarios) {
    const text = s.description.replace(/\s+/g, " ");
    const short2 = text.length > 80 ? `${text.slice(0, 79).replace(/\s+\S*$/, "")}\u2026` : text;
    const variants = s.variants.length > 1 ? `\xD7${s.variants.length}` : "";
    lines.push(`  ${s.id.padEnd(30)} ${`${s.warmupSeconds}+${s.durationSeconds} s`.padEnd(7)} ${variants.padEnd(3)} ${short2}`);
  }
  process.stdout.write(lines.join("\n") + "\n");
  return 0;
}

// src/cli/report.ts
function reportCommand(file, v) {
  const { report } = readResult(file);
  if (!report) throw new GateError("this is a baseline.json, not a report", { file }, `compare a run with it: rabbitmq-perf-gate compare REPORT.json ${file}`);
  emit(report, { ...v, json: v.json }, () => renderSummary(report, { name: "rabbitmq-perf-gate" }));
  return 0;
}
function compareCommand(files, v) {
  let [a, b] = files.map((f) => ({ file: f, ...readResult(f) }));
  if (a.baseline && b.report) [a, b] = [b, a];
  const cand = a.report;
  if (!cand) throw new GateError("compare needs at least one report.json", { file: a.file }, "compare NEW/report.json OLD/report.json, or NEW/report.json baseline.json");
  const candTarget = cand.targets.find((t) => t.id === cand.candidate);
  const candidate = { label: candTarget?.label ?? cand.candidate, values: trialValues(cand, cand.candidate) };
  const refReport = b.report;
  const refId = refReport ? cand.targets.some((t) => t.id === "reference") ? "reference-run" : "reference" : "stored";
  const refTarget = refReport ? refReport.targets.find((t) => t.id === refReport.candidate) : b.baseline.target;
  const reference = refReport ? { label: `${refTarget?.label ?? refReport.candidate} (${b.file})`, values: trialValues(refReport, refReport.candidate) } : { label: "stored baseline", values: Object.fromEntries(Object.entries(b.baseline.scenarios).map(([k, s]) => [k, s.metrics])) };
  const mismatch = candTarget ? fingerprintMismatch((refReport ?? b.baseline).fingerprint, refTarget, cand.fingerprint, candTarget) : void 0;
  const judgement = judge({
    scenarios: cand.scenarios,
    trials: cand.trials,
    candidate: { id: cand.candidate, ...candidate },
    independent: { sample: reference, against: refId, mayNotFail: mismatch, what: `${a.file} compared with ${b.file}` },
    judged: true,
    incomplete: cand.errors.some((e) => isRunScope(e.scope))
  });
  const report = {
    ...cand,
    mode: "check",
    ...judgement,
    // Two reports: both runs' judged trials side by side, so the HTML shows the A/B layout.
    targets: [...cand.targets.filter((t) => t.id === cand.candidate), ...refReport && refTarget ? [{ ...refTarget, id: refId, label: reference.label }] : []],
    trials: [...cand.trials.filter((t) => t.target === cand.candidate), ...refReport ? refReport.trials.filter((t) => t.target === refReport.candidate).map((t) => ({ ...t, target: refId })) : []]
  };
  emit(report, v, () => renderSummary(report, { name: "rabbitmq-perf-gate" }));
  return report.verdict === "fail" ? 1 : 0;
}

// src/cli/bisect.ts
import { join as join2, resolve as resolve4 } from "node:path";

// src/config/bisect-range.ts
import { execFile } from "node:child_process";
import { promisify } from "node:util";
var run = promisify(execFile);
var CLI_FIELDS = { images: "--images", template: "--template", range: "--range", repo: "--repo", good: "--good", bad: "--bad" };
var SHA = /\{sha(?::(\d+))?\}/g;
function checkTemplate(template, field) {
  if (!template.trim()) throw new GateError("the image template is empty", { field }, "give an image name with {sha} where the commit goes, e.g. my/rabbitmq:sha-{sha}");
  const matches = [...template.matchAll(SHA)];
  if (!matches.length) throw new GateError(`the image template "${template}" has no {sha}`, { field }, "put {sha} (the full commit) or {sha:N} (its first N characters) where the commit goes, e.g. my/rabbitmq:sha-{sha}");
  const other = template.replace(SHA, "").match(/\{[^}]*\}/);
  if (other) throw new GateError(`the image template has ${other[0]}, which is not a placeholder it knows`, { field }, "use {sha} or {sha:N} only");
  for (const m of matches) if (m[1] !== void 0 && !(Number(m[1]) >= 4 && Number(m[1]) <= 40)) throw new GateError(`${m[0]}: N must be between 4 and 40`, { field }, "e.g. {sha:12}");
}
function fillTemplate(template, sha) {
  return template.replace(SHA, (_, n) => n ? sha.slice(0, Number(n)) : sha);
}
async function git(repo, args) {
  const { stdout } = await run("git", ["-C", repo, ...args], { maxBuffer: 64 << 20 });
  return stdout;
}
async function commitOf(repo, ref, field) {
  try {
    return (await git(repo, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`])).trim();
  } catch {
    throw new GateError(
      `"${ref}" does not resolve to a commit in ${repo}`,
      { field },
      "check the name, and fetch the history it is in (actions/checkout with fetch-depth: 0, or git fetch)"
    );
  }
}
async function fromRange(i, f) {
  const template = i.template;
  checkTemplate(template, f.template);
  const spec = i.range.trim();
  if (spec.includes("...")) throw new GateError(`"${spec}" is a symmetric range`, { field: f.range }, "give GOOD..BAD with two dots: the known-good commit, then the known-bad one");
  const parts = spec.split("..");
  if (parts.length !== 2 || !parts[0].trim() || !parts[1].trim()) {
    throw new GateError(`"${spec}" is not a range of two commits`, { field: f.range }, "give GOOD..BAD, e.g. v3.13.1..v3.13.2 or two commit shas");
  }
  const [goodRef, badRef] = parts.map((p) => p.trim());
  const repo = i.repo ?? process.cwd();
  try {
    await git(repo, ["rev-parse", "--git-dir"]);
  } catch {
    throw new GateError(`${repo} is not a git checkout`, { field: f.repo }, "point it at a clone of the repository the images are built from");
  }
  const good = await commitOf(repo, goodRef, f.range);
  const bad = await commitOf(repo, badRef, f.range);
  if (good === bad) throw new GateError(`good and bad are the same commit (${good.slice(0, 12)})`, { field: f.range }, "give a known-good commit older than the known-bad one");
  const ordered = await run("git", ["-C", repo, "merge-base", "--is-ancestor", good, bad]).then(() => true, () => false);
  if (!ordered) {
    const reversed = await run("git", ["-C", repo, "merge-base", "--is-ancestor", bad, good]).then(() => true, () => false);
    throw new GateError(
      reversed ? `the range is the wrong way round: ${badRef} is older than ${goodRef}` : `the range is unordered: ${goodRef} is not an ancestor of ${badRef}`,
      { field: f.range },
      reversed ? `swap them: ${badRef}..${goodRef}` : "give a known-good commit that the known-bad one descends from"
    );
  }
  const lines = (await git(repo, ["log", "--first-parent", "--reverse", "--format=%H%x09%P%x09%s", `${good}..${bad}`])).split("\n").filter(Boolean);
  if (!lines.length) throw new GateError(`the range ${spec} is empty`, { field: f.range }, "give a known-good commit older than the known-bad one");
  const commits = lines.map((l) => {
    const [sha, parents, ...subject] = l.split("	");
    return { sha, parent: parents.split(" ")[0], subject: subject.join("	") };
  });
  if (commits[0].parent !== good) {
    throw new GateError(
      `${goodRef} is not on ${badRef}'s first-parent line (it came in through a merge), so the images between them are not one ordered line`,
      { field: f.range },
      `use the merge commit that brought ${goodRef} in, or a commit on the main line, as the good end`
    );
  }
  const goodSubject = (await git(repo, ["log", "-1", "--format=%s", good])).trim();
  return {
    images: [{ image: fillTemplate(template, good), commit: good, subject: goodSubject }, ...commits.map((c) => ({ image: fillTemplate(template, c.sha), commit: c.sha, subject: c.subject }))],
    range: { repo, spec, template }
  };
}
function fromList(i, f) {
  const list = i.images.split(/[\n,]/).map((x) => x.trim()).filter(Boolean);
  if (!list.length) throw new GateError("the image list is empty", { field: f.images }, "give the images in order, the known-good first and the known-bad last");
  const at = (which, fallback) => {
    const v = i[which]?.trim();
    if (!v) return fallback;
    const byName = list.indexOf(v);
    if (byName >= 0) return byName;
    if (/^\d+$/.test(v) && Number(v) >= 1 && Number(v) <= list.length) return Number(v) - 1;
    throw new GateError(`"${v}" is not one of the ${list.length} images`, { field: f[which] }, `name an image of the list, or its position (1 to ${list.length})`);
  };
  const g = at("good", 0);
  const b = at("bad", list.length - 1);
  if (list.length === 1 || g === b || list[g] === list[b]) throw new GateError(`good and bad are the same image (${list[g]})`, { field: list.length === 1 ? f.images : f.bad }, "give at least two images: the known-good end and the known-bad end");
  if (g > b) throw new GateError(`the range is unordered: the known-good image (${list[g]}, position ${g + 1}) comes after the known-bad one (${list[b]}, position ${b + 1})`, { field: f.good }, "list the images oldest first, or swap good and bad");
  const picked = list.slice(g, b + 1);
  const twice = picked.find((x, k) => picked.indexOf(x) !== k);
  if (twice) throw new GateError(`${twice} is in the list twice`, { field: f.images }, "list each image once, in order");
  return { images: picked.map((image) => ({ image })) };
}
async function resolveBisectImages(i, f = CLI_FIELDS) {
  const hasList = i.images !== void 0;
  if (hasList && (i.template !== void 0 || i.range !== void 0)) {
    throw new GateError(`cannot be combined with ${i.template !== void 0 ? f.template : f.range}: both say which images to search`, { field: f.images }, "keep the list, or the template with its range");
  }
  if (hasList) return fromList(i, f);
  if (i.template === void 0 && i.range === void 0) throw new GateError("no images to search", { field: f.images }, `give ${f.images} (oldest first), or ${f.template} with ${f.range} GOOD..BAD`);
  if (i.template === void 0) throw new GateError(`${f.range} needs an image template`, { field: f.template }, `give ${f.template}, e.g. my/rabbitmq:sha-{sha}`);
  if (i.range === void 0) throw new GateError(`${f.template} needs a git range`, { field: f.range }, `give ${f.range} GOOD..BAD`);
  if (i.good !== void 0 || i.bad !== void 0) throw new GateError(`${f.range} already names the known-good and known-bad commits`, { field: i.good !== void 0 ? f.good : f.bad }, `drop ${f.good} / ${f.bad}, or put them in ${f.range}`);
  return fromRange(i, f);
}
async function commitsBetween(repo, from, to, max = 50) {
  try {
    const count = Number((await git(repo, ["rev-list", "--count", `${from}..${to}`])).trim());
    const list = (await git(repo, ["log", `--max-count=${max}`, "--format=%H%x09%s", `${from}..${to}`])).split("\n").filter(Boolean).map((l) => {
      const [sha, ...subject] = l.split("	");
      return { sha, subject: subject.join("	") };
    });
    return { range: `${from.slice(0, 12)}..${to.slice(0, 12)}`, count, list };
  } catch {
    return void 0;
  }
}

// src/compare/bisect.ts
import { createHash } from "node:crypto";
import { readFileSync as readFileSync2 } from "node:fs";
import { dirname, join, relative } from "node:path";
var BISECT_STATE_KIND = "rabbitmq-perf-gate/bisect-state";
var DEFAULT_ATTEMPTS = 2;
function outcomeOf(verdict) {
  return verdict === "fail" ? "bad" : verdict === "pass" ? "good" : "undecided";
}
function keyOf(d) {
  const what = { images: d.images.map((i) => i.image), scenarios: d.scenarios, duration: d.duration ?? null, warmup: d.warmup ?? null, looks: d.looks ?? null, repetitions: d.repetitions ?? null };
  return `sha256:${createHash("sha256").update(JSON.stringify(what)).digest("hex")}`;
}
function newState(d, now = /* @__PURE__ */ new Date()) {
  if (d.images.length < 2) throw new GateError("a bisect needs at least two images: the known-good end first, the known-bad end last", { field: "images" });
  return {
    schemaVersion: SCHEMA_VERSION,
    kind: BISECT_STATE_KIND,
    key: keyOf(d),
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
    images: d.images,
    scenarios: d.scenarios,
    duration: d.duration,
    warmup: d.warmup,
    looks: d.looks,
    repetitions: d.repetitions,
    attempts: d.attempts ?? DEFAULT_ATTEMPTS,
    range: d.range,
    steps: [],
    seconds: 0
  };
}
function openState(file, d) {
  let text;
  try {
    text = readFileSync2(file, "utf8");
  } catch (e) {
    if (e.code === "ENOENT") return { state: newState(d), resumed: false };
    throw new GateError(`cannot read the bisect state file (${e.code})`, { file, field: "state" }, "check its permissions");
  }
  let data;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new GateError(`the bisect state file is not valid JSON (${e.message})`, { file, field: "state" }, "delete it to start the search afresh");
  }
  if (!data || data.kind !== BISECT_STATE_KIND || !Array.isArray(data.steps) || !Array.isArray(data.images)) {
    throw new GateError("this file is not a bisect state file", { file, field: "state" }, "give another --state path, or delete the file");
  }
  if (data.schemaVersion > SCHEMA_VERSION) throw new GateError(`the bisect state file has schema version ${data.schemaVersion}, newer than this version understands`, { file, field: "state" }, "resume it with the release that wrote it, or delete it");
  const fresh = newState(d);
  if (data.key !== fresh.key) {
    throw new GateError(
      `the bisect state file belongs to another search (${data.images.length} images from ${data.images[0]?.image} to ${data.images.at(-1)?.image}, scenarios ${data.scenarios})`,
      { file, field: "state" },
      "delete it to start this search, or give this search its own --state file"
    );
  }
  return { state: { ...data, attempts: Math.max(data.attempts ?? DEFAULT_ATTEMPTS, d.attempts ?? 0) }, resumed: true };
}
function saveState(file, s) {
  writeFileAtomic(file, JSON.stringify({ ...s, updatedAt: (/* @__PURE__ */ new Date()).toISOString() }, null, 1) + "\n");
}
function bisectStatus(s) {
  let lastGood = 0;
  let firstBad = s.images.length - 1;
  for (const step of s.steps) {
    if (step.index <= lastGood || step.index >= firstBad) continue;
    if (step.outcome === "good") lastGood = step.index;
    else if (step.outcome === "bad") firstBad = step.index;
  }
  const skipped = new Set(s.steps.filter((x) => x.outcome === "skipped").map((x) => x.index));
  const tries = /* @__PURE__ */ new Map();
  for (const x of s.steps) if (x.outcome === "undecided") tries.set(x.index, (tries.get(x.index) ?? 0) + 1);
  const exhausted = new Set([...tries].filter(([i, n]) => n >= s.attempts && !skipped.has(i)).map(([i]) => i));
  const between = Array.from({ length: Math.max(0, firstBad - lastGood - 1) }, (_, k) => lastGood + 1 + k);
  const left = between.filter((i) => !skipped.has(i) && !exhausted.has(i));
  const verdicts = s.steps.filter((x) => x.outcome !== "skipped").length;
  const inRange = (set) => between.filter((i) => set.has(i));
  if (left.length) return { state: "running", lastGood, firstBad, suspects: [...between, firstBad], skipped: [...skipped].sort((a, b) => a - b), undecided: [...exhausted].sort((a, b) => a - b), verdicts };
  if (!between.length) return { state: "found", lastGood, firstBad, culprit: firstBad, suspects: [firstBad], skipped: [...skipped].sort((a, b) => a - b), undecided: [...exhausted].sort((a, b) => a - b), verdicts };
  return { state: "ambiguous", lastGood, firstBad, suspects: [...inRange(skipped), ...inRange(exhausted), firstBad].sort((a, b) => a - b), skipped: [...skipped].sort((a, b) => a - b), undecided: [...exhausted].sort((a, b) => a - b), verdicts };
}
function nextProbe(s) {
  const st = bisectStatus(s);
  if (st.state !== "running") return void 0;
  const out = /* @__PURE__ */ new Set([...st.skipped, ...st.undecided]);
  const mid = (st.lastGood + st.firstBad) / 2;
  let best;
  for (let i = st.lastGood + 1; i < st.firstBad; i++) {
    if (out.has(i)) continue;
    if (best === void 0 || Math.abs(i - mid) < Math.abs(best - mid)) best = i;
  }
  return best;
}
function stepDesign(base, attempt) {
  if (base.looks?.length) {
    const cap = base.looks.at(-1);
    return { looks: [...base.looks, ...Array.from({ length: attempt - 1 }, (_, k) => cap * (k + 2))] };
  }
  return { repetitions: base.repetitions === void 0 ? void 0 : base.repetitions * attempt };
}
var worse = (c, r) => r === null ? 0 : c.direction === "higher" ? 1 / r : r;
function stepFromReport(r, index, image, attempt, seconds, startedAt) {
  const gating = r.comparisons.filter((c) => c.gating && c.paired);
  const fails = gating.filter((c) => c.verdict === "fail");
  const badEnd = (c) => worse(c, c.direction === "higher" ? c.ciLow : c.ciHigh) || worse(c, c.ratio);
  const head = (fails.length ? fails : gating).reduce((a, c) => !a || badEnd(c) > badEnd(a) ? c : a, void 0);
  const outcome = outcomeOf(r.verdict);
  const pairs = (c) => Math.min(c.nBaseline, c.nCandidate);
  const undecided = gating.filter((c) => c.verdict === "warn" || c.verdict === "inconclusive");
  return {
    index,
    image,
    attempt,
    outcome,
    verdict: r.verdict,
    ...head ? { scenario: head.scenario, metric: head.metric, ratio: head.ratio, ciLow: head.ciLow, ciHigh: head.ciHigh, pairs: pairs(head) } : {},
    ...r.sequential ? { looks: r.sequential.looks } : { repetitions: r.repetitions },
    seed: r.seed,
    seconds: Math.round(seconds),
    startedAt,
    ...outcome === "undecided" ? { note: undecided.length ? `${undecided.map((c) => `${c.scenario} ${c.metric} ${c.verdict}`).join(", ")}: ${undecided[0].reason}` : `verdict ${r.verdict}: ${r.decidedBy}` } : {},
    gating: gating.map((c) => ({ scenario: c.scenario, metric: c.metric, ratio: c.ratio, ciLow: c.ciLow, ciHigh: c.ciHigh, verdict: c.verdict, pairs: pairs(c) }))
  };
}
async function searchBisect(state, deps) {
  const now = deps.now ?? Date.now;
  const started = now();
  const limitMs = deps.timeLimitSeconds > 0 ? deps.timeLimitSeconds * 1e3 : Number.POSITIVE_INFINITY;
  let s = state;
  for (; ; ) {
    if (deps.signal?.aborted) return { state: s, stopped: "interrupted" };
    const index = nextProbe(s);
    if (index === void 0) return { state: s };
    const left = limitMs - (now() - started);
    if (left < 1e3) return { state: s, stopped: `the time limit of ${Math.round(limitMs / 6e4 * 10) / 10} min was reached` };
    const image = s.images[index].image;
    const attempt = 1 + s.steps.filter((x) => x.index === index && x.outcome === "undecided").length;
    const design = stepDesign(deps.design, attempt);
    const st = bisectStatus(s);
    deps.log(`Bisect step ${s.steps.length + 1}: ${image} (image ${index + 1} of ${s.images.length}; first bad between ${st.lastGood + 2} and ${st.firstBad + 1})${attempt > 1 ? `, attempt ${attempt}: undecided before, so again with ${design.looks ? `looks ${design.looks.join(", ")}` : `${design.repetitions} pairs`}` : ""}`);
    const t0 = now();
    const startedAt = new Date(t0).toISOString();
    let report;
    try {
      report = await deps.runAb({ image, reference: s.images[0].image, ...design, timeLimitSeconds: Number.isFinite(left) ? Math.floor(left / 1e3) : 0, step: s.steps.length + 1 });
    } catch (e) {
      if (deps.signal?.aborted) return { state: s, stopped: "interrupted" };
      if (!await deps.candidateFailed(e)) throw e;
      const step2 = { index, image, attempt, outcome: "skipped", seconds: Math.round((now() - t0) / 1e3), startedAt, note: `could not be pulled or started: ${deps.describe(e)}` };
      deps.log(`Skipping ${image}: ${step2.note}`);
      s = { ...s, steps: [...s.steps, step2], seconds: s.seconds + step2.seconds };
      deps.save(s);
      continue;
    }
    const cut = report.errors.find((e) => isRunScope(e.scope));
    if (deps.signal?.aborted) return { state: { ...s, seconds: s.seconds + Math.round((now() - t0) / 1e3) }, stopped: "interrupted" };
    if (cut) return { state: { ...s, seconds: s.seconds + Math.round((now() - t0) / 1e3) }, stopped: `the time limit was reached during the A/B of ${image} (${cut.message})` };
    const step = stepFromReport(report, index, image, attempt, (now() - t0) / 1e3, startedAt);
    const kept = deps.keepReport?.(report, step, s.steps.length + 1);
    if (kept) step.report = kept;
    deps.log(`${image}: ${step.outcome} (verdict ${step.verdict}${step.ratio != null ? `, ${step.metric} ratio ${step.ratio.toFixed(3)}` : ""}, ${step.seconds} s)`);
    s = { ...s, steps: [...s.steps, step], seconds: s.seconds + step.seconds };
    deps.save(s);
  }
}
function baseDesign(scenarios, looks, repetitions, cwd) {
  if (looks?.length) return { looks };
  if (repetitions !== void 0) return { repetitions };
  const sel = resolveScenarios(scenarios, cwd);
  return sel.looks?.length ? { looks: sel.looks } : { repetitions: defaultRepetitions(sel.scenarios, true, sel.pairs) };
}
var dockerTarget = (id, image, label) => ({ id, label, kind: "docker", image, configFiles: [], nodes: 1, env: {}, setup: [], network: "host" });
async function bisectSession(o, deps) {
  const d = o.definition;
  const design = baseDesign(d.scenarios, d.looks, d.repetitions, o.cwd);
  const { state, resumed } = openState(o.stateFile, d);
  const done = state.steps.length;
  if (resumed) deps.log(`Resuming the bisect in ${o.stateFile}: ${done} step${done === 1 ? "" : "s"} done (${bisectStatus(state).state})`);
  else saveState(o.stateFile, state);
  const folder = dirname(o.stateFile);
  const good = state.images[0].image;
  const { state: after, stopped } = await searchBisect(state, {
    design,
    timeLimitSeconds: o.timeLimitMinutes * 60,
    signal: o.signal,
    log: deps.log,
    describe: deps.describe,
    candidateFailed: deps.candidateFailed,
    save: (x) => saveState(o.stateFile, x),
    runAb: (req) => deps.runAb({
      scenarios: d.scenarios,
      mode: "check",
      sequential: true,
      candidate: dockerTarget("candidate", req.image, req.image),
      reference: dockerTarget("good-end", req.reference, `${good} (good end)`),
      looks: req.looks,
      repetitions: req.repetitions,
      duration: d.duration,
      warmup: d.warmup,
      seed: o.seed === void 0 ? void 0 : o.seed + req.step,
      timeLimitSeconds: req.timeLimitSeconds,
      signal: o.signal,
      runId: o.runId,
      cwd: o.cwd
    }),
    keepReport: (r, _step, n) => {
      const file = join(folder, "bisect-steps", `step-${n}.json`);
      writeFileAtomic(file, JSON.stringify(r, null, 1) + "\n");
      return relative(folder, file);
    }
  });
  const status = bisectStatus(after);
  const from = after.images[status.lastGood].commit;
  const to = after.images[status.firstBad].commit;
  const commits = status.state !== "running" && from && to && after.range?.repo ? await commitsBetween(after.range.repo, from, to) : void 0;
  return {
    kind: "rabbitmq-perf-gate/bisect",
    tool: { name: TOOL, version: TOOL_VERSION },
    createdAt: (/* @__PURE__ */ new Date()).toISOString(),
    state: after,
    status,
    ...stopped ? { stopped } : {},
    ...commits ? { commits } : {},
    fingerprint: fingerprint()
  };
}

// src/report/bisect.ts
var OUTCOME_ICON = { good: "\u2705", bad: "\u274C", undecided: "\u2754", skipped: "\u23ED\uFE0F" };
var short = (sha) => sha ? sha.slice(0, 12) : "";
var minutes = (s) => `${(s / 60).toFixed(1)} min`;
function stepDelta(x) {
  if (x.ratio === null || x.ratio === void 0) return "\u2013";
  if (x.ciLow == null || x.ciHigh == null) return pct(x.ratio);
  const b = (r) => ((r - 1) * 100).toFixed(1).replace("-", "\u2212");
  return `${pct(x.ratio)} [${b(x.ciLow)}, ${b(x.ciHigh)}]`;
}
function imageText(r, i, withSubject = true) {
  const img = r.state.images[i];
  const commit = img.commit ? `, ${short(img.commit)}${withSubject && img.subject ? ` ${img.subject}` : ""}` : "";
  return `${img.image} (${i + 1} of ${r.state.images.length}${commit})`;
}
function bisectHeadline(r) {
  const st = r.status;
  if (st.state === "found") return `first bad image: ${imageText(r, st.culprit)}`;
  if (st.state === "ambiguous") {
    const why = (i) => st.skipped.includes(i) ? " \u2014 skipped" : st.undecided.includes(i) ? " \u2014 undecided" : "";
    return `the first bad image is one of: ${st.suspects.map((i) => `${r.state.images[i].image}${why(i)}`).join(", ")}`;
  }
  return `stopped (${r.stopped ?? "not finished"}): the first bad image is between ${r.state.images[st.lastGood + 1]?.image} and ${r.state.images[st.firstBad].image} (images ${st.lastGood + 2}\u2013${st.firstBad + 1}); run the same command again to resume`;
}
function scopeText(r) {
  const s = r.state;
  const n = s.images.length;
  const bound = Math.ceil(Math.log2(n)) + 1;
  const skips = s.steps.filter((x) => x.outcome === "skipped").length;
  return `${n} images from ${s.images[0].image} (known good) to ${s.images[n - 1].image} (known bad), each step a same-run paired A/B against the good end on scenarios ${s.scenarios}${s.range ? `; the images of ${s.range.spec} (first-parent commits, template ${s.range.template})` : ""}. ${r.status.verdicts} verdict${r.status.verdicts === 1 ? "" : "s"}${skips ? ` and ${skips} skip${skips === 1 ? "" : "s"}` : ""} in ${minutes(s.seconds)} (a bisect of ${n} images needs at most \u2308log\u2082 ${n}\u2309 + 1 = ${bound} without repeats).`;
}
function metricText(x) {
  return x.metric ? `${x.scenario} ${metricDef(x.metric).label}` : "";
}
function designText(x) {
  return x.looks ? `looks ${x.looks.join(", ")}` : x.repetitions ? `${x.repetitions} pairs fixed` : "";
}
function commitLines(r, code, text) {
  const st = r.status;
  const good = r.state.images[st.lastGood];
  const bad = r.state.images[st.firstBad];
  if (!good.commit || !bad.commit) return [];
  const c = r.commits;
  const head = c ? `It stands for ${code(`${short(good.commit)}..${short(bad.commit)}`)}: ${c.count} commit${c.count === 1 ? "" : "s"}${c.count > 1 ? " (a merge brings in its branch)" : ""}:` : `It stands for the commits ${code(`${short(good.commit)}..${short(bad.commit)}`)} (git log ${short(good.commit)}..${short(bad.commit)}).`;
  return [head, ...(c?.list ?? []).slice(0, 20).map((x) => `- ${code(short(x.sha))} ${text(x.subject)}`), ...c && c.count > 20 ? [`- \u2026 and ${c.count - 20} more`] : []];
}
function renderBisectMarkdown(r, o) {
  const st = r.status;
  const icon = st.state === "found" ? "\u{1F3AF}" : st.state === "ambiguous" ? "\u2754" : "\u23F8\uFE0F";
  const code = (s) => `\`${s.replace(/`/g, "")}\``;
  const rows = r.state.steps.map((x, k) => `| ${k + 1} | ${code(x.image)} (${x.index + 1}) | ${x.attempt} | ${OUTCOME_ICON[x.outcome]} ${x.outcome}${x.verdict ? ` (${x.verdict})` : ""} | ${stepDelta(x)} | ${md(metricText(x)) || "\u2013"} | ${x.pairs ?? "\u2013"} | ${minutes(x.seconds)} |`);
  const notes = r.state.steps.map((x, k) => x.note ? `- step ${k + 1} (${code(x.image)}): ${md(x.note.length > 400 ? `${x.note.slice(0, 400)}\u2026` : x.note)}` : "").filter(Boolean);
  return [
    `## ${icon} ${md(o.name)} bisect: ${md(bisectHeadline(r))}`,
    "",
    md(scopeText(r)),
    "",
    ...st.state !== "running" ? commitLines(r, code, md) : [],
    "",
    "### Steps",
    "| # | Image (position) | Attempt | Outcome (verdict) | \u0394 [CI] | Metric | Pairs | Time |",
    "|--:|---|--:|---|--:|---|--:|--:|",
    ...rows.length ? rows : ["| \u2013 | _no step yet_ | | | | | | |"],
    "",
    ...notes.length ? ["<details><summary>Why steps were skipped or undecided</summary>", "", ...notes, "", "</details>", ""] : [],
    `Outcome: \u2705 good = verdict pass against the good end; \u274C bad = fail; \u2754 undecided = warn or inconclusive (the image is A/B'd again with a wider cap, up to ${r.state.attempts} times, never guessed); \u23ED\uFE0F skipped = the image could not be pulled or started.`,
    o.runUrl ? `
[Workflow run](${o.runUrl})` : "",
    ""
  ].join("\n");
}
function bisectTerminal(r, color) {
  const c = paint(color);
  const oc = { good: "32", bad: "1;31", undecided: "33", skipped: "2" };
  const head = ["#", "Image", "Pos", "Try", "Outcome", "Verdict", "\u0394 [CI]", "Metric", "Pairs", "Time"];
  const rows = r.state.steps.map((x, k) => [String(k + 1), x.image, String(x.index + 1), String(x.attempt), x.outcome, x.verdict ?? "\u2013", stepDelta(x), metricText(x) || "\u2013", String(x.pairs ?? "\u2013"), minutes(x.seconds)]);
  const w = head.map((hd, i) => Math.max(hd.length, ...rows.map((row) => row[i].length)));
  const pad = (row) => row.map((s, i) => [0, 2, 3, 6, 8, 9].includes(i) ? s.padStart(w[i]) : s.padEnd(w[i]));
  const st = r.status;
  const title = st.state === "found" ? c("1;31", "\u2718 FOUND") : st.state === "ambiguous" ? c("33", "? AMBIGUOUS") : c("2", "\u2026 STOPPED");
  const commits = st.state !== "running" ? commitLines(r, (s) => s, (s) => s) : [];
  return [
    `${title}  ${bisectHeadline(r)}`,
    scopeText(r),
    ...commits,
    "",
    c("1", pad(head).join("  ").trimEnd()),
    ...rows.map((row, k) => {
      const cells = pad(row);
      cells[4] = c(oc[r.state.steps[k].outcome], cells[4]);
      return cells.join("  ").trimEnd();
    }),
    ...r.state.steps.map((x, k) => x.note ? `  step ${k + 1}: ${x.note.length > 300 ? `${x.note.slice(0, 300)}\u2026` : x.note}` : "").filter(Boolean),
    ""
  ].join("\n");
}
function bisectChart(r) {
  const n = r.state.images.length;
  const last = /* @__PURE__ */ new Map();
  for (const x of r.state.steps) last.set(x.index, x);
  const at = (i, f) => {
    const x = last.get(i);
    const v = x && f(x);
    return v == null ? null : (v - 1) * 100;
  };
  const kinds = Array.from({ length: n }, (_, i) => {
    const x = last.get(i);
    return !x ? "other" : x.outcome === "good" ? "good" : x.outcome === "bad" ? "bad" : x.outcome === "skipped" ? "skip" : "other";
  });
  const st = r.status;
  const metric = r.state.steps.find((x) => x.metric);
  return {
    type: "steps",
    title: `\u0394 % against the good end per image${metric ? ` (${metricText(metric)}, the step's headline metric)` : ""}`,
    unit: "\u0394 %",
    labels: r.state.images.map((img, i) => `${i + 1}${img.commit ? ` ${short(img.commit).slice(0, 7)}` : ""}`),
    values: Array.from({ length: n }, (_, i) => at(i, (x) => x.ratio)),
    lo: Array.from({ length: n }, (_, i) => at(i, (x) => x.ciLow)),
    hi: Array.from({ length: n }, (_, i) => at(i, (x) => x.ciHigh)),
    kinds,
    line: false,
    ref: { value: 0, label: "the good end" },
    marks: st.state === "found" ? [{ at: st.culprit, label: "first bad" }] : st.state === "ambiguous" ? [{ at: st.suspects[0], label: "first bad is from here" }] : []
  };
}
function renderBisectHtml(r, o = {}) {
  const assets = uplotAssets();
  const name = o.name ?? "rabbitmq-perf-gate";
  const st = r.status;
  const cls = st.state === "found" ? "fail" : st.state === "ambiguous" ? "warn" : "inconclusive";
  const rows = r.state.steps.map((x, k) => `<tr><td class="n">${k + 1}</td><td><code>${html(x.image)}</code></td><td class="n">${x.index + 1}</td><td class="n">${x.attempt}</td><td class="t-${x.outcome === "good" ? "pass" : x.outcome === "bad" ? "fail" : "inconclusive"}">${html(x.outcome)}${x.verdict ? ` (${html(x.verdict)})` : ""}</td><td class="n">${html(stepDelta(x))}</td><td>${html(metricText(x) || "\u2013")}</td><td class="n">${html(x.pairs ?? "\u2013")}</td><td>${html(designText(x))}</td><td class="n">${html(minutes(x.seconds))}</td><td class="small">${html(x.note ?? "")}</td></tr>`).join("");
  const commits = st.state !== "running" ? commitLines(r, (s) => s, (s) => s) : [];
  const runLink = o.runUrl && /^https?:\/\//.test(o.runUrl) ? ` \xB7 <a href="${html(o.runUrl)}">workflow run</a>` : "";
  const images = r.state.images.map((img, i) => `<tr><td class="n">${i + 1}</td><td><code>${html(img.image)}</code></td><td><code>${html(short(img.commit))}</code> ${html(img.subject ?? "")}</td></tr>`).join("");
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">
<meta name="viewport" content="width=device-width,initial-scale=1"><title>${html(name)} bisect: ${html(st.state)}</title>
<style>${inlineSafe(assets.css)}</style><style>${HTML_CSS}</style></head>
<body><main>
<header><h1><span class="badge v-${cls}">${html(st.state)}</span>${html(name)} bisect: ${html(bisectHeadline(r))}</h1>
<div class="sub">${html(r.createdAt)}${runLink}</div>
<p>${html(scopeText(r))}</p>
${commits.length ? `<p>${html(commits[0])}</p><ul>${commits.slice(1).map((l) => `<li>${html(l.replace(/^- /, ""))}</li>`).join("")}</ul>` : ""}
</header>
<section id="chart"><h2>Probes</h2><div class="small muted">each tested image's ratio against the good end with its CI (the step's headline gating metric); green good, red bad, grey skipped, blue undecided</div><div class="chart" data-chart="bisect"></div></section>
<section id="steps"><h2>Steps</h2><table><thead><tr><th>#</th><th>Image</th><th>Position</th><th>Attempt</th><th>Outcome (verdict)</th><th>\u0394 [CI]</th><th>Metric</th><th>Pairs</th><th>Design</th><th>Time</th><th>Note</th></tr></thead><tbody>${rows || '<tr><td colspan="11">no step yet</td></tr>'}</tbody></table></section>
<section id="images"><h2>Images searched</h2><table><thead><tr><th>#</th><th>Image</th><th>Commit</th></tr></thead><tbody>${images}</tbody></table></section>
<p class="small muted">${html(r.tool.name)} ${html(r.tool.version)} \xB7 self-contained report: charts drawn with uPlot, no network access.</p>
</main>
<script type="application/json" id="perf-data">${jsonScript({ targets: [], charts: { bisect: bisectChart(r) } })}</script>
<script>${inlineSafe(assets.js)}</script>
<script>${inlineSafe(CHARTS_JS)}</script>
</body></html>
`;
}

// src/cli/bisect.ts
function bisectExit(r, interrupted) {
  if (interrupted) return 130;
  if (r.status.state === "running") return 3;
  return r.status.state === "found" ? 0 : 1;
}
function writeBisectFiles(dir, r, markdown, opts = {}) {
  const files = { json: join2(dir, "bisect.json"), markdown: join2(dir, "bisect.md"), html: join2(dir, "bisect.html") };
  writeFileAtomic(files.json, JSON.stringify(r, null, 1) + "\n");
  writeFileAtomic(files.markdown, markdown);
  writeFileAtomic(files.html, renderBisectHtml(r, opts));
  return files;
}
async function bisectCommand(v) {
  const scenarios = v.scenarios ?? DEFAULTS.scenarios;
  const { images, range } = await resolveBisectImages({ images: v.images, template: v.template, range: v.range, repo: v.repo === void 0 ? void 0 : resolve4(v.repo), good: v.good, bad: v.bad });
  resolveScenarios(scenarios);
  const out = resolve4(v.out ?? DEFAULTS.reportDir);
  const stateFile = resolve4(v.state ?? join2(out, "bisect-state.json"));
  const timeLimitMinutes = numberOpt("time-limit", v["time-limit"], 0) ?? DEFAULTS.timeLimitMinutes;
  const controller = new AbortController();
  const abort = () => controller.abort();
  process.once("SIGINT", abort);
  process.once("SIGTERM", abort);
  const log = terminalUi({});
  let report;
  try {
    report = await bisectSession({
      definition: {
        images,
        range,
        scenarios,
        duration: numberOpt("duration", v.duration, 1),
        warmup: numberOpt("warmup", v.warmup, 0),
        looks: v.looks === void 0 ? void 0 : parseLooks(v.looks, "--looks"),
        repetitions: numberOpt("repetitions", v.repetitions, 1, true),
        attempts: numberOpt("attempts", v.attempts, 1, true)
      },
      stateFile,
      timeLimitMinutes,
      seed: numberOpt("seed", v.seed, 0, true),
      runId: runIdFromEnv(),
      signal: controller.signal
    }, {
      runAb: async (o) => {
        const ui = terminalUi({ [o.candidate.id]: o.candidate.label, [o.reference.id]: o.reference.label });
        try {
          return await runPipeline(o, ui);
        } finally {
          ui.stop();
        }
      },
      candidateFailed: async (e) => startFailedTarget(e) === "candidate" && await assertDockerAvailable().then(() => true, () => false),
      log: (m) => log.info(m),
      describe: describeError
    });
  } finally {
    log.stop();
    process.off("SIGINT", abort);
    process.off("SIGTERM", abort);
  }
  const markdown = renderBisectMarkdown(report, { name: "rabbitmq-perf-gate" });
  const files = writeBisectFiles(out, report, markdown);
  if (v.html) {
    writeFileAtomic(resolve4(v.html), renderBisectHtml(report));
    process.stderr.write(`HTML report: ${resolve4(v.html)}
`);
  }
  if (v.json) process.stdout.write(JSON.stringify(report, null, 1) + "\n");
  else if (process.stdout.isTTY) process.stdout.write(bisectTerminal(report, colorAllowed(process.stdout)));
  else process.stdout.write(markdown);
  process.stderr.write(`bisect report: ${files.json}; state: ${stateFile}
`);
  if (report.stopped) process.stderr.write(`stopped: ${report.stopped}. Run the same command again to resume from ${stateFile}.
`);
  return bisectExit(report, controller.signal.aborted);
}

// src/cli/nightly.ts
import { resolve as resolve5 } from "node:path";

// src/compare/history-file.ts
import { readFileSync as readFileSync3 } from "node:fs";
var NIGHTLY_LIMIT = 200;
var HISTORY_KIND = "rabbitmq-perf-gate/nightly-history";
var HEADLINE = ["consumed_rate", "published_rate"];
function emptyHistory() {
  return { schemaVersion: SCHEMA_VERSION, kind: HISTORY_KIND, entries: [], steps: [] };
}
function readHistory(file) {
  let text;
  try {
    text = readFileSync3(file, "utf8");
  } catch (e) {
    if (e.code === "ENOENT") return { status: "missing" };
    return { status: "unusable", error: new GateError(`cannot read the history file (${e.code})`, { file, field: "history-file" }, "check its permissions") };
  }
  return parseHistory(text, file);
}
function parseHistory(text, file) {
  const bad = (message, fix = "restore it from git history, or delete it to start a new history") => ({ status: "unusable", error: new GateError(message, { file, field: "history-file" }, fix) });
  let data;
  try {
    data = JSON.parse(text);
  } catch (e) {
    return bad(`the history file is not valid JSON (${e.message})`);
  }
  if (!data || typeof data !== "object" || data.kind !== HISTORY_KIND) return bad(`the history file is not a nightly history (no "kind": "${HISTORY_KIND}")`, "give another history-file path, or delete the file");
  if (typeof data.schemaVersion !== "number" || data.schemaVersion > SCHEMA_VERSION) return bad(`the history file has schema version ${data.schemaVersion}, which this version does not understand`, "upgrade the action to the release that wrote it");
  if (!Array.isArray(data.entries) || data.entries.some((e) => !e || typeof e.createdAt !== "string" || typeof e.medians !== "object")) return bad(`the history file's "entries" is not a list of nights with createdAt and medians`);
  for (const e of data.entries) {
    for (const [s, ms] of Object.entries(e.ratios ?? {})) {
      for (const [m, r] of Object.entries(ms)) if (!r || !Number.isFinite(r.ratio) || !(r.ratio > 0)) return bad(`the night of ${e.createdAt} has a ratio for ${s}/${m} that is not a positive number`);
    }
  }
  return { status: "ok", history: { ...data, steps: Array.isArray(data.steps) ? data.steps : [] } };
}
function writeHistory(file, h) {
  writeFileAtomic(file, JSON.stringify(h, null, 1) + "\n");
}
function nightlyEntry(r, o = {}) {
  const values = trialValues(r, r.candidate);
  const gate = {};
  const medians = {};
  for (const s of r.scenarios) {
    const vs = values[s.id];
    if (!vs) continue;
    gate[s.id] = s.gate;
    const keep = Object.entries(vs).filter(([m, xs]) => (s.gate.includes(m) || HEADLINE.includes(m)) && xs.length);
    if (keep.length) medians[s.id] = Object.fromEntries(keep.map(([m, xs]) => [m, median(xs)]));
  }
  const refIds = new Set(r.targets.filter((t) => t.id !== r.candidate).map((t) => t.id));
  const paired = r.comparisons.filter((c) => c.paired && c.gating && refIds.has(c.against) && c.ratio !== null && c.ratio > 0);
  const ratios = {};
  for (const c of paired) (ratios[c.scenario] ??= {})[c.metric] = { ratio: c.ratio, ciLow: c.ciLow, ciHigh: c.ciHigh, pairs: Math.min(c.nBaseline, c.nCandidate) };
  const cand = r.targets.find((t) => t.id === r.candidate);
  const ref = paired.length ? r.targets.find((t) => t.id === paired[0].against) : void 0;
  return {
    createdAt: r.createdAt,
    ...o.commit ? { commit: o.commit } : {},
    medians,
    gate,
    ...cand?.image ? { image: cand.image } : {},
    ...cand?.imageId ? { imageId: cand.imageId } : {},
    ...o.revision ? { revision: o.revision } : {},
    ...ref ? { reference: { image: ref.image ?? ref.label, ...ref.imageId ? { imageId: ref.imageId } : {}, label: ref.label } } : {},
    ...paired.length ? { ratios } : {},
    verdict: r.verdict,
    ...o.runUrl ? { runUrl: o.runUrl } : {},
    ...o.note ? { note: o.note } : {}
  };
}
function appendNight(h, entry, limit = NIGHTLY_LIMIT) {
  const entries = [...h.entries, entry].slice(-limit);
  const kept = new Set(entries.map((e) => e.createdAt));
  return { ...h, schemaVersion: SCHEMA_VERSION, entries, steps: h.steps.filter((s) => kept.has(s.at)) };
}

// src/compare/changepoint.ts
var CHANGE_DEFAULTS = { pValue: 1e-3, permutations: 9999, minSize: 3, minMagnitude: 0.03, seed: 20140101, kappa: false };
var leftSums = new Float64Array(64);
var rightSums = new Float64Array(64);
var prefix = new Float64Array(64 * 65);
function bestSplitToEnd(v, from, to, minSize) {
  const L = to - from;
  if (L < 2 * minSize) return void 0;
  if (leftSums.length < L) {
    leftSums = new Float64Array(2 * L);
    rightSums = new Float64Array(2 * L);
  }
  const left = leftSums;
  const right = rightSums;
  left.fill(0, 0, L);
  let all = 0;
  for (let i = 0; i < L; i++) {
    const vi = v[from + i];
    let r = 0;
    for (let j = i + 1; j < L; j++) {
      const d = Math.abs(vi - v[from + j]);
      left[j] += d;
      r += d;
    }
    right[i] = r;
    all += r;
  }
  let within = 0;
  let withinRight = all;
  let best;
  for (let t = 1; t < L; t++) {
    within += left[t - 1];
    withinRight -= right[t - 1];
    const m = t;
    const n = L - t;
    if (m < minSize || n < minSize) continue;
    const between = all - within - withinRight;
    const e = 2 * between / (m * n) - within / (m * (m - 1) / 2) - withinRight / (n * (n - 1) / 2);
    const q = m * n / (m + n) * e;
    if (!best || q > best.q) best = { at: from + t, q };
  }
  return best;
}
function bestSplitKappa(v, from, to, minSize) {
  const L = to - from;
  if (L < 2 * minSize) return void 0;
  const W = L + 1;
  if (prefix.length < L * W) prefix = new Float64Array(2 * L * W);
  const P = prefix;
  for (let j = 0; j < L; j++) {
    const vj = v[from + j];
    const row = j * W;
    P[row] = 0;
    for (let i = 0; i < L; i++) P[row + i + 1] = P[row + i] + Math.abs(v[from + i] - vj);
  }
  let best;
  let within = 0;
  for (let t = 1; t <= L - minSize; t++) {
    within += P[(t - 1) * W + (t - 1)];
    const m = t;
    if (m < minSize) continue;
    const wx = within / (m * (m - 1) / 2);
    let between = 0;
    let withinY = 0;
    for (let k = t; k < L; k++) {
      const row = k * W;
      between += P[row + t];
      withinY += P[row + k] - P[row + t];
      const n = k + 1 - t;
      if (n < minSize) continue;
      const e = 2 * between / (m * n) - wx - withinY / (n * (n - 1) / 2);
      const q = m * n / (m + n) * e;
      if (!best || q > best.q) best = { at: from + t, q };
    }
  }
  return best;
}
function bestOver(values, cuts, minSize, kappa) {
  let best;
  const split = kappa ? bestSplitKappa : bestSplitToEnd;
  for (let k = 0; k + 1 < cuts.length; k++) {
    const s = split(values, cuts[k], cuts[k + 1], minSize);
    if (s && (!best || s.q > best.q)) best = s;
  }
  return best;
}
var mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
function eDivisive(series, options = {}) {
  const o = { ...CHANGE_DEFAULTS, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== void 0)) };
  if (series.some((x) => !Number.isFinite(x))) throw new Error("eDivisive: the series holds a value that is not a finite number");
  const n = series.length;
  const cuts = [0, n];
  const pValues = /* @__PURE__ */ new Map();
  const random = rng(o.seed);
  const allowed = Math.floor(o.pValue * (o.permutations + 1) - 1 + 1e-9);
  const work = Float64Array.from(series);
  for (; ; ) {
    const best = bestOver(series, cuts, o.minSize, o.kappa);
    if (!best || !(best.q > 0)) break;
    let reached = 0;
    for (let r = 0; r < o.permutations && reached <= allowed; r++) {
      for (let k = 0; k + 1 < cuts.length; k++) {
        for (let i = cuts[k + 1] - 1; i > cuts[k]; i--) {
          const j = cuts[k] + Math.floor(random() * (i - cuts[k] + 1));
          const t = work[i];
          work[i] = work[j];
          work[j] = t;
        }
      }
      const shuffled = bestOver(work, cuts, o.minSize, o.kappa);
      if (shuffled && shuffled.q >= best.q) reached++;
    }
    const p = (1 + reached) / (1 + o.permutations);
    if (reached > allowed || p > o.pValue) break;
    pValues.set(best.at, p);
    cuts.push(best.at);
    cuts.sort((a, b) => a - b);
    work.set(series);
  }
  const splits = cuts.slice(1, -1);
  const points = [];
  for (let k = 1; k + 1 < cuts.length; k++) {
    const before = { from: cuts[k - 1], to: cuts[k], mean: mean(series.slice(cuts[k - 1], cuts[k])) };
    const after = { from: cuts[k], to: cuts[k + 1], mean: mean(series.slice(cuts[k], cuts[k + 1])) };
    const magnitude = after.mean / before.mean - 1;
    if (Number.isFinite(magnitude) && Math.abs(magnitude) >= o.minMagnitude) {
      points.push({ index: cuts[k], pValue: pValues.get(cuts[k]), before, after, magnitude });
    }
  }
  return { points, splits };
}

// src/compare/nightly.ts
var SAME_STEP_NIGHTS = 2;
function historySeries(h) {
  const entries = h.entries;
  const newest = [...entries].reverse().find((e) => e.ratios);
  const out = [];
  if (newest) {
    const ref = newest.reference?.imageId ?? newest.reference?.image;
    for (const [scenario, metrics] of Object.entries(newest.ratios)) {
      for (const metric of Object.keys(metrics)) {
        const nights = [];
        entries.forEach((e, i) => {
          const r = e.ratios?.[scenario]?.[metric];
          if (r && (e.reference?.imageId ?? e.reference?.image) === ref) nights.push(i);
        });
        out.push({ scenario, metric, series: "ratio", nights, values: nights.map((i) => entries[i].ratios[scenario][metric].ratio) });
      }
    }
    return out;
  }
  const last = entries.at(-1);
  for (const [scenario, metrics] of Object.entries(last?.gate ?? {})) {
    for (const metric of metrics) {
      const nights = entries.map((e, i) => Number.isFinite(e.medians?.[scenario]?.[metric]) ? i : -1).filter((i) => i >= 0);
      out.push({ scenario, metric, series: "median", nights, values: nights.map((i) => entries[i].medians[scenario][metric]) });
    }
  }
  return out;
}
function detectSteps(h, foundAt, options = {}) {
  const index = new Map(h.entries.map((e, i) => [e.createdAt, i]));
  const known = h.steps;
  const newSteps = [];
  const series = historySeries(h).map((s) => {
    const found = s.values.length >= 2 * (options.minSize ?? 3) ? eDivisive(s.values, options).points : [];
    const dir = metricDef(s.metric).direction;
    const steps = found.map((p) => {
      const step = {
        scenario: s.scenario,
        metric: s.metric,
        series: s.series,
        before: h.entries[s.nights[p.index - 1]].createdAt,
        at: h.entries[s.nights[p.index]].createdAt,
        magnitude: p.magnitude,
        worse: dir === "higher" ? p.magnitude < 0 : p.magnitude > 0,
        pValue: p.pValue,
        foundAt
      };
      const at = s.nights[p.index];
      const seen = known.find((k) => k.scenario === s.scenario && k.metric === s.metric && k.series === s.series && index.has(k.at) && Math.abs(index.get(k.at) - at) <= SAME_STEP_NIGHTS);
      if (!seen) newSteps.push(step);
      return { ...seen ?? step, index: p.index, isNew: !seen };
    });
    const points = s.nights.map((i) => {
      const e = h.entries[i];
      const r = s.series === "ratio" ? e.ratios[s.scenario][s.metric] : void 0;
      return {
        createdAt: e.createdAt,
        value: r ? r.ratio : e.medians[s.scenario][s.metric],
        ...r ? { ciLow: r.ciLow, ciHigh: r.ciHigh } : {},
        ...e.image ? { image: e.image } : {},
        ...e.revision ? { revision: e.revision } : {}
      };
    });
    return { scenario: s.scenario, metric: s.metric, series: s.series, points, steps };
  });
  return { series, newSteps, history: { ...h, steps: [...h.steps, ...newSteps] } };
}
var shellQuote = (s) => /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
function bisectSuggestion(step, h, o = {}) {
  const at = (t) => h.entries.find((e) => e.createdAt === t);
  const before = at(step.before);
  const after = at(step.at);
  const scenarios = o.scenarios ?? step.scenario;
  if (before?.revision && after?.revision && o.template) {
    return {
      scenario: step.scenario,
      metric: step.metric,
      command: `rabbitmq-perf-gate bisect --template ${shellQuote(o.template)} --range ${before.revision}..${after.revision} --repo PATH/TO/CHECKOUT --scenarios ${shellQuote(scenarios)}`,
      note: `or the action with mode: bisect, bisect-template: ${o.template}, bisect-range: ${before.revision}..${after.revision}, scenarios: ${scenarios} (from workflow_dispatch)`
    };
  }
  const img = (e) => e ? `${e.image ?? "?"}${e.imageId ? `@${e.imageId.replace(/^sha256:/, "").slice(0, 12)}` : ""}` : "?";
  return {
    scenario: step.scenario,
    metric: step.metric,
    command: `rabbitmq-perf-gate bisect --images ${shellQuote(`${before?.image ?? "GOOD"},\u2026,${after?.image ?? "BAD"}`)} --scenarios ${shellQuote(scenarios)}`,
    note: `the nights around it ran ${img(before)} and ${img(after)}; ${!before?.revision || !after?.revision ? "record each night's source commit (input revision, or the image label org.opencontainers.image.revision)" : "give an image template (input bisect-template)"} to get a git-range bisect command`
  };
}
function nightlySummary(d, file, o = {}) {
  return {
    file,
    nights: d.history.entries.length,
    series: d.series,
    newSteps: d.newSteps,
    bisect: d.newSteps.map((s) => bisectSuggestion(s, d.history, o)),
    notes: o.notes ?? []
  };
}
function recordNight(r, history, o) {
  const ratios = r.comparisons.some((c) => c.paired && c.gating);
  const note = ratios ? void 0 : `no paired ratio tonight (${r.decidedBy}): only the absolute medians were recorded, and they carry the runner's drift`;
  const entry = nightlyEntry(r, { commit: o.commit, runUrl: o.runUrl, revision: o.revision, note });
  const d = detectSteps(appendNight(history, entry), entry.createdAt, o.change);
  writeHistory(o.file, d.history);
  return { summary: nightlySummary(d, o.displayFile, { template: o.template, scenarios: o.scenarios, notes: [...o.notes ?? [], ...note ? [note] : []] }), history: d.history };
}

// src/cli/nightly.ts
var REVISION_LABEL = "org.opencontainers.image.revision";
function historyOrEmpty(file) {
  const read = readHistory(file);
  if (read.status === "unusable") throw read.error;
  return read.status === "ok" ? read.history : emptyHistory();
}
async function nightlyCommand(v) {
  if (!v.image && !v.target) throw new GateError("nightly measures an image it starts", { field: "--image" }, "give tonight's image, e.g. --image pivotalrabbitmq/rabbitmq:main-otp28");
  const baselineFile = resolve5(v["baseline-file"] ?? DEFAULTS.baselineFile);
  const historyFile = resolve5(v["history-file"] ?? DEFAULTS.historyFile);
  const scenarios = v.scenarios ?? DEFAULTS.scenarios;
  const { candidate, reference } = await cliTargets("check", v);
  resolveScenarios(scenarios);
  const history = historyOrEmpty(historyFile);
  const read = readBaseline(baselineFile);
  if (read.status === "unusable") throw read.error;
  const stored = read.status === "ok" ? read.baseline : void 0;
  if (!reference && !stored?.anchor) {
    throw new GateError(
      `nightly compares tonight's image pair by pair with a fixed reference broker, and ${baselineFile} ${stored ? "records no broker to start again" : "does not exist"}`,
      { file: baselineFile, field: "--baseline-file" },
      "refresh a baseline once on the reference image (rabbitmq-perf-gate refresh --image IMG), or give --baseline-image"
    );
  }
  const controller = new AbortController();
  const abort = () => controller.abort();
  process.once("SIGINT", abort);
  process.once("SIGTERM", abort);
  const ui = terminalUi(Object.fromEntries([candidate, reference].filter((t) => t).map((t) => [t.id, t.label])));
  let report;
  try {
    report = await runPipeline({
      scenarios,
      candidate,
      reference,
      mode: "check",
      stored,
      signal: controller.signal,
      runId: runIdFromEnv(),
      repetitions: numberOpt("repetitions", v.repetitions, 1, true),
      seed: numberOpt("seed", v.seed, 0, true),
      duration: numberOpt("duration", v.duration, 1),
      warmup: numberOpt("warmup", v.warmup, 0),
      timeLimitSeconds: (numberOpt("time-limit", v["time-limit"], 0) ?? DEFAULTS.timeLimitMinutes) * 60,
      sequential: !v["no-sequential"],
      looks: v.looks === void 0 ? void 0 : parseLooks(v.looks, "--looks")
    }, ui);
  } finally {
    ui.stop();
    process.off("SIGINT", abort);
    process.off("SIGTERM", abort);
  }
  const stopped = report.errors.find((e) => isRunScope(e.scope));
  if (!controller.signal.aborted && !stopped) {
    const image = candidate.kind === "docker" ? candidate.image : void 0;
    const revision = v.revision ?? (image ? await imageLabel(image, REVISION_LABEL) : void 0);
    const { summary } = recordNight(report, history, { file: historyFile, displayFile: v["history-file"] ?? DEFAULTS.historyFile, revision, template: v.template, scenarios });
    report.nightly = summary;
    ui.info(`history: ${historyFile} (${summary.nights} nights)`);
  } else ui.warn(`${stopped?.message ?? "interrupted"}: a partial night is not recorded; ${historyFile} was left untouched`);
  const section = report.nightly ? nightlySection(report.nightly) : "";
  const summaryMd = renderSummary(report, { name: "rabbitmq-perf-gate", trend: section });
  const files = writeReportFiles(resolve5(v.out ?? DEFAULTS.reportDir), report, summaryMd);
  emit(report, v, () => summaryMd);
  if (process.stdout.isTTY && !v.json && section) process.stdout.write(`
${section}`);
  ui.info(`report: ${files.json}`);
  if (controller.signal.aborted) return 130;
  if (stopped) return 2;
  return report.nightly?.newSteps.some((s) => s.worse) ? 1 : 0;
}
function stepsCommand(file, v) {
  const read = readHistory(file);
  if (read.status === "missing") throw new GateError("no such history file", { file }, "give the path of a nightly history (written by nightly)");
  if (read.status === "unusable") throw read.error;
  const h = read.history;
  const last = h.entries.at(-1);
  const d = detectSteps({ ...h, steps: [] }, last?.createdAt ?? (/* @__PURE__ */ new Date()).toISOString(), {
    minMagnitude: numberOpt("min-magnitude", v["min-magnitude"], 0),
    pValue: numberOpt("p-value", v["p-value"], 0)
  });
  const summary = nightlySummary(d, file);
  if (v.json) process.stdout.write(JSON.stringify(summary, null, 1) + "\n");
  else process.stdout.write(nightlySection(summary));
  return 0;
}

// src/cli.ts
function usageError(message) {
  process.stderr.write(`error: ${message} (see "rabbitmq-perf-gate --help")
`);
  return 2;
}
async function main(argv) {
  let parsed;
  try {
    parsed = parse(argv);
  } catch (e) {
    const m = /^(Unknown option|Option) '([^']+)'[^.]*/.exec(e.message);
    return usageError(m ? m[0] : e.message.split("\n")[0]);
  }
  const { values, positionals } = parsed;
  const [command, ...args] = positionals;
  if (values.help || command === "help") {
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
  if (args.length > spec.args) return usageError(`"${command}" takes ${spec.args || "no"} file argument${spec.args === 1 ? "" : "s"}, got "${args.join('" "')}"`);
  if (args.length < spec.args) {
    return usageError(command === "report" ? "report needs the path of a report.json" : command === "steps" ? "steps needs the path of a nightly history file" : "compare needs two files: NEW/report.json and OLD/report.json or a baseline.json");
  }
  try {
    switch (command) {
      case "run":
        return await runCommand("check", values);
      case "refresh":
        return await runCommand("refresh", values);
      case "list":
        return listCommand(values);
      case "report":
        return reportCommand(args[0], values);
      case "bisect":
        return await bisectCommand(values);
      case "nightly":
        return await nightlyCommand(values);
      case "steps":
        return stepsCommand(args[0], values);
      default:
        return compareCommand(args, values);
    }
  } catch (e) {
    process.stderr.write(`error: ${describeError(e)}
`);
    return 2;
  }
}
process.exitCode = await main(process.argv.slice(2));
export {
  main
};
