#!/usr/bin/env node
import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  DEFAULTS,
  TOOL_VERSION,
  abEstimate,
  baselineFromRun,
  bisectSession,
  bisectTerminal,
  buildPlan,
  candidateCouldNotStart,
  catalogueIds,
  colorAllowed,
  defaultRepetitions,
  detectSteps,
  emptyHistory,
  estimateSeconds,
  fingerprintMismatch,
  isRunScope,
  judge,
  lineDiff,
  loadPresets,
  loadTarget,
  machineText,
  metricDef,
  nightlySection,
  nightlySummary,
  num,
  paint,
  parseLooks,
  readBaseline,
  readHistory,
  readStored,
  recordNight,
  renderBisectHtml,
  renderBisectMarkdown,
  renderHtml,
  renderSummary,
  resolveBisectImages,
  resolveScenarios,
  resumedTargets,
  runPipeline,
  terminalTable,
  trialValues,
  workingTree,
  writeBaseline,
  writeBisectFiles,
  writeFileAtomic,
  writeReportFiles,
  writeReportJson
} from "./chunks/chunk-U5F3MZGA.js";
import {
  GateError,
  describeContainer,
  describeError,
  imageLabel,
  interruptible,
  sweepOrphans
} from "./chunks/chunk-DAQL4HVU.js";
import "./chunks/chunk-FDGYIFXX.js";

