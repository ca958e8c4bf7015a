// Finding the report.json files of mode: merge (the shards' artifacts) from the `reports` input:
// folders, globs or files. Each is then read as untrusted data by src/compare/stored.ts.
import { globSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { GateError } from '../schema/errors';

const GLOB = /[*?[\]{}]/;

function reportFilesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && d.name === 'report.json')
    .map((d) => join(d.parentPath, d.name));
}

/** Expands the `reports` input (lines or commas of folders, globs or files) into sorted report.json paths. */
export function findReports(spec: string, cwd: string): string[] {
  const found = new Set<string>();
  for (const item of spec
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean)) {
    const matches = GLOB.test(item) ? globSync(item, { cwd }).map((p) => resolve(cwd, p)) : [resolve(cwd, item)];
    for (const m of matches) {
      let isDir = false;
      try {
        isDir = statSync(m).isDirectory();
      } catch {
        if (!GLOB.test(item))
          throw new GateError(
            `reports: "${item}" does not exist`,
            { field: 'reports' },
            "download the shards' artifacts first (actions/download-artifact with a pattern) and point reports at that folder",
          );
        continue;
      }
      for (const f of isDir ? reportFilesUnder(m) : [m]) found.add(f);
    }
  }
  const files = [...found].sort((a, b) => relative(cwd, a).localeCompare(relative(cwd, b)));
  if (!files.length)
    throw new GateError(
      `reports: no report.json found for "${spec.trim()}"`,
      { field: 'reports' },
      "download the shards' artifacts first and point reports at their folder or a glob like shards/*/report.json",
    );
  return files;
}
