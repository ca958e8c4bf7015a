// The one way this project talks to Docker: the `docker` CLI run with execFile (no SDK, no shell).
// Owns turning "docker is not installed" and "the daemon is not reachable" into GateErrors, and
// the few typed commands the docker provider and the cleanup net need.
import { execFile, execFileSync } from 'node:child_process';
import { GateError } from '../schema/errors';

export interface DockerResult {
  code: number;
  stdout: string;
  stderr: string;
}

const DAEMON_DOWN = /Cannot connect to the Docker daemon|error during connect|Is the docker daemon running|permission denied while trying to connect to the Docker daemon/i;

function notInstalled(): GateError {
  return new GateError('the docker CLI was not found on PATH', { field: 'image' }, 'install Docker on the runner (or use a broker-url target instead of an image)');
}

function daemonDown(stderr: string): GateError {
  const first = stderr.trim().split('\n')[0] ?? '';
  return new GateError(`the Docker daemon is not reachable (${first})`, { field: 'image' }, 'start the Docker daemon, check DOCKER_HOST, and make sure this user may use docker');
}

/** The `docker create` / `docker run` commands still running: a container they make may appear
 *  after a signal's cleanup listed the containers, so the cleanup waits for them (settleCreates). */
const creating = new Set<Promise<unknown>>();