// src/cli/shared.ts
import { resolve } from "node:path";
import { parseArgs } from "node:util";
var HELP = `rabbitmq-perf-gate ${TOOL_VERSION} \u2014 RabbitMQ performance regression gate

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
  --looks N,N,\u2026          run only, A/B: group-sequential \u2014 judge each scenario after these many
                         pairs and stop it once decided; the last is the cap (default: the
                         preset's looks \u2014 pr: 10,12,\u2026,64 \u2014 unless --repetitions is given)
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
  --resume DIR           go on with an interrupted run from the report in DIR (its --out): the same
                         seed, plan and settings; its targets (or the ones given) are started again
                         and must be the same brokers; the trials it kept plus the rest of its plan
                         are written to DIR (or --out)
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
  resume: { type: "string" },
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
  version: { type: "boolean" },
  "no-freeze": { type: "boolean" },
  "no-anchor": { type: "boolean" },
  looks: { type: "string" },
  "no-sequential": { type: "boolean" },
  "no-fail-fast": { type: "boolean" },
  "flame-graph": { type: "boolean" }
};
var RUN_OPTS = ["scenarios", "broker-url", "management-url", "broker-label", "image", "target", "baseline-file", "repetitions", "duration", "warmup", "seed", "out", "resume", "json", "html"];
var COMMANDS = {
  run: { options: [...RUN_OPTS, "baseline-image", "baseline-target", "no-freeze", "no-anchor", "looks", "no-sequential", "no-fail-fast", "flame-graph"], args: 0 },
  refresh: { options: RUN_OPTS, args: 0 },
  compare: { options: ["json", "html"], args: 2 },
  report: { options: ["json", "html"], args: 1 },
  list: { options: ["json"], args: 0 },
  cleanup: { options: ["json"], args: 0 },
  bisect: {
    options: ["images", "good", "bad", "template", "range", "repo", "state", "time-limit", "attempts", "scenarios", "duration", "warmup", "looks", "repetitions", "seed", "out", "json", "html"],
    args: 0
  },
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

// src/cli/run.ts
import { existsSync as existsSync2, statSync as statSync2 } from "node:fs";
import { dirname, join, resolve as resolve3 } from "node:path";

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
  if (v["baseline-image"] && v["baseline-target"])
    throw new GateError("cannot be combined with --baseline-image: both describe the reference broker", { field: "--baseline-target" }, "keep one of them");
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
var PLAN_OPTIONS = ["scenarios", "repetitions", "seed", "duration", "warmup", "looks", "no-sequential", "no-fail-fast", "no-freeze", "flame-graph", "no-anchor"];
var TARGET_OPTIONS = ["image", "target", "baseline-image", "baseline-target", "broker-url", "management-url", "broker-label"];
function interruptedRun(given, mode, v) {
  const path = resolve3(given);
  const file = existsSync2(path) && statSync2(path).isFile() ? path : join(path, "report.json");
  const { report } = readStored(file);
  if (!report) throw new GateError("is a baseline, not the report.json of a run", { file, field: "--resume" }, "give the --out folder of the interrupted run");
  if (!report.resume) {
    throw new GateError(
      report.errors.some((e) => isRunScope(e.scope)) ? "this run stopped early, but its report records nothing to resume from (an older version wrote it)" : "this run finished: there is nothing to resume",
      { file, field: "--resume" },
      "start a new run"
    );
  }
  const kind = report.mode === "refresh" ? "refresh" : "check";
  if (kind !== mode)
    throw new GateError(
      `it is a ${kind === "refresh" ? "refresh" : "run"}`,
      { file, field: "--resume" },
      `resume it with "rabbitmq-perf-gate ${kind === "refresh" ? "refresh" : "run"} --resume ${given}"`
    );
  const fixed = PLAN_OPTIONS.find((o) => v[o] !== void 0);
  if (fixed) throw new GateError(`cannot be combined with --resume: the resumed run keeps the interrupted run's seed, plan and settings`, { field: `--${fixed}` }, `drop --${fixed}`);
  return { report, file, dir: dirname(file), record: report.resume };
}
async function runCommand(mode, v) {
  const prior = v.resume !== void 0 ? interruptedRun(v.resume, mode, v) : void 0;
  const baselineFile = resolve3(v["baseline-file"] ?? prior?.record.baselineFile ?? DEFAULTS.baselineFile);
  const { candidate, reference, note, diff } = prior && !TARGET_OPTIONS.some((o) => v[o] !== void 0) ? { ...resumedTargets(prior.record, prior.file), note: prior.record.targetNote, diff: prior.record.targetDiff } : await cliTargets(mode, v);
  const runId = runIdFromEnv();
  if (!prior) resolveScenarios(v.scenarios ?? DEFAULTS.scenarios);
  const r = prior?.record;
  const opts = r ? { freezeIdle: r.freezeIdle, anchor: r.anchor, failFast: r.failFast, flameGraph: r.flameGraph } : {
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
  const outDir = resolve3(v.out ?? prior?.dir ?? DEFAULTS.reportDir);
  const ui = terminalUi(Object.fromEntries([candidate, reference].filter((t) => t).map((t) => [t.id, t.label])));
  const read = readBaseline(baselineFile);
  if (read.status === "unusable") ui.warn(`${read.error.describe()} \u2014 continuing without a stored baseline`);
  if (read.status === "missing" && mode === "check" && !reference) ui.info(`no stored baseline at ${baselineFile}: nothing to compare with (create one with "refresh")`);
  const stored = read.status === "ok" ? read.baseline : void 0;
  let interruptedBy;
  let unsaved = false;
  const checkpoint = (r2) => {
    if (r2.resume) r2.resume.baselineFile = baselineFile;
    try {
      writeReportJson(outDir, r2);
    } catch (e) {
      if (!unsaved) ui.warn(`could not save the report after a trial (${describeError(e)}); it is written at the end`);
      unsaved = true;
    }
  };
  return interruptible(
    async (signal) => {
      let report;
      try {
        report = await runPipeline(
          {
            scenarios: v.scenarios ?? DEFAULTS.scenarios,
            candidate,
            reference,
            mode,
            stored,
            signal,
            runId,
            targetNote: note,
            targetDiff: diff,
            ...opts,
            checkpoint,
            ...prior ? { resume: { report: prior.report, file: prior.file } } : {}
          },
          ui
        );
      } finally {
        ui.stop();
      }
      if (report.resume) report.resume.baselineFile = baselineFile;
      const summary = renderSummary(report, { name: "rabbitmq-perf-gate" });
      const files = writeReportFiles(outDir, report, summary);
      if (mode === "refresh" && !signal.aborted) {
        if (!report.trials.some((t) => t.valid && t.target === report.candidate)) throw new GateError("no valid trials; the stored baseline was left untouched", { file: baselineFile });
        writeBaseline(baselineFile, baselineFromRun(report, stored));
        ui.info(`baseline written to ${baselineFile}`);
      }
      emit(report, v, () => summary);
      const machine = machineText(report);
      if (machine) (report.machine?.busy ? ui.warn : ui.info)(machine);
      ui.info(`report: ${files.json}`);
      if (signal.aborted) {
        const stop = report.errors.find((e) => isRunScope(e.scope))?.message ?? "Stopped early.";
        ui.warn(
          `${stop} The containers were removed; the trials that ran are in ${files.json} (summary.md, report.html)${mode === "refresh" ? `; the stored baseline ${baselineFile} was left untouched` : ""}. Go on with: rabbitmq-perf-gate ${mode === "refresh" ? "refresh" : "run"} --resume ${outDir}`
        );
        return interruptedBy === "SIGTERM" ? 143 : 130;
      }
      return report.verdict === "fail" ? 1 : 0;
    },
    {
      reason: () => "the run was interrupted",
      drainMs: 3e4,
      onSignal: (sig) => {
        interruptedBy = sig;
        ui.warn(`${sig}: removing the containers, then writing the report of the trials that ran (${sig === "SIGINT" ? "Ctrl-C" : "a second signal"} again quits at once)`);
      },
      onTimeout: () => process.stderr.write("error: the report of the interrupted run could not be written within 30 s; exiting without it\n")
    }
  );
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
    lines.push(
      `  ${p.name.padEnd(10)} ${String(p.scenarios.length).padStart(3)} scenarios, ~${Math.ceil(p.secondsPerTarget / 60)} min alone (${p.repetitions} trials), ` + (p.abLooks ? `~${Math.ceil(p.abSecondsFirstLook / 60)}\u2013${Math.ceil(p.abSecondsCap / 60)} min A/B (sequential, ${p.abLooks[0]}\u2013${p.abLooks.at(-1)} pairs; fixed ${p.abRepetitions} pairs ~${Math.ceil(p.abSeconds / 60)} min)` : `~${Math.ceil(p.abSeconds / 60)} min A/B (${p.abRepetitions} pairs)`) + ` \u2014 ${p.description}`
    );
  }
  lines.push("", "Scenarios (warm-up + measured seconds; \xD7N: variants over the file's axes):");
  for (const s of scenarios) {
    const text = s.description.replace(/\s+/g, " ");
    const short = text.length > 80 ? `${text.slice(0, 79).replace(/\s+\S*$/, "")}\u2026` : text;
    const variants = s.variants.length > 1 ? `\xD7${s.variants.length}` : "";
    lines.push(`  ${s.id.padEnd(30)} ${`${s.warmupSeconds}+${s.durationSeconds} s`.padEnd(7)} ${variants.padEnd(3)} ${short}`);
  }
  process.stdout.write(lines.join("\n") + "\n");
  return 0;
}

