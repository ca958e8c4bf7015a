// scripts/release.mjs against real git repositories, offline: a project with package.json,
// CHANGELOG.md, a build (`npm run bundle`, as in this repository) and its committed dist/, cloned
// from a local bare repository that plays GitHub. A release tags vX.Y.Z and moves vX there (the
// next one moves vX on and leaves the old tag alone; a pre-release moves nothing) and prints the
// CHANGELOG section; a stale dist/, a dirty tree, a version missing from CHANGELOG.md or not
// package.json's, and a version already tagged are each refused with one line and no tag.
import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../support/action-runner';
import { GitRepo } from '../support/git-repo';
// @ts-expect-error: a plain .mjs script without type declarations
import { changelogSection } from '../../scripts/release.mjs';

const SCRIPT = join(ROOT, 'scripts/release.mjs');

const changelog = (sections: Record<string, string>) =>
  [
    '# Changelog',
    '',
    'Intro text.',
    '',
    '## [Unreleased]',
    '',
    ...Object.entries(sections).flatMap(([v, body]) => [`## [${v}] - 2026-11-27`, '', body, '']),
    '[0.2.0]: https://example.invalid/compare/v0.1.0...v0.2.0',
    '',
  ].join('\n');

/** A project whose build uppercases src/in.txt into dist/out.txt, at `version`, committed with a fresh dist/. */
function project(): {
  repo: GitRepo;
  origin: string;
  release: (...args: string[]) => { code: number | null; stdout: string; stderr: string };
  bump: (version: string, src: string, notes: Record<string, string>, build?: boolean) => string;
} {
  const origin = mkdtempSync(join(tmpdir(), 'perf-gate-origin-'));
  execFileSync('git', ['init', '-q', '--bare', origin]);
  const repo = new GitRepo();
  const bump = (version: string, src: string, notes: Record<string, string>, build = true) =>
    repo.commit(
      {
        'package.json': `${JSON.stringify({ name: 'demo', version, private: true, scripts: { bundle: 'node build.mjs' } }, null, 2)}\n`,
        'build.mjs':
          "import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';\nmkdirSync('dist', { recursive: true });\nwriteFileSync('dist/out.txt', readFileSync('src/in.txt', 'utf8').toUpperCase());\n",
        'src/in.txt': src,
        ...(build ? { 'dist/out.txt': src.toUpperCase() } : {}),
        'CHANGELOG.md': changelog(notes),
      },
      `release ${version}`,
    );
  bump('0.2.0', 'hello\n', { '0.2.0': '### Added\n- hello, loudly' });
  repo.git('remote', 'add', 'origin', origin);
  repo.git('push', '-q', 'origin', 'main');
  const release = (...args: string[]) => {
    const r = spawnSync(process.execPath, [SCRIPT, ...args], { cwd: repo.dir, encoding: 'utf8', timeout: 60_000 });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  return { repo, origin, release, bump };
}

/** The commit each tag of the bare repository points to (annotated tags peeled). */
function remoteTags(origin: string): Record<string, string> {
  const out = execFileSync('git', ['-C', origin, 'for-each-ref', '--format=%(refname:short) %(*objectname) %(objecttype)', 'refs/tags'], { encoding: 'utf8' });
  return Object.fromEntries(
    out
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const [name, peeled, type] = l.split(' ');
        expect(type, `${name} is an annotated tag`).toBe('tag');
        return [name, peeled];
      }),
  );
}

