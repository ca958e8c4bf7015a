// Where the package's own data lives (scenarios/, schema/), whether running from src/ under
// vitest, from the bundled dist/ in an Actions runner, or from an installed CLI.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

export function packageRoot(): string {
  if (root) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'scenarios', 'presets.yml')) && existsSync(join(dir, 'package.json'))) return (root = dir);
    dir = resolve(dir, '..');
  }
  throw new Error('cannot find the rabbitmq-perf-gate package root (scenarios/presets.yml)');
}

export function packagePath(rel: string): string {
  return join(packageRoot(), rel);
}