// src/cli/cleanup.ts
async function cleanupCommand(v) {
  const s = await sweepOrphans();
  if (v.json) {
    process.stdout.write(`${JSON.stringify({ removed: s.removed, live: s.live, unknown: s.unknown }, null, 1)}
`);
    return 0;
  }
  const section = (title, cs) => cs.length ? `${title} (${cs.length}):
${cs.map((c) => `  ${describeContainer(c)}
`).join("")}` : "";
  const out = [
    s.removed.length ? section("Removed: containers of runs whose process is gone", s.removed) : "Nothing to remove: no container of an ended run is left.\n",
    section("Left alone: containers of runs still going (they load this machine)", s.live),
    section("Left alone: containers without an owner on this host (older versions or another host; docker rm -f them once no run uses them)", s.unknown)
  ].join("");
  process.stdout.write(out);
  return 0;
}

// src/cli/report.ts
function reportCommand(file, v) {
  const { report } = readStored(file);
  if (!report) throw new GateError("this is a baseline.json, not a report", { file }, `compare a run with it: rabbitmq-perf-gate compare REPORT.json ${file}`);
  emit(report, { ...v, json: v.json }, () => renderSummary(report, { name: "rabbitmq-perf-gate" }));
  return 0;
}
function compareCommand(files, v) {
  let [a, b] = files.map((f) => ({ file: f, ...readStored(f) }));
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
function bisectExit(r, interrupted) {
  if (interrupted) return 130;
  if (r.status.state === "running") return 3;
  return r.status.state === "found" ? 0 : 1;
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
    report = await bisectSession(
      {
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
        describe: describeError
      }
    );
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
    report = await runPipeline(
      {
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
      },
      ui
    );
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
  if (values.version && !command) {
    process.stdout.write(`${TOOL_VERSION}
`);
    return 0;
  }
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
    return usageError(
      command === "report" ? "report needs the path of a report.json" : command === "steps" ? "steps needs the path of a nightly history file" : "compare needs two files: NEW/report.json and OLD/report.json or a baseline.json"
    );
  }
  try {
    switch (command) {
      case "run":
        return await runCommand("check", values);
      case "refresh":
        return await runCommand("refresh", values);
      case "list":
        return listCommand(values);
      case "cleanup":
        return await cleanupCommand(values);
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