/** Waits (at most `ms`) until no `docker create` or `docker run` of this process is in flight. */
export async function settleCreates(ms = 10_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.allSettled([...creating]), new Promise((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

/** Runs `docker ...args`. Throws a GateError when docker is missing or the daemon is down; a
 *  non-zero exit is thrown too unless `allowFail`, in which case it is returned. */
export function docker(args: string[], opts: { allowFail?: boolean; timeoutMs?: number } = {}): Promise<DockerResult> {
  const run = dockerProcess(args, opts);
  if (args[0] === 'create' || args[0] === 'run') {
    creating.add(run);
    const done = () => creating.delete(run);
    run.then(done, done);
  }
  return run;
}

function dockerProcess(args: string[], opts: { allowFail?: boolean; timeoutMs?: number }): Promise<DockerResult> {
  return new Promise((resolve, reject) => {
    execFile('docker', args, { maxBuffer: 64 * 1024 * 1024, timeout: opts.timeoutMs ?? 120_000, encoding: 'utf8' }, (err, stdout, stderr) => {
      const e = err as (NodeJS.ErrnoException & { code?: string | number; killed?: boolean }) | null;
      if (e && e.code === 'ENOENT') return reject(notInstalled());
      const code = e ? (typeof e.code === 'number' ? e.code : 1) : 0;
      if (code !== 0 && DAEMON_DOWN.test(stderr)) return reject(daemonDown(stderr));
      if (e?.killed) return reject(new GateError(`docker ${args[0]} did not finish within ${(opts.timeoutMs ?? 120_000) / 1000} s`));
      if (code !== 0 && !opts.allowFail) {
        return reject(new GateError(`docker ${args.slice(0, 2).join(' ')} failed (exit ${code}): ${stderr.trim().slice(0, 500)}`));
      }
      resolve({ code, stdout, stderr });
    });
  });
}

/** Synchronous `docker rm -f -v`, for process 'exit' handlers where nothing async can run. */
export function removeContainersSync(refs: string[]): void {
  if (refs.length === 0) return;
  try {
    execFileSync('docker', ['rm', '-f', '-v', ...refs], { stdio: 'ignore', timeout: 30_000 });
  } catch {
    // Best effort: the post-step net removes whatever is left by label.
  }
}

/** Fails with a GateError unless the CLI is installed and the daemon answers. */
export async function assertDockerAvailable(): Promise<void> {
  await docker(['version', '--format', '{{.Server.Version}}'], { timeoutMs: 30_000 });
}

export async function imageExists(ref: string): Promise<boolean> {
  return (await docker(['image', 'inspect', '--format', '{{.Id}}', ref], { allowFail: true })).code === 0;
}

/** The local image's ID (sha256:…) and registry digests (repo@sha256:…), or undefined if absent. */
export async function imageIdentity(ref: string): Promise<{ id: string; repoDigests: string[] } | undefined> {
  const r = await docker(['image', 'inspect', '--format', '{{.Id}}{{range .RepoDigests}} {{.}}{{end}}', ref], { allowFail: true });
  if (r.code !== 0) return undefined;
  const [id, ...repoDigests] = r.stdout.trim().split(/\s+/).filter(Boolean);
  return id ? { id, repoDigests } : undefined;
}

/** Tries to pull an image; true when it is then present. */
export async function tryPull(ref: string): Promise<boolean> {
  return (await docker(['pull', '--quiet', ref], { allowFail: true, timeoutMs: 600_000 })).code === 0;
}

/** Makes sure the image is present locally, pulling it if needed. */
export async function ensureImage(ref: string): Promise<void> {
  if (await imageExists(ref)) return;
  if (!(await tryPull(ref))) {
    throw new GateError(`image ${ref} not found locally and could not be pulled`, { field: 'image' }, 'build it with scripts/build-images.sh or docker pull it');
  }
}

export async function removeContainers(refs: string[]): Promise<void> {
  if (refs.length > 0) await docker(['rm', '-f', '-v', ...refs], { allowFail: true, timeoutMs: 60_000 });
}

/** Freezes (`docker pause`) or thaws (`docker unpause`) containers; a failure is thrown. */
export async function setPaused(refs: string[], paused: boolean): Promise<void> {
  if (refs.length > 0) await docker([paused ? 'pause' : 'unpause', ...refs], { timeoutMs: 60_000 });
}

/** IDs of all containers (running or not) carrying every given label filter, e.g. "a=b". */
export async function listContainers(labels: string[]): Promise<string[]> {
  const r = await docker(['ps', '-a', '-q', '--no-trunc', ...labels.flatMap((l) => ['--filter', `label=${l}`])]);
  return r.stdout
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Full ID → name of every running container (any owner), for naming the machine's other load. */
export async function runningContainerNames(): Promise<Map<string, string>> {
  const r = await docker(['ps', '--no-trunc', '--format', '{{.ID}}\t{{.Names}}'], { timeoutMs: 30_000 });
  return new Map(
    r.stdout
      .split('\n')
      .filter((l) => l.includes('\t'))
      .map((l) => l.split('\t') as [string, string]),
  );
}

export async function containerState(ref: string): Promise<{ running: boolean; exitCode: number } | undefined> {
  const r = await docker(['inspect', '--format', '{{.State.Running}} {{.State.ExitCode}}', ref], { allowFail: true });
  if (r.code !== 0) return undefined;
  const [running, exitCode] = r.stdout.trim().split(' ');
  return { running: running === 'true', exitCode: Number(exitCode) };
}

/** The container's last `tail` log lines (stdout and stderr), without terminal colours. */
export async function containerLogs(ref: string, tail = 40): Promise<string[]> {
  const r = await docker(['logs', '--tail', String(tail), ref], { allowFail: true });
  // eslint-disable-next-line no-control-regex
  const text = (r.stdout + r.stderr).replace(/\x1b\[[0-9;]*m/g, '');
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .slice(-tail);
}

/** Runs a command inside a running container; output is stdout and stderr together. */
export async function exec(ref: string, cmd: string[], timeoutMs = 120_000): Promise<{ code: number; output: string }> {
  const r = await docker(['exec', ref, ...cmd], { allowFail: true, timeoutMs });
  return { code: r.code, output: (r.stdout + r.stderr).trim() };
}

/** The image's own environment (its ENV lines: `Config.Env`), or {} when it declares none. */
export async function imageEnv(ref: string): Promise<Record<string, string>> {
  const r = await docker(['image', 'inspect', '--format', '{{json .Config.Env}}', ref]);
  const list: unknown = JSON.parse(r.stdout.trim() || 'null');
  const out: Record<string, string> = {};
  if (Array.isArray(list)) {
    for (const e of list) {
      if (typeof e !== 'string') continue;
      const i = e.indexOf('=');
      if (i > 0) out[e.slice(0, i)] = e.slice(i + 1);
    }
  }
  return out;
}

/** The regular files of a tar archive (paths as stored, e.g. "rabbitmq/conf.d/10-defaults.conf"). */
export function untar(tar: Buffer): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const text = (b: Buffer) => b.toString('utf8').replace(/\0.*$/s, '');
  let longName: string | undefined;
  for (let at = 0; at + 512 <= tar.length; ) {
    const h = tar.subarray(at, at + 512);
    if (h.every((b) => b === 0)) break;
    const size = Number.parseInt(text(h.subarray(124, 136)).trim() || '0', 8);
    const type = String.fromCharCode(h[156] || 48);
    const body = tar.subarray(at + 512, at + 512 + size);
    const prefix = text(h.subarray(345, 500));
    let name = longName ?? (prefix ? `${prefix}/${text(h.subarray(0, 100))}` : text(h.subarray(0, 100)));
    longName = undefined;
    if (type === 'L') longName = text(body);
    else if (type === 'x') {
      // A PAX header: "<len> path=<name>\n" names the next entry.
      const m = /\d+ path=([^\n]*)\n/.exec(body.toString('utf8'));
      if (m) longName = m[1];
    } else if (type === '0' || type === '7') {
      name = name.replace(/^\.\//, '');
      out.set(name, Buffer.from(body));
    }
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

/** The files under `paths` in the image, copied out of a container `name` created from it (never
 *  started; the caller registers and removes it), keyed by their absolute path; a path the image
 *  does not have is left out. */
export async function imageFiles(image: string, name: string, paths: string[], labels: string[]): Promise<Map<string, Buffer>> {
  await docker(['create', '--name', name, ...labels, image]);
  const out = new Map<string, Buffer>();
  for (const path of paths) {
    const tar = await new Promise<Buffer | undefined>((resolve) => {
      execFile('docker', ['cp', '-L', `${name}:${path}`, '-'], { maxBuffer: 64 * 1024 * 1024, timeout: 60_000, encoding: 'buffer' }, (err, stdout) => resolve(err ? undefined : stdout));
    });
    if (!tar) continue;
    const parent = path.replace(/\/+$/, '').replace(/\/[^/]*$/, '');
    for (const [file, content] of untar(tar)) out.set(`${parent}/${file}`, content);
  }
  return out;
}

/** A label of a local image (e.g. org.opencontainers.image.revision), or undefined when it has none. */
export async function imageLabel(ref: string, label: string): Promise<string | undefined> {
  const r = await docker(['image', 'inspect', '--format', `{{index .Config.Labels ${JSON.stringify(label)}}}`, ref], { allowFail: true });
  const v = r.stdout.trim();
  return r.code === 0 && v && v !== '<no value>' ? v : undefined;
}
