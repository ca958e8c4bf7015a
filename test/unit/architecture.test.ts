// Keeps docs/architecture.md true: every import in src/ points to its own stage or an earlier one
// in the order below (shared types first, the front ends last). A new backward import fails here,
// naming the file and the import; a cycle inside one folder is not this test's business.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const SRC = resolve(import.meta.dirname, '../../src');
/** Stages in dependency order: a module may import from its own stage and the ones before it. */
const ORDER = ['schema', 'metrics', 'plan', 'config', 'broker', 'workload', 'compare', 'report', 'pipeline', 'github', 'cli', 'front end'];

function stageOf(file: string): string {
  const rel = relative(SRC, file).split('/');
  if (rel.length > 1) return rel[0];
  return rel[0] === 'pipeline.ts' ? 'pipeline' : 'front end'; // cli.ts, main.ts, index.ts, post.ts
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

describe('architecture', () => {
  it('every stage folder is in the order', () => {
    const folders = readdirSync(SRC, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    for (const f of folders) expect(ORDER, `src/${f}/ is not in the architecture test's stage order`).toContain(f);
  });

  it('imports point to the same stage or an earlier one', () => {
    const backward: string[] = [];
    for (const file of sources(SRC)) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:from|import\()\s*'(\.[^']+)'/g)) {
        const target = resolve(dirname(file), m[1]);
        if (!target.startsWith(SRC)) continue;
        const [from, to] = [stageOf(file), stageOf(target.endsWith('.ts') ? target : `${target}.ts`)];
        if (ORDER.indexOf(to) > ORDER.indexOf(from)) backward.push(`${relative(SRC, file)} (${from}) imports ${m[1]} (${to})`);
      }
    }
    expect(backward).toEqual([]);
  });
});
