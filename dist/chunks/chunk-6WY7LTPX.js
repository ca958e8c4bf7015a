import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);

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
  return new GateError(
    "the docker CLI was not found on PATH",
    { field: "image" },
    "install Docker on the runner (or use a broker-url target instead of an image)"
  );
}
function daemonDown(stderr) {
  const first = stderr.trim().split("\n")[0] ?? "";
  return new GateError(
    `the Docker daemon is not reachable (${first})`,
    { field: "image" },
    "start the Docker daemon, check DOCKER_HOST, and make sure this user may use docker"
  );
}
function docker(args, opts = {}) {
  return new Promise((resolve, reject) => {
    execFile(
      "docker",
      args,
      { maxBuffer: 64 * 1024 * 1024, timeout: opts.timeoutMs ?? 12e4, encoding: "utf8" },
      (err, stdout, stderr) => {
        const e = err;
        if (e && e.code === "ENOENT") return reject(notInstalled());
        const code = e ? typeof e.code === "number" ? e.code : 1 : 0;
        if (code !== 0 && DAEMON_DOWN.test(stderr)) return reject(daemonDown(stderr));
        if (e?.killed) return reject(new GateError(`docker ${args[0]} did not finish within ${(opts.timeoutMs ?? 12e4) / 1e3} s`));
        if (code !== 0 && !opts.allowFail) {
          return reject(new GateError(`docker ${args.slice(0, 2).join(" ")} failed (exit ${code}): ${stderr.trim().slice(0, 500)}`));
        }
        resolve({ code, stdout, stderr });
      }
    );
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
    throw new GateError(
      `image ${ref} not found locally and could not be pulled`,
      { field: "image" },
      "build it with scripts/build-images.sh or docker pull it"
    );
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
async function imageLabel(ref, label) {
  const r = await docker(["image", "inspect", "--format", `{{index .Config.Labels ${JSON.stringify(label)}}}`, ref], { allowFail: true });
  const v = r.stdout.trim();
  return r.code === 0 && v && v !== "<no value>" ? v : void 0;
}

// src/broker/cleanup.ts
var LABEL = "rabbitmq-perf-gate";
var RUN_LABEL = "rabbitmq-perf-gate.run";
var registered = /* @__PURE__ */ new Set();
var runIds = /* @__PURE__ */ new Set();
var installed = false;
var signalExitCode;
var drain;
function drainBeforeSignalExit(done, ms = 7e3) {
  drain = { done, ms };
}
function defaultRunId(env = process.env) {
  if (env.RABBITMQ_PERF_GATE_RUN_ID) return env.RABBITMQ_PERF_GATE_RUN_ID;
  if (env.GITHUB_RUN_ID) return `gh-${env.GITHUB_RUN_ID}-${env.GITHUB_RUN_ATTEMPT ?? "1"}-${env.GITHUB_JOB ?? "job"}`;
  return `local-${process.pid}-${Date.now().toString(36)}`;
}
function labelArgs(runId) {
  return ["--label", `${LABEL}=1`, "--label", `${RUN_LABEL}=${runId}`];
}
function registerContainer(ref, runId) {
  installCleanupHandlers();
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
    await removeContainers([...registered]);
    for (const run of runIds) await removeRunContainers(run);
  } catch {
  }
  if (drain) {
    let timer;
    await Promise.race([drain.done.catch(() => void 0), new Promise((r) => {
      timer = setTimeout(r, drain.ms);
    })]);
    clearTimeout(timer);
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
  containerState,
  containerLogs,
  exec,
  imageLabel,
  LABEL,
  RUN_LABEL,
  drainBeforeSignalExit,
  defaultRunId,
  labelArgs,
  registerContainer,
  removeRegistered,
  removeRunContainers,
  installCleanupHandlers
};
