// Bundles the action (dist/index.js, dist/post.js) and the CLI (dist/cli.js) with esbuild into
// ESM files that run on a bare Node 24 with no node_modules. Deterministic: same input, same bytes.
// Builds into a temp folder and swaps it in, so a test running dist/ never sees it half-built.
import { build } from 'esbuild';
import { readFileSync, renameSync, rmSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
// uPlot's minified JS and CSS, inlined into every HTML report (src/report/charts-assets.ts).
const uplot = (file) => JSON.stringify(readFileSync(new URL(`../node_modules/uplot/dist/${file}`, import.meta.url), 'utf8'));
const dist = new URL('../dist', import.meta.url);
const staging = new URL(`../.dist-${process.pid}`, import.meta.url);
await build({
  entryPoints: { index: 'src/index.ts', post: 'src/post.ts', cli: 'src/cli.ts' },
  outdir: staging.pathname,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node24',
  chunkNames: 'chunks/[name]-[hash]',
  legalComments: 'none',
  define: { __VERSION__: JSON.stringify(pkg.version), __UPLOT_JS__: uplot('uPlot.iife.min.js'), __UPLOT_CSS__: uplot('uPlot.min.css') },
  // CommonJS dependencies (amqplib) call require() for Node built-ins.
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  logLevel: 'warning',
});
const old = new URL(`../.dist-old-${process.pid}`, import.meta.url);
try {
  renameSync(dist, old);
} catch {
  // no previous dist/
}
renameSync(staging, dist);
rmSync(old, { recursive: true, force: true });
