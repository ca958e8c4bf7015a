#!/usr/bin/env node
import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);
import {
  ANSWER_WORD,
  DEFAULTS,
  TOOL_VERSION,
  abEstimate,
  answerCell,
  baselineFromRun,
  baselineHint,
  buildPlan,
  catalogueIds,
  ciLabel,
  defaultRepetitions,
  delta,
  estimateSeconds,
  evidenceForRegressions,
  fingerprintMismatch,
  headlineText,
  isRunScope,
  judge,
  lineDiff,
  loadPresets,
  loadTarget,
  measuredRows,
  metricDef,
  nText,
  nothingToCompare,
  num,
  parseLooks,
  readBaseline,
  renderHtml,
  renderSummary,
  resolveScenarios,
  runAnswer,
  runPipeline,
  sequentialText,
  storedPowerText,
  trialValues,
  withScenarioKind,
  workingTree,
  writeBaseline,
  writeFileAtomic,
  writeReportFiles
} from "./chunks/chunk-DLRO3T6E.js";
import {
  GateError,
  describeError
} from "./chunks/chunk-KYWVVTLW.js";
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
  if (nothingToCompare(r)) return `${c("1", "= MEASURED")}  ${headlineText(r)}

${measuredTable(r, c)}`;
  const answer = runAnswer(r);
  const ac = { regression: "1;31", "no-regression": r.verdict === "warn" ? "33" : "32", undecided: "2" };
  const ai = { regression: "\u2718", "no-regression": r.verdict === "warn" ? "!" : "\u2714", undecided: "?" };
  const head = `${c(ac[answer], `${ai[answer]} ${ANSWER_WORD[answer].toUpperCase()}`)}  ${headlineText(r)} \u2014 decided by ${r.decidedBy}`;
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
    answerCell(x) + (x.gating ? "" : " (info)")
  ]);
  const hidden = r.comparisons.length - cs.length;
  const against = multi ? "" : `${r.comparisons[0].candidateLabel} vs ${r.comparisons[0].against === "stored" ? "the stored baseline" : r.comparisons[0].baselineLabel}
`;
  const header = ["Scenario", "Metric", "Baseline", "Now", `\u0394 [${ciLabel(r)}]`, "n", "Answer"];
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
Output options (run, refresh, compare, report):
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
  list: { options: ["json"], args: 0 }
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
    const short = text.length > 80 ? `${text.slice(0, 79).replace(/\s+\S*$/, "")}\u2026` : text;
    const variants = s.variants.length > 1 ? `\xD7${s.variants.length}` : "";
    lines.push(`  ${s.id.padEnd(30)} ${`${s.warmupSeconds}+${s.durationSeconds} s`.padEnd(7)} ${variants.padEnd(3)} ${short}`);
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
  if (args.length < spec.args) return usageError(command === "report" ? "report needs the path of a report.json" : "compare needs two files: NEW/report.json and OLD/report.json or a baseline.json");
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
