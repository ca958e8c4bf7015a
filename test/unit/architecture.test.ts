// Keeps docs/architecture.md true where a test can check it: every import in src/ points to its
// own stage or an earlier one in the order below (shared types first, the front ends last); no
// module imports itself back through others (type-only imports count: a cycle is a cycle); the
// report and GitHub stages never touch a messaging client; the workload stage never touches
// GitHub; the messaging engine's rules have one owner each (the body's time stamp, the close
// bound, the window's edges). A violation fails here, naming the file and the import.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const SRC = resolve(import.meta.dirname, '../../src');
/** Stages in dependency order: a module may import from its own stage and the ones before it. */
const ORDER = ['schema', 'metrics', 'plan', 'config', 'broker', 'workload', 'compare', 'report', 'pipeline', 'github', 'cli', 'front end'];

function stageOf(file: string): string {
  const rel = relative(SRC, file).split('/');
  if (rel.length > 1) return rel[0];
  return 'front end'; // cli.ts, main.ts, index.ts, post.ts
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** Every module specifier a file imports or re-exports (type-only ones too). */
function specifiers(text: string): string[] {
  return [...text.matchAll(/(?:\bfrom|\bimport\(?)\s*'([^']+)'/g)].map((m) => m[1]);
}

/** The src/ modules `file` imports, as absolute .ts paths. */
function localImports(file: string): string[] {
  return specifiers(readFileSync(file, 'utf8'))
    .filter((s) => s.startsWith('.'))
    .map((s) => {
      const target = resolve(dirname(file), s);
      return target.endsWith('.ts') ? target : `${target}.ts`;
    })
    .filter((t) => t.startsWith(SRC));
}

/** Import cycles in a graph of modules (Tarjan's strongly connected components of two or more). */
function cycles(edges: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of edges.get(v) ?? []) {
      if (!edges.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1) out.push(component.sort());
  };
  for (const f of edges.keys()) if (!index.has(f)) visit(f);
  return out;
}

/** Packages a stage must never import, with the reason docs/architecture.md gives. */
const FORBIDDEN: Array<{ stages: string[]; packages: RegExp; why: string }> = [
  { stages: ['report', 'github'], packages: /^(amqplib|rhea|mqtt|rabbitmq-stream-js-client)(\/|$)/, why: 'report/ and github/ never touch AMQP or another messaging protocol' },
  { stages: ['workload'], packages: /^@actions\//, why: 'workload/ never touches GitHub' },
];

describe('architecture', () => {
  it('every stage folder is in the order', () => {
    const folders = readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
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

  it('no module imports itself back through others (type-only imports included)', () => {
    const graph = new Map(sources(SRC).map((f) => [relative(SRC, f), localImports(f).map((t) => relative(SRC, t))]));
    expect(cycles(graph)).toEqual([]);
  });

  it('report/ and github/ import no messaging client; workload/ nothing of GitHub', () => {
    const found: string[] = [];
    for (const file of sources(SRC)) {
      const stage = stageOf(file);
      for (const rule of FORBIDDEN.filter((r) => r.stages.includes(stage))) {
        for (const s of specifiers(readFileSync(file, 'utf8'))) if (rule.packages.test(s)) found.push(`${relative(SRC, file)} imports ${s}: ${rule.why}`);
      }
    }
    expect(found).toEqual([]);
  });

  it("the messaging engine's rules live in one module each", () => {
    // The body's time stamp (stamp.ts), the close bound and the window's edges (engine.ts): a
    // driver that writes the layout or runs a timeline itself would measure differently.
    const OWNERS: Array<{ rule: RegExp; owner: string; what: string }> = [
      { rule: /\b(read|write)DoubleBE\(/, owner: 'workload/stamp.ts', what: "the body's time stamp" },
      { rule: /\bconst CLOSE_MS\b/, owner: 'workload/engine.ts', what: 'the close bound after the window' },
      { rule: /\b(startTimeline|windowMetrics)\(/, owner: 'workload/engine.ts', what: "the measured window's edges and metrics" },
    ];
    const found: string[] = [];
    for (const file of sources(join(SRC, 'workload'))) {
      const text = readFileSync(file, 'utf8');
      for (const o of OWNERS) if (o.rule.test(text) && relative(SRC, file) !== o.owner) found.push(`${relative(SRC, file)} has ${o.what}, which ${o.owner} owns`);
    }
    expect(found).toEqual([]);
    for (const o of OWNERS) expect(o.rule.test(readFileSync(join(SRC, o.owner), 'utf8')), `${o.owner} owns ${o.what}`).toBe(true);
  });

  it('the checks see what they look for', () => {
    // The rules above pass only if their parsers can fail: a known import and a known package.
    expect(localImports(join(SRC, 'workload/scheduler.ts'))).toContain(join(SRC, 'workload/producer.ts'));
    expect(specifiers(readFileSync(join(SRC, 'workload/pool.ts'), 'utf8'))).toContain('amqplib');
    expect(specifiers(readFileSync(join(SRC, 'github/client.ts'), 'utf8'))).toContain('@actions/github');
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts', 'd.ts']],
      ['d.ts', []],
      ['e.ts', ['a.ts']],
    ]);
    expect(cycles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });
});
