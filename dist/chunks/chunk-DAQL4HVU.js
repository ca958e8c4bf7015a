import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);

// src/broker/cleanup.ts
import { readFileSync } from "node:fs";
import os from "node:os";

// src/broker/docker-cli.ts
import { execFile, execFileSync } from "node:child_process";

// src/schema/errors.ts
var GateError = class extends Error {
  constructor(message, where = {}, fix) {
    super(message);
    this.where = where;
    this.fix = fix;
    this.name = "GateError";
  }
  where;
  fix;
  /** One line: "file:line: field: message. Fix: …" (without file:line for annotations that carry it). */
  describe(withLocation = true) {
    const loc = withLocation ? [this.where.file, this.where.line].filter((x) => x !== void 0).join(":") : "";
    const field = this.where.field ? `${this.where.field}: ` : "";
    const fix = this.fix ? ` Fix: ${this.fix}` : "";
    return `${loc ? `${loc}: ` : ""}${field}${this.message}${fix}`;
  }
};
function describeError(err) {
  if (err instanceof GateError) return err.describe();
  if (err instanceof Error) {
    const code = err.code;
    return code && !err.message.includes(code) ? `${err.message} (${code})` : err.message;
  }
  return String(err);
}

// src/broker/docker-cli.ts
var DAEMON_DOWN = /Cannot connect to the Docker daemon|error during connect|Is the docker daemon running|permission denied while trying to connect to the Docker daemon/i;
function notInstalled() {
  return new GateError("the docker CLI was not found on PATH", { field: "image" }, "install Docker on the runner (or use a broker-url target instead of an image)");
}
function daemonDown(stderr) {
  const first = stderr.trim().split("\n")[0] ?? "";
  return new GateError(`the Docker daemon is not reachable (${first})`, { field: "image" }, "start the Docker daemon, check DOCKER_HOST, and make sure this user may use docker");
}
var creating = /* @__PURE__ */ new Set();
async function settleCreates(ms = 1e4) {
  let timer;
  await Promise.race([Promise.allSettled([...creating]), new Promise((r) => timer = setTimeout(r, ms))]);
  clearTimeout(timer);
}
function docker(args, opts = {}) {
  const run = dockerProcess(args, opts);
  if (args[0] === "create" || args[0] === "run") {
    creating.add(run);
    const done = () => creating.delete(run);
    run.then(done, done);
  }
  return run;
}
function dockerProcess(args, opts) {
  return new Promise((resolve, reject) => {
    execFile("docker", args, { maxBuffer: 64 * 1024 * 1024, timeout: opts.timeoutMs ?? 12e4, encoding: "utf8" }, (err, stdout, stderr) => {
      const e = err;
      if (e && e.code === "ENOENT") return reject(notInstalled());
      const code = e ? typeof e.code === "number" ? e.code : 1 : 0;
      if (code !== 0 && DAEMON_DOWN.test(stderr)) return reject(daemonDown(stderr));
      if (e?.killed) return reject(new GateError(`docker ${args[0]} did not finish within ${(opts.timeoutMs ?? 12e4) / 1e3} s`));
      if (code !== 0 && !opts.allowFail) {
        return reject(new GateError(`docker ${args.slice(0, 2).join(" ")} failed (exit ${code}): ${stderr.trim().slice(0, 500)}`));
      }
      resolve({ code, stdout, stderr });
    });
  });
}
function removeContainersSync(refs) {
  if (refs.length === 0) return;
  try {
    execFileSync("docker", ["rm", "-f", "-v", ...refs], { stdio: "ignore", timeout: 3e4 });
  } catch {
  }
}
async function assertDockerAvailable() {
  await docker(["version", "--format", "{{.Server.Version}}"], { timeoutMs: 3e4 });
}
async function imageExists(ref) {
  return (await docker(["image", "inspect", "--format", "{{.Id}}", ref], { allowFail: true })).code === 0;
}
async function imageIdentity(ref) {
  const r = await docker(["image", "inspect", "--format", "{{.Id}}{{range .RepoDigests}} {{.}}{{end}}", ref], { allowFail: true });
  if (r.code !== 0) return void 0;
  const [id, ...repoDigests] = r.stdout.trim().split(/\s+/).filter(Boolean);
  return id ? { id, repoDigests } : void 0;
}
async function tryPull(ref) {
  return (await docker(["pull", "--quiet", ref], { allowFail: true, timeoutMs: 6e5 })).code === 0;
}
async function ensureImage(ref) {
  if (await imageExists(ref)) return;
  if (!await tryPull(ref)) {
    throw new GateError(`image ${ref} not found locally and could not be pulled`, { field: "image" }, "build it with scripts/build-images.sh or docker pull it");
  }
}
async function removeContainers(refs) {
  if (refs.length > 0) await docker(["rm", "-f", "-v", ...refs], { allowFail: true, timeoutMs: 6e4 });
}
async function setPaused(refs, paused) {
  if (refs.length > 0) await docker([paused ? "pause" : "unpause", ...refs], { timeoutMs: 6e4 });
}
async function listContainers(labels) {
  const r = await docker(["ps", "-a", "-q", "--no-trunc", ...labels.flatMap((l) => ["--filter", `label=${l}`])]);
  return r.stdout.split("\n").map((s) => s.trim()).filter(Boolean);
}
async function runningContainerNames() {
  const r = await docker(["ps", "--no-trunc", "--format", "{{.ID}}	{{.Names}}"], { timeoutMs: 3e4 });
  return new Map(
    r.stdout.split("\n").filter((l) => l.includes("	")).map((l) => l.split("	"))
  );
}
async function containerState(ref) {
  const r = await docker(["inspect", "--format", "{{.State.Running}} {{.State.ExitCode}}", ref], { allowFail: true });
  if (r.code !== 0) return void 0;
  const [running, exitCode] = r.stdout.trim().split(" ");
  return { running: running === "true", exitCode: Number(exitCode) };
}
async function containerLogs(ref, tail = 40) {
  const r = await docker(["logs", "--tail", String(tail), ref], { allowFail: true });
  const text = (r.stdout + r.stderr).replace(/\x1b\[[0-9;]*m/g, "");
  return text.split("\n").filter((l) => l.trim() !== "").slice(-tail);
}
async function exec(ref, cmd, timeoutMs = 12e4) {
  const r = await docker(["exec", ref, ...cmd], { allowFail: true, timeoutMs });
  return { code: r.code, output: (r.stdout + r.stderr).trim() };
}
async function imageEnv(ref) {
  const r = await docker(["image", "inspect", "--format", "{{json .Config.Env}}", ref]);
  const list = JSON.parse(r.stdout.trim() || "null");
  const out = {};
  if (Array.isArray(list)) {
    for (const e of list) {
      if (typeof e !== "string") continue;
      const i = e.indexOf("=");
      if (i > 0) out[e.slice(0, i)] = e.slice(i + 1);
    }
  }
  return out;
}
function untar(tar) {
  const out = /* @__PURE__ */ new Map();
  const text = (b) => b.toString("utf8").replace(/\0.*$/s, "");
  let longName;
  for (let at = 0; at + 512 <= tar.length; ) {
    const h = tar.subarray(at, at + 512);
    if (h.every((b) => b === 0)) break;
    const size = Number.parseInt(text(h.subarray(124, 136)).trim() || "0", 8);
    const type = String.fromCharCode(h[156] || 48);
    const body = tar.subarray(at + 512, at + 512 + size);
    const prefix = text(h.subarray(345, 500));
    let name = longName ?? (prefix ? `${prefix}/${text(h.subarray(0, 100))}` : text(h.subarray(0, 100)));
    longName = void 0;
    if (type === "L") longName = text(body);
    else if (type === "x") {
      const m = /\d+ path=([^\n]*)\n/.exec(body.toString("utf8"));
      if (m) longName = m[1];
    } else if (type === "0" || type === "7") {
      name = name.replace(/^\.\//, "");
      out.set(name, Buffer.from(body));
    }
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}
async function imageFiles(image, name, paths, labels) {
  await docker(["create", "--name", name, ...labels, image]);
  const out = /* @__PURE__ */ new Map();
  for (const path of paths) {
    const tar = await new Promise((resolve) => {
      execFile("docker", ["cp", "-L", `${name}:${path}`, "-"], { maxBuffer: 64 * 1024 * 1024, timeout: 6e4, encoding: "buffer" }, (err, stdout) => resolve(err ? void 0 : stdout));
    });
    if (!tar) continue;
    const parent = path.replace(/\/+$/, "").replace(/\/[^/]*$/, "");
    for (const [file, content] of untar(tar)) out.set(`${parent}/${file}`, content);
  }
  return out;
}
async function imageLabel(ref, label) {
  const r = await docker(["image", "inspect", "--format", `{{index .Config.Labels ${JSON.stringify(label)}}}`, ref], { allowFail: true });
  const v = r.stdout.trim();
  return r.code === 0 && v && v !== "<no value>" ? v : void 0;
}

// src/broker/cleanup.ts
var LABEL = "rabbitmq-perf-gate";
var RUN_LABEL = "rabbitmq-perf-gate.run";
var OWNER_LABELS = { host: "rabbitmq-perf-gate.owner-host", pid: "rabbitmq-perf-gate.owner-pid", start: "rabbitmq-perf-gate.owner-start", boot: "rabbitmq-perf-gate.owner-boot" };
var registered = /* @__PURE__ */ new Set();
var runIds = /* @__PURE__ */ new Set();
var installed = false;
var signalExitCode;
var drain;
function drainBeforeSignalExit(done, ms = 7e3, onTimeout) {
  drain = { done, ms, onTimeout };
}
async function interruptible(work, o) {
  installCleanupHandlers();
  const controller = new AbortController();
  const abort = (sig) => {
    if (controller.signal.aborted) return;
    o.onSignal?.(sig);
    controller.abort(new Error(o.reason(sig)));
  };
  const onInt = () => abort("SIGINT");
  const onTerm = () => abort("SIGTERM");
  process.on("SIGINT", onInt);
  process.on("SIGTERM", onTerm);
  const done = work(controller.signal);
  drainBeforeSignalExit(done, o.drainMs, o.onTimeout);
  try {
    return await done;
  } finally {
    process.off("SIGINT", onInt);
    process.off("SIGTERM", onTerm);
  }
}
function defaultRunId(env = process.env) {
  if (env.RABBITMQ_PERF_GATE_RUN_ID) return env.RABBITMQ_PERF_GATE_RUN_ID;
  if (env.GITHUB_RUN_ID) return `gh-${env.GITHUB_RUN_ID}-${env.GITHUB_RUN_ATTEMPT ?? "1"}-${env.GITHUB_JOB ?? "job"}`;
  return `local-${process.pid}-${Date.now().toString(36)}`;
}
function labelArgs(runId) {
  const me2 = selfOwner();
  return [
    "--label",
    `${LABEL}=1`,
    "--label",
    `${RUN_LABEL}=${runId}`,
    ...Object.entries(OWNER_LABELS).flatMap(([k, label]) => me2[k] ? ["--label", `${label}=${me2[k]}`] : [])
  ];
}
function readText(file) {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return void 0;
  }
}
function procStat(pid, proc) {
  const text = readText(`${proc}/${pid}/stat`);
  const f = text?.slice(text.lastIndexOf(")") + 2).trim().split(/\s+/);
  return f && f.length > 19 ? { state: f[0], start: f[19] } : void 0;
}
var me;
function selfOwner() {
  me ??= { host: os.hostname(), pid: String(process.pid), start: procStat("self", "/proc")?.start, boot: readText("/proc/sys/kernel/random/boot_id")?.trim() };
  return me;
}
function ownerState(owner, self = selfOwner(), proc = "/proc") {
  if (!owner.host || !owner.pid || !/^\d+$/.test(owner.pid)) return "unknown";
  if (owner.host !== self.host) return "elsewhere";
  if (owner.boot && self.boot && owner.boot !== self.boot) return "gone";
  if (readText(`${proc}/self/stat`) === void 0) {
    try {
      process.kill(Number(owner.pid), 0);
      return "alive";
    } catch (e) {
      return e.code === "ESRCH" ? "gone" : "alive";
    }
  }
  const p = procStat(owner.pid, proc);
  if (!p || p.state === "Z" || p.state === "X") return "gone";
  if (owner.start && p.start !== owner.start) return "gone";
  return "alive";
}
async function labelledContainers() {
  const fields = ["{{.ID}}", "{{.Names}}", "{{.State}}", "{{.CreatedAt}}", `{{.Label "${RUN_LABEL}"}}`, ...Object.values(OWNER_LABELS).map((l) => `{{.Label "${l}"}}`)];
  const r = await docker(["ps", "-a", "--no-trunc", "--filter", `label=${LABEL}=1`, "--format", fields.join("	")], { timeoutMs: 3e4 });
  return r.stdout.split("\n").filter((l) => l.trim()).map((l) => {
    const [id, name, state, created, runId, host, pid, start, boot] = l.split("	");
    const owner = Object.fromEntries(Object.entries({ host, pid, start, boot }).filter(([, v]) => v && v !== "<no value>"));
    return { id, name, state, created, ...runId && runId !== "<no value>" ? { runId } : {}, owner };
  });
}
function describeContainer(c) {
  const who = c.owner.pid ? `pid ${c.owner.pid}${c.owner.host && c.owner.host !== os.hostname() ? ` on ${c.owner.host}` : ""}` : "no owner label";
  return `${c.name} (${[c.runId ? `run ${c.runId}` : void 0, who, c.state].filter(Boolean).join(", ")})`;
}
async function sweepOrphans() {
  const self = selfOwner();
  const all = (await labelledContainers()).filter((c) => !(c.owner.host === self.host && c.owner.pid === self.pid && (c.owner.start ?? "") === (self.start ?? "")));
  const sweep = { removed: [], live: [], unknown: [] };
  for (const c of all) {
    const state = ownerState(c.owner, self);
    if (state === "gone") sweep.removed.push(c);
    else if (state === "alive") sweep.live.push(c);
    else sweep.unknown.push(c);
  }
  if (sweep.removed.length) await removeContainers(sweep.removed.map((c) => c.id));
  return sweep;
}
function registerContainer(ref, runId) {
  installCleanupHandlers();
  if (signalExitCode !== void 0) throw new Error(`not creating ${ref}: the process is stopping on ${signalExitCode === 130 ? "SIGINT" : "SIGTERM"}`);
  registered.add(ref);
  runIds.add(runId);
}
async function removeRegistered(refs = [...registered]) {
  await removeContainers(refs);
  for (const r of refs) registered.delete(r);
}
async function removeRunContainers(runId) {
  const ids = await listContainers(runId ? [`${RUN_LABEL}=${runId}`] : [`${LABEL}=1`]);
  await removeContainers(ids);
  return ids;
}
async function onSignal(signal) {
  const code = signal === "SIGINT" ? 130 : 143;
  if (signalExitCode !== void 0) process.exit(code);
  signalExitCode = code;
  try {
    await settleCreates();
    await removeContainers([...registered]);
    for (const run of runIds) await removeRunContainers(run);
  } catch {
  }
  if (drain) {
    let timer;
    const finished = await Promise.race([
      drain.done.then(
        () => true,
        () => true
      ),
      new Promise((r) => {
        timer = setTimeout(() => r(false), drain.ms);
      })
    ]);
    clearTimeout(timer);
    if (!finished) drain.onTimeout?.();
  }
  process.exit(code);
}
function installCleanupHandlers() {
  if (installed) return;
  installed = true;
  process.on("exit", () => {
    removeContainersSync([...registered]);
    if (signalExitCode !== void 0) process.exitCode = signalExitCode;
  });
  process.on("SIGINT", () => void onSignal("SIGINT"));
  process.on("SIGTERM", () => void onSignal("SIGTERM"));
}

export {
  GateError,
  describeError,
  docker,
  assertDockerAvailable,
  imageExists,
  imageIdentity,
  tryPull,
  ensureImage,
  setPaused,
  listContainers,
  runningContainerNames,
  containerState,
  containerLogs,
  exec,
  imageEnv,
  imageFiles,
  imageLabel,
  LABEL,
  RUN_LABEL,
  OWNER_LABELS,
  drainBeforeSignalExit,
  interruptible,
  defaultRunId,
  labelArgs,
  selfOwner,
  ownerState,
  labelledContainers,
  describeContainer,
  sweepOrphans,
  registerContainer,
  removeRegistered,
  removeRunContainers,
  installCleanupHandlers
};
