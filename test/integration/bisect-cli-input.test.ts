// The bundled CLI's bisect and steps commands on bad input (exit 2, one line on stderr naming the
// option, no stack trace, no broker started) and `steps` on the history real nightly runs wrote
// (bench/results/nightly-history/nightly-history-2026-11-27.json: its one step, with the nights around it).
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { GitRepo } from '../support/git-repo';

const ROOT = resolve(import.meta.dirname, '../..');
const tmp = mkdtempSync(join(tmpdir(), 'perf-gate-bisect-cli-'));

function cli(args: string[], cwd = tmp) {
  const r = spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), ...args], { cwd, encoding: 'utf8', timeout: 60_000, env: { PATH: process.env.PATH ?? '', HOME: tmp } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('bisect and steps on the command line', () => {
  it('bad input: exit 2, one line naming the option, before any broker starts', () => {
    const repo = new GitRepo();
    const a = repo.commit({ f: '1' }, 'a');
    const b = repo.commit({ f: '2' }, 'b');
    const cases: Array<[string[], RegExp]> = [
      [['bisect'], /--images: no images to search/],
      [['bisect', '--images', ''], /--images: the image list is empty/],
      [['bisect', '--images', 'a,a'], /good and bad are the same image/],
      [['bisect', '--images', 'a,b,c', '--good', 'c', '--bad', 'a'], /--good: the range is unordered/],
      [['bisect', '--template', 'my/rmq:latest', '--range', `${a}..${b}`, '--repo', repo.dir], /--template: the image template "my\/rmq:latest" has no \{sha\}/],
      [['bisect', '--template', 'my/rmq:{sha}', '--range', `${b}..${a}`, '--repo', repo.dir], /--range: the range is the wrong way round/],
      [['bisect', '--template', 'my/rmq:{sha}', '--range', `${a}..nope`, '--repo', repo.dir], /--range: "nope" does not resolve to a commit/],
      [['bisect', '--images', 'a,b', '--attempts', '0'], /--attempts: must be a whole number of at least 1/],
      [['steps'], /steps needs the path of a nightly history file/],
      [['steps', join(tmp, 'none.json')], /no such history file/],
    ];
    for (const [args, message] of cases) {
      const r = cli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('steps on the recorded history: its one step, a regression, with the nights around it', () => {
    const r = cli(['steps', join(ROOT, 'bench/results/nightly-history/nightly-history-2026-11-27.json')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Nightly history: 34 nights');
    expect(r.stdout).toMatch(/\*\*1 new step\*\*/);
    expect(r.stdout).toContain('🔴');
    const json = JSON.parse(cli(['steps', join(ROOT, 'bench/results/nightly-history/nightly-history-2026-11-27.json'), '--json']).stdout);
    expect(json.newSteps).toHaveLength(1);
    expect(json.series[0].points).toHaveLength(34);
  });
});
