// Where the package's own data lives (scenarios/, schema/), whether running from src/ under
// vitest, from the bundled dist/ in an Actions runner, or from an installed CLI.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

export function packageRoot(): string {
  if (root) return root;
  // From this module upwards (src/config, dist/, dist/chunks), then the working directory
  // (code bundled elsewhere, e.g. by bench/ scripts, run from the repository).
  const isRoot = (d: string) => existsSync(join(d, 'scenarios', 'presets.yml')) && existsSync(join(d, 'package.json'));
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (isRoot(dir)) return (root = dir);
    dir = resolve(dir, '..');
  }
  if (isRoot(process.cwd())) return (root = process.cwd());
  throw new Error('cannot find the rabbitmq-perf-gate package root (scenarios/presets.yml)');
}

export function packagePath(rel: string): string {
  return join(packageRoot(), rel);
}
