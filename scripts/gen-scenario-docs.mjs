#!/usr/bin/env node
// Regenerates docs/scenarios.md from scenarios/*.yml (scripts/scenario-docs.ts does the
// rendering; esbuild compiles it on the fly). `--check` exits 1 when the file is out of date.
// Usage: node scripts/gen-scenario-docs.mjs [--check]
import { build } from 'esbuild';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const target = `${root}docs/scenarios.md`;
// Inside the package, so the renderer finds scenarios/ and schema/ by walking up from itself.
const cache = `${root}node_modules/.cache/gen-scenario-docs`;
mkdirSync(cache, { recursive: true });
const out = `${cache}/render-${process.pid}.mjs`;
await build({
  entryPoints: [`${root}scripts/scenario-docs.ts`],
  outfile: out,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node24',
  packages: 'external',
  logLevel: 'warning',
});
try {
  const { renderScenarioDocs } = await import(pathToFileURL(out).href);
  const text = renderScenarioDocs();
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    /* first run */
  }
  if (process.argv.includes('--check')) {
    if (current !== text) {
      console.error('docs/scenarios.md is out of date: run node scripts/gen-scenario-docs.mjs');
      process.exitCode = 1;
    }
  } else if (current !== text) {
    mkdirSync(`${root}docs`, { recursive: true });
    writeFileSync(target, text);
    console.log('wrote docs/scenarios.md');
  } else {
    console.log('docs/scenarios.md is up to date');
  }
} finally {
  rmSync(out, { force: true });
}