describe('scripts/release.mjs', () => {
  it('tags vX.Y.Z, moves vX, prints the CHANGELOG section; the next release moves vX on and keeps the old tag', () => {
    const { repo, origin, release, bump } = project();
    const first = repo.git('rev-parse', 'HEAD');
    const notesFile = join(repo.dir, '..', `notes-${Date.now()}.md`);
    const r = release('0.2.0', '--notes-file', notesFile);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('### Added\n- hello, loudly\n');
    expect(readFileSync(notesFile, 'utf8')).toBe(r.stdout);
    expect(r.stderr).toContain(`Tagged v0.2.0 and moved v0 to ${first}; pushed to origin.`);
    expect(remoteTags(origin)).toEqual({ 'v0.2.0': first, v0: first });
    expect(execFileSync('git', ['-C', origin, 'tag', '-l', '--format=%(contents)', 'v0.2.0'], { encoding: 'utf8' })).toContain('- hello, loudly');

    const second = bump('0.2.1', 'hello again\n', { '0.2.1': '### Fixed\n- louder', '0.2.0': '### Added\n- hello, loudly' });
    repo.git('push', '-q', 'origin', 'main');
    const r2 = release('0.2.1');
    expect(r2.code, r2.stderr).toBe(0);
    expect(r2.stdout).toBe('### Fixed\n- louder\n');
    expect(remoteTags(origin)).toEqual({ 'v0.2.0': first, 'v0.2.1': second, v0: second });

    const again = release('0.2.1');
    expect(again.code).toBe(1);
    expect(again.stderr).toBe('release: v0.2.1 already exists: a released version is never moved; release the next version instead\n');
    expect(remoteTags(origin)).toEqual({ 'v0.2.0': first, 'v0.2.1': second, v0: second });
  });

  it('refuses a stale dist/: the build changed it, nothing is tagged', () => {
    const { repo, origin, release, bump } = project();
    bump('0.2.0', 'changed source, dist not rebuilt\n', { '0.2.0': '- stale' }, false);
    const r = release('0.2.0');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^release: dist\/ is stale: the build changed dist\/out\.txt; run npm run bundle, commit dist\/, then release$/m);
    expect(r.stdout).toBe('');
    expect(remoteTags(origin)).toEqual({});
    expect(repo.git('tag', '-l')).toBe('');
  });

  it('refuses a dirty tree, tracked or untracked', () => {
    const { repo, origin, release } = project();
    writeFileSync(join(repo.dir, 'src/in.txt'), 'edited\n');
    expect(release('0.2.0').stderr).toBe('release: the work tree is not clean (src/in.txt): commit or remove the changes, then release\n');
    repo.git('checkout', '--', 'src/in.txt');
    writeFileSync(join(repo.dir, 'notes.txt'), 'scratch\n');
    const r = release('0.2.0');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('release: the work tree is not clean (notes.txt): commit or remove the changes, then release\n');
    expect(remoteTags(origin)).toEqual({});
  });

  it('refuses a version missing from CHANGELOG.md, an empty section, or not the one package.json states', () => {
    const { origin, release, bump } = project();
    const wrong = release('0.3.0');
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^release: package\.json says 0\.2\.0, not 0\.3\.0: set "version" to 0\.3\.0, add its CHANGELOG\.md section/);
    bump('0.3.0', 'three\n', { '0.2.0': '- two' });
    const missing = release('0.3.0');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^release: CHANGELOG\.md has no section for 0\.3\.0: add "## \[0\.3\.0\] - \d{4}-\d\d-\d\d" with the release's changes\n$/);
    bump('0.3.0', 'three\n', { '0.3.0': '', '0.2.0': '- two' });
    expect(release('0.3.0').stderr).toBe("release: CHANGELOG.md's section for 0.3.0 is empty: list the release's changes under it\n");
    expect(release('three').stderr).toBe('release: "three" is not a version: X.Y.Z or X.Y.Z-suffix\n');
    expect(remoteTags(origin)).toEqual({});
  });

  it('a pre-release is tagged but does not move the major tag; --dry-run tags nothing', () => {
    const { repo, origin, release, bump } = project();
    expect(release('0.2.0').code).toBe(0);
    const rc = bump('1.0.0-rc.1', 'one\n', { '1.0.0-rc.1': '- almost one' });
    const dry = release('1.0.0-rc.1', '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toBe('- almost one\n');
    expect(dry.stderr).toContain(`Dry run: would tag v1.0.0-rc.1 to ${rc} and push to origin.`);
    expect(Object.keys(remoteTags(origin)).sort()).toEqual(['v0', 'v0.2.0']);
    expect(release('v1.0.0-rc.1').code).toBe(0);
    const tags = remoteTags(origin);
    expect(tags['v1.0.0-rc.1']).toBe(rc);
    expect(tags.v1).toBeUndefined();
    expect(tags.v0).toBe(tags['v0.2.0']);
    expect(repo.git('status', '--porcelain')).toBe('');
  });

  it("reads this repository's CHANGELOG.md: the package version has a non-empty section", () => {
    const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
    const notes = changelogSection(readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8'), version);
    expect(notes, `CHANGELOG.md needs a "## [${version}]" section`).toMatch(/\S/);
    expect(notes).not.toMatch(/^## /m);
    expect(changelogSection(changelog({ '1.2.3': 'a\n\nb', '1.2.2': 'c' }), '1.2.3')).toBe('a\n\nb');
    expect(changelogSection(changelog({ '0.2.0': 'last' }), '0.2.0')).toBe('last');
    expect(changelogSection(changelog({ '1.2.30': 'x' }), '1.2.3')).toBeUndefined();
  });
});
