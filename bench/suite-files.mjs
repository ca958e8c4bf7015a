#!/usr/bin/env node
// What each integration test file costs the machine, run alone through vitest one after another
// (as the suite runs them): wall seconds, the machine's busy cores over the file (/proc/stat, all
// cores busy = the core count), the core-seconds it left idle, and the broker containers it started (docker
// events). The summary says how far packing files side by side could ever take the suite: its
// busy core-seconds over the cores are the floor of the wall time, whatever the lanes.
//   node_modules/.bin/node bench/suite-files.mjs [--files a,b] [--out bench/results/suite/suite-files-<date>.json]
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { benchArgs, list, optional } from './lib/args.mjs';
import { fmt, machineBusySeconds, ROOT, run, table } from './lib/common.mjs';

const { values: o } = benchArgs({ files: list(''), out: optional() });
const files = o.files.length
  ? o.files
  : readdirSync(join(ROOT, 'test/integration'))
      .filter((f) => f.endsWith('.test.ts'))
      .map((f) => f.replace(/\.test\.ts$/, ''));

const missing = files.filter((f) => !existsSync(join(ROOT, `test/integration/${f}.test.ts`)));
if (missing.length) {
  console.error(`suite-files.mjs: --files names no test/integration/<name>.test.ts for ${missing.join(', ')} (give names such as action,docker)`);
  process.exit(2);
}

const starts = (since, until) =>
  execFileSync('docker', ['events', '--since', String(since), '--until', String(until), '--filter', 'type=container', '--filter', 'event=start', '--format', '{{.ID}}'], {
    encoding: 'utf8',
  })
    .split('\n')
    .filter(Boolean).length;

const CORES = availableParallelism();
// As `npm test` runs it: node_modules/.bin first on PATH, so vitest and every `node` it starts is
// the Node 24 devDependency, whatever the machine's Node is.
const env = { ...process.env, PATH: `${join(ROOT, 'node_modules/.bin')}:${process.env.PATH}` };
const now = () => (Date.now() / 1000).toFixed(3);
const rows = [];
console.log(`# ${files.length} integration files, one at a time; ${new Date().toISOString()}`);
for (const f of files) {
  const since = now();
  const t0 = performance.now();
  const busy0 = machineBusySeconds();
  const out = [];
  const keep = (l) => out.push(l.replace(/\x1b\[[0-9;]*m/g, ''));
  const { done } = run(join(ROOT, 'node_modules/.bin/vitest'), ['run', `test/integration/${f}.test.ts`], { env, onLine: keep, onErrLine: keep });
  const code = await done;
  const wall = (performance.now() - t0) / 1000;
  const busy = machineBusySeconds() - busy0;
  const row = { file: f, ok: code === 0, wall, busyCores: busy / wall, idleCoreSeconds: CORES * wall - busy, containers: starts(since, now()) };
  rows.push(row);
  console.log(`${f}: ${row.ok ? 'passed' : `FAILED (exit ${code})`}, ${fmt(wall)} s, ${fmt(row.busyCores, 2)} cores busy, ${row.containers} containers`);
  if (!row.ok)
    console.log(
      out
        .filter((l) => /FAIL|Error|expected|×/.test(l))
        .slice(0, 20)
        .map((l) => `  | ${l}`)
        .join('\n'),
    );
  // After each file, so an interrupted run keeps what it measured.
  if (o.out) writeFileSync(o.out, `${JSON.stringify({ date: new Date().toISOString(), complete: rows.length === files.length, rows }, null, 1)}\n`);
}
rows.sort((a, b) => b.wall - a.wall);
console.log(
  table(
    ['file', 'wall s', 'busy cores', 'idle core-s', 'containers', 'passed'],
    rows.map((r) => [r.file, fmt(r.wall), fmt(r.busyCores, 2), fmt(r.idleCoreSeconds), r.containers, r.ok ? 'yes' : 'NO']),
  ),
);
const wall = rows.reduce((a, r) => a + r.wall, 0);
const busy = rows.reduce((a, r) => a + r.busyCores * r.wall, 0);
console.log(
  `# summary: ${fmt(wall)} s one after another, ${fmt(busy / wall, 2)} cores busy on average; the floor on ${CORES} cores (every busy core-second packed): ${fmt(busy / CORES)} s; ${rows.reduce((a, r) => a + r.containers, 0)} containers started; ${rows.filter((r) => !r.ok).length} files failed`,
);
