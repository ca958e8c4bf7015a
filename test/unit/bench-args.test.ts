// bench/lib/args.mjs, the one argument parser of the bench scripts: a default's type is the
// option's type; lists split on commas; a bad number or an unknown option is one line and exit 2;
// --help prints the script's header comment.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { benchArgs, brokerOptions, IMAGES, list, numberList, optional } from '../../bench/lib/args.mjs';

const ROOT = resolve(import.meta.dirname, '../..');

/** A thin wrapper: a top-level bench .mjs that bundles a top-level bench .ts entry (not bench/lib/…). */
const isWrapper = (text: string) => /\bbundle\(\s*['"]bench\/[^/'"]+\.ts['"]/.test(text);
/** Why a bench script's source breaks the one-parser rule (empty: it keeps it), naming the file. */
function argsProblems(file: string, text: string): string[] {
  const problems: string[] = [];
  if (/import\s*\{[^}]*\bparseArgs\b[^}]*\}\s*from\s*['"](?:node:)?util['"]/.test(text) || /\.parseArgs\s*\(/.test(text))
    problems.push(`${file} parses its options with node:util parseArgs, not benchArgs`);
  if (!isWrapper(text) && !/import\s*\{[^}]*\bbenchArgs\b[^}]*\}\s*from\s*['"]\.\/lib\/args\.mjs['"]/.test(text)) problems.push(`${file} does not import benchArgs from ./lib/args.mjs`);
  return problems;
}

const spec = { pairs: 6, image: IMAGES.v3, write: false, config: [] as string[], modes: list('a,b'), cpus: numberList('1.3,1.2'), json: optional(), tol: optional('number') };

describe('bench argument parser', () => {
  it("gives each option its default's type, and the given values converted", () => {
    expect(benchArgs(spec, { argv: [] }).values).toEqual({ pairs: 6, image: IMAGES.v3, write: false, config: [], modes: ['a', 'b'], cpus: [1.3, 1.2], json: undefined, tol: undefined });
    const given = benchArgs(spec, { argv: ['--pairs', '12', '--write', '--config', 'a.conf', '--config', 'b.conf', '--modes', 'x', '--cpus', '0.5, 2', '--json', 'out.json', '--tol', '0.1'] }).values;
    expect(given).toEqual({ pairs: 12, image: IMAGES.v3, write: true, config: ['a.conf', 'b.conf'], modes: ['x'], cpus: [0.5, 2], json: 'out.json', tol: 0.1 });
  });

  it('with positionals: bare arguments and everything after `--` are passed through as given', () => {
    const { values, positionals } = benchArgs({ runs: 3, append: false }, { argv: ['--runs', '2', 'x', '--', '--duration', '1', '--help'], positionals: true });
    expect(values).toEqual({ runs: 2, append: false });
    expect(positionals).toEqual(['x', '--duration', '1', '--help']);
  });

  it('shares the broker options', () => {
    expect(Object.keys(brokerOptions('container'))).toEqual(['broker', 'image', 'url', 'management']);
    expect(benchArgs({ ...brokerOptions('container') }, { argv: ['--broker', 'shared'] }).values.broker).toBe('shared');
  });

  it('a bad number or an unknown option: one line naming it, exit 2; --help: the header comment', () => {
    const bench = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, 'bench/aa-noise.mjs'), ...args], { encoding: 'utf8' });
    const unknown = bench('--pairs', '3');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr.trim()).toBe("aa-noise.mjs: Unknown option '--pairs' (--help shows the options)");
    const help = bench('--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^A runner's noise, per gating metric/);
    expect(help.stdout).toContain('node bench/aa-noise.mjs rabbitmq-perf-gate-report/report.json');
    const bad = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', `import { benchArgs } from '${join(ROOT, 'bench/lib/args.mjs')}'; benchArgs({ pairs: 6 }, { script: 'x', argv: ['--pairs', 'six'] });`],
      { encoding: 'utf8' },
    );
    expect(bad.status).toBe(2);
    expect(bad.stderr.trim()).toBe('x: --pairs must be a number, got "six" (--help shows the options)');
  });

  it('every bench script parses its options with benchArgs, none with node:util parseArgs', () => {
    const files = readdirSync(join(ROOT, 'bench')).filter((f) => f.endsWith('.mjs') || f.endsWith('.ts'));
    const text = (f: string) => readFileSync(join(ROOT, 'bench', f), 'utf8');
    // The scan sees the scripts this rule is about (not an empty or wrong folder).
    expect(files).toEqual(expect.arrayContaining(['bisect.mjs', 'time-to-verdict.mjs', 'variance.mjs', 'sequential.ts', 'changepoint.ts', 'power.mjs']));
    // A wrapper bundles its own .ts entry, which is checked in its place.
    const wrappers = files.filter((f) => f.endsWith('.mjs') && isWrapper(text(f)));
    for (const w of wrappers) expect(files, `${w} bundles its .ts entry`).toContain(w.replace(/\.mjs$/, '.ts'));
    expect(wrappers).toContain('sequential.mjs');
    expect(wrappers).not.toContain('gate-ab.mjs'); // bundles bench/lib/gate-child.ts: not a wrapper
    expect(files.flatMap((f) => argsProblems(f, text(f)))).toEqual([]);
  });

  it('the check flags a script that imports parseArgs or does without benchArgs', () => {
    const good = "import { benchArgs, list } from './lib/args.mjs';\nconst { values: o } = benchArgs({ runs: 3 });\n";
    expect(argsProblems('good.mjs', good)).toEqual([]);
    expect(argsProblems('old.mjs', "import { parseArgs } from 'node:util';\nconst { values: o } = parseArgs({ options: {} });\n")).toEqual([
      'old.mjs parses its options with node:util parseArgs, not benchArgs',
      'old.mjs does not import benchArgs from ./lib/args.mjs',
    ]);
    expect(argsProblems('both.ts', `import { inspect, parseArgs } from 'util';\n${good}`)).toEqual(['both.ts parses its options with node:util parseArgs, not benchArgs']);
    expect(argsProblems('ns.mjs', `import util from 'node:util';\nutil.parseArgs({});\n${good}`)).toEqual(['ns.mjs parses its options with node:util parseArgs, not benchArgs']);
    expect(argsProblems('x.mjs', "const child = await bundle('bench/x.ts');\n")).toEqual([]);
    expect(argsProblems('y.mjs', "const child = await bundle('bench/lib/gate-child.ts');\n")).toEqual(['y.mjs does not import benchArgs from ./lib/args.mjs']);
  });
});
