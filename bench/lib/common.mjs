// Shared helpers for the bench scripts: bundling the TypeScript child on the fly, throw-away
// vhosts through the management API, /proc CPU accounting, the broker's process id, medians and
// plain-text tables. Plain Node ESM, no dependencies beyond esbuild (already a dev dependency).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** The PerfTest command lines the benches run (rabbitmq/testing's, with the classic-queue wrapper flags). */
export const WORKLOADS = {
  'one_fast-100': '-x 1 -y 1 -c 3000 -u one_fast -qa x-max-length=5000000 -ad false -f persistent -s 100',
  'one_fast-5k': '-x 1 -y 1 -c 3000 -u one_fast -qa x-max-length=5000000 -ad false -f persistent -s 5000',
  fanout10: '-x 1 -y 10 -c 100 -e amq.fanout -t fanout -qp q-%d -qpf 1 -qpt 10 -qa x-max-length=1000000 -ad false -f persistent -s 100',
  fivers: '-x 5 -y 5 -r 10000 -c 500 -qp fivers-%d -qpf 1 -qpt 5 -qa x-max-length=1000000 -ad false -f persistent -s 100',
};

/** Starts a private broker container (see container-broker.ts); `stop()` removes it. */
export async function containerBroker(image, configFiles = []) {
  const mod = await import(await bundle('bench/lib/container-broker.ts'));
  return mod.start(image, {}, configFiles);
}

/**
 * Bundles a TypeScript entry (relative to `root`, default this checkout) into a temporary ESM
 * file and returns its path.
 */
export async function bundle(entry, root = ROOT) {
  const { build } = await import('esbuild');
  const dir = mkdtempSync(join(tmpdir(), 'perf-gate-bench-'));
  const outfile = join(dir, entry.replace(/\W+/g, '-') + '.mjs');
  await build({
    absWorkingDir: root,
    nodePaths: [join(ROOT, 'node_modules')],
    entryPoints: [resolve(root, entry)],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    sourcemap: 'inline',
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    logLevel: 'warning',
  });
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return outfile;
}

export class Management {
  constructor(url) {
    const u = new URL(url);
    this.auth = 'Basic ' + Buffer.from(`${decodeURIComponent(u.username || 'guest')}:${decodeURIComponent(u.password || 'guest')}`).toString('base64');
    u.username = '';
    u.password = '';
    this.base = u.toString().replace(/\/+$/, '');
  }

  async request(method, path, body) {
    const res = await fetch(this.base + path, {
      method,
      headers: { authorization: this.auth, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    if (!res.ok && !(method === 'DELETE' && res.status === 404)) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    const text = await res.text();
    return text ? JSON.parse(text) : undefined;
  }

  async createVhost(name, user) {
    const v = encodeURIComponent(name);
    await this.request('PUT', `/api/vhosts/${v}`, {});
    await this.request('PUT', `/api/permissions/${v}/${encodeURIComponent(user)}`, { configure: '.*', write: '.*', read: '.*' });
  }

  deleteVhost(name) {
    return this.request('DELETE', `/api/vhosts/${encodeURIComponent(name)}`);
  }
}

export function vhostUrl(amqpUrl, vhost) {
  const u = new URL(amqpUrl);
  u.pathname = '/' + encodeURIComponent(vhost);
  return u.toString();
}

/** utime + stime of a process in seconds (/proc/<pid>/stat fields 14 and 15), every thread. */
export function cpuSeconds(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / CLK_TCK;
  } catch {
    return NaN;
  }
}

/** Busy CPU seconds of the whole machine (all cores; /proc/stat minus idle and iowait). */
export function machineBusySeconds() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return (total - f[3] - f[4]) / CLK_TCK;
}

/** Resident set size in bytes from /proc/<pid>/status. */
export function rssBytes(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** Process id of whatever listens on the AMQP URL's port (the broker's beam.smp), if visible. */
export function listenerPid(amqpUrl) {
  const port = new URL(amqpUrl).port || '5672';
  try {
    const out = execFileSync('ss', ['-Hltnp', `sport = :${port}`]).toString();
    const m = /pid=(\d+)/.exec(out);
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

export const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Sample standard deviation (n − 1). */
export function sd(xs) {
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, v) => a + (v - m) ** 2, 0) / Math.max(1, xs.length - 1));
}

/** The median absolute deviation scaled to an SD under normality (1.4826 · MAD). */
export const mad = (xs) => {
  const m = median(xs);
  return 1.4826 * median(xs.map((v) => Math.abs(v - m)));
};

export function median(xs) {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return NaN;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

export function table(headers, rows) {
  const cells = [headers, ...rows].map((r) => r.map((c) => String(c)));
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  const line = (r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(cells[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

export const fmt = (x, digits = 0) => (Number.isFinite(x) ? x.toFixed(digits) : '-');
export { setTimeout as sleep } from 'node:timers/promises';

/** Spawns a process and calls onLine for each stdout line; resolves with the exit code. */
export function run(cmd, args, { onLine, onErrLine, env, timeoutMs } = {}) {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: env ?? process.env });
  const lines = (stream, fn) => {
    let buf = '';
    stream.setEncoding('utf8');
    stream.on('data', (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const l = buf.slice(0, i);
        buf = buf.slice(i + 1);
        fn?.(l, child);
      }
    });
  };
  lines(child.stdout, onLine);
  lines(child.stderr, onErrLine);
  const timer = timeoutMs ? setTimeout(() => child.kill('SIGKILL'), timeoutMs) : undefined;
  const done = new Promise((res) =>
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      res(code ?? signal);
    }),
  );
  return { child, done };
}
