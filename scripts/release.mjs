#!/usr/bin/env node
// Releases the commit checked out: checks, tags vX.Y.Z, moves the major tag vX to it, pushes both
// tags, and prints the release notes (CHANGELOG.md's section for X.Y.Z) on stdout. The release
// workflow (.github/workflows/release.yml) runs it, then creates the GitHub release from the notes.
//
//   node scripts/release.mjs X.Y.Z [--dry-run] [--remote origin] [--notes-file F] [--build CMD]
//
// It refuses, naming what to fix and tagging nothing, when
//   - X.Y.Z is not a version, or not the one package.json states;
//   - the work tree has changes or untracked files;
//   - CHANGELOG.md has no section `## [X.Y.Z]` (or it is empty);
//   - the build (`npm run -s bundle` by default) changes any tracked or untracked file: the
//     committed dist/ is stale (the same check as CI's check-dist);
//   - vX.Y.Z already exists, here or on the remote.
// A pre-release (X.Y.Z-rc.1) is tagged but does not move vX. --dry-run checks everything, prints
// the notes and writes no tag.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

class ReleaseError extends Error {}

const git = (...args) => execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
const say = (line) => process.stderr.write(`${line}\n`);

/** The body of CHANGELOG.md's section for `version` (`## [1.2.3] - date` or `## 1.2.3`), trimmed. */
export function changelogSection(text, version) {
  const lines = text.split(/\r?\n/);
  const esc = version.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const head = new RegExp(`^##\\s+\\[?v?${esc}\\]?(\\s|$)`);
  const start = lines.findIndex((l) => head.test(l));
  if (start < 0) return undefined;
  let end = lines.findIndex((l, i) => i > start && /^##\s/.test(l));
  if (end < 0) end = lines.length;
  // Link reference definitions at the end of the file ([0.1.0]: https://…) are not notes.
  const body = lines.slice(start + 1, end).filter((l) => !/^\[[^\]]+\]:\s/.test(l));
  return body.join('\n').trim();
}

function dirtyFiles() {
  return execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { encoding: 'utf8' }).split('\n').filter(Boolean);
}

function remoteHasTag(remote, tag) {
  const r = spawnSync('git', ['ls-remote', '--tags', remote, `refs/tags/${tag}`], { encoding: 'utf8' });
  if (r.status !== 0) throw new ReleaseError(`cannot read the tags of remote "${remote}": ${r.stderr.trim()}`);
  return r.stdout.trim() !== '';
}

export function release(argv) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      'dry-run': { type: 'boolean' },
      remote: { type: 'string', default: 'origin' },
      'notes-file': { type: 'string' },
      build: { type: 'string', default: 'npm run -s bundle' },
    },
  });
  const version = positionals[0]?.replace(/^v/, '');
  if (!version || positionals.length > 1) throw new ReleaseError('give the version to release, e.g. node scripts/release.mjs 1.2.3');
  const m = /^(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?$/.exec(version);
  if (!m) throw new ReleaseError(`"${version}" is not a version: X.Y.Z or X.Y.Z-suffix`);
  const tag = `v${version}`;
  const major = m[4] ? undefined : `v${m[1]}`;

  const root = git('rev-parse', '--show-toplevel');
  process.chdir(root);
  const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
  if (pkg.version !== version) {
    throw new ReleaseError(`package.json says ${pkg.version}, not ${version}: set "version" to ${version}, add its CHANGELOG.md section, rebuild dist/ and commit, then release`);
  }
  const dirty = dirtyFiles();
  if (dirty.length)
    throw new ReleaseError(
      `the work tree is not clean (${dirty
        .slice(0, 5)
        .map((l) => l.slice(3))
        .join(', ')}${dirty.length > 5 ? ', …' : ''}): commit or remove the changes, then release`,
    );
  const notes = existsSync('CHANGELOG.md') ? changelogSection(readFileSync('CHANGELOG.md', 'utf8'), version) : undefined;
  if (notes === undefined) throw new ReleaseError(`CHANGELOG.md has no section for ${version}: add "## [${version}] - ${new Date().toISOString().slice(0, 10)}" with the release's changes`);
  if (notes === '') throw new ReleaseError(`CHANGELOG.md's section for ${version} is empty: list the release's changes under it`);

  const head = git('rev-parse', 'HEAD');
  const local = spawnSync('git', ['rev-parse', '-q', '--verify', `refs/tags/${tag}`], { encoding: 'utf8' });
  if (local.status === 0 || remoteHasTag(values.remote, tag)) {
    throw new ReleaseError(`${tag} already exists: a released version is never moved; release the next version instead`);
  }

  say(`Building (${values.build}) to check that the committed dist/ is fresh…`);
  const built = spawnSync(values.build, { shell: true, stdio: ['ignore', 'inherit', 'inherit'] });
  if (built.status !== 0) throw new ReleaseError(`the build (${values.build}) failed with exit status ${built.status}`);
  const changed = dirtyFiles();
  if (changed.length) {
    throw new ReleaseError(
      `dist/ is stale: the build changed ${changed
        .slice(0, 5)
        .map((l) => l.slice(3))
        .join(', ')}${changed.length > 5 ? ', …' : ''}; run npm run bundle, commit dist/, then release`,
    );
  }

  if (values['dry-run']) {
    say(`Dry run: would tag ${tag}${major ? ` and move ${major}` : ''} to ${head} and push to ${values.remote}.`);
  } else {
    const before = major && spawnSync('git', ['rev-parse', '-q', '--verify', `refs/tags/${major}`], { encoding: 'utf8' }).stdout.trim();
    git('tag', '-a', tag, '-m', `${tag}\n\n${notes}\n`, head);
    if (major) git('tag', '-f', '-a', major, '-m', `${major}: ${tag}`, head);
    // One atomic push: the remote gets both tags or neither. Only the major tag is forced.
    const refs = [`refs/tags/${tag}`, ...(major ? [`+refs/tags/${major}`] : [])];
    const pushed = spawnSync('git', ['push', '--atomic', values.remote, ...refs], { encoding: 'utf8' });
    if (pushed.status !== 0) {
      git('tag', '-d', tag);
      if (major) before ? git('update-ref', `refs/tags/${major}`, before) : git('tag', '-d', major);
      throw new ReleaseError(`pushing ${refs.join(' ')} to ${values.remote} failed: ${pushed.stderr.trim()}`);
    }
    say(`Tagged ${tag}${major ? ` and moved ${major}` : ''} to ${head}; pushed to ${values.remote}.`);
  }
  if (values['notes-file']) {
    const file = resolve(values['notes-file']);
    writeFileSync(`${file}.tmp`, `${notes}\n`);
    renameSync(`${file}.tmp`, file);
  }
  process.stdout.write(`${notes}\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    release(process.argv.slice(2));
  } catch (e) {
    const message = e instanceof ReleaseError ? e.message : e?.stderr?.toString().trim() || e?.message || String(e);
    process.stderr.write(`release: ${message}\n`);
    process.exitCode = 1;
  }
}
