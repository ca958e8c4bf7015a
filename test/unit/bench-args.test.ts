// bench/lib/args.mjs, the one argument parser of the bench scripts: a default's type is the
// option's type; lists split on commas; a bad number or an unknown option is one line and exit 2;
// --help prints the script's header comment.
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { benchArgs, brokerOptions, IMAGES, list, numberList, optional } from '../../bench/lib/args.mjs';

const ROOT = resolve(import.meta.dirname, '../..');
const spec = { pairs: 6, image: IMAGES.v3, write: false, config: [] as string[], modes: list('a,b'), cpus: numberList('1.3,1.2'), json: optional(), tol: optional('number') };

describe('bench argument parser', () => {
  it("gives each option its default's type, and the given values converted", () => {
    expect(benchArgs(spec, { argv: [] }).values).toEqual({ pairs: 6, image: IMAGES.v3, write: false, config: [], modes: ['a', 'b'], cpus: [1.3, 1.2], json: undefined, tol: undefined });
    const given = benchArgs(spec, { argv: ['--pairs', '12', '--write', '--config', 'a.conf', '--config', 'b.conf', '--modes', 'x', '--cpus', '0.5, 2', '--json', 'out.json', '--tol', '0.1'] }).values;
    expect(given).toEqual({ pairs: 12, image: IMAGES.v3, write: true, config: ['a.conf', 'b.conf'], modes: ['x'], cpus: [0.5, 2], json: 'out.json', tol: 0.1 });
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
});
