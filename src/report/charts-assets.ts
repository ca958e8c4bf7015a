// The uPlot chart library (minified JS and CSS) that every HTML report inlines, so the report is
// one file that draws its charts with no network. scripts/bundle.mjs bakes both files into dist/
// as __UPLOT_JS__ / __UPLOT_CSS__; under vitest or tsx they are read from node_modules instead.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

declare const __UPLOT_JS__: string | undefined;
declare const __UPLOT_CSS__: string | undefined;

let cached: { js: string; css: string } | undefined;

export function uplotAssets(): { js: string; css: string } {
  if (cached) return cached;
  if (typeof __UPLOT_JS__ === 'string' && typeof __UPLOT_CSS__ === 'string') return (cached = { js: __UPLOT_JS__, css: __UPLOT_CSS__ });
  const req = createRequire(import.meta.url);
  const read = (f: string) => readFileSync(req.resolve(`uplot/dist/${f}`), 'utf8');
  return (cached = { js: read('uPlot.iife.min.js'), css: read('uPlot.min.css') });
}

/** Text safe to place inside a <script> or <style> element: no closing tag, no comment opener. */
export function inlineSafe(text: string): string {
  return text.replace(/<\/(script|style)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
}
