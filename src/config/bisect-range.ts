// The images a bisect searches, in order, from what the user gave: an explicit list (the first
// known good, the last known bad, or --good/--bad naming two of them), or an image template such
// as `my/rabbitmq:sha-{sha}` filled with each first-parent commit of a git range GOOD..BAD read
// from a checkout (`git` through execFile). Every bad input is one GateError naming the option and
// the fix: an empty or unordered range, good = bad, a template without {sha}, a ref that does not
// resolve. Also the commits a culprit stands for (lastGood..firstBad).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { BisectImage } from '../schema/types';
import { GateError } from '../schema/errors';

const run = promisify(execFile);

export interface BisectInput {
  /** An ordered list of images, one a line or comma-separated. */
  images?: string;
  /** An image name with {sha} (the full commit) or {sha:N} (its first N characters). */
  template?: string;
  /** GOOD..BAD, read from `repo`. */
  range?: string;
  repo?: string;
  /** In a list: the known-good and known-bad images (names or 1-based positions); default first and last. */
  good?: string;
  bad?: string;
}

/** The option names as the front end spells them (CLI flags or action inputs). */
export interface BisectFields {
  images: string;
  template: string;
  range: string;
  repo: string;
  good: string;
  bad: string;
}

export const CLI_FIELDS: BisectFields = { images: '--images', template: '--template', range: '--range', repo: '--repo', good: '--good', bad: '--bad' };

export interface ResolvedImages {
  images: BisectImage[];
  range?: { repo: string; spec: string; template: string };
}

const SHA = /\{sha(?::(\d+))?\}/g;

/** Checks a template: it must name the commit ({sha} or {sha:N}) and nothing else in braces. */
export function checkTemplate(template: string, field: string): void {
  if (!template.trim()) throw new GateError('the image template is empty', { field }, 'give an image name with {sha} where the commit goes, e.g. my/rabbitmq:sha-{sha}');
  const matches = [...template.matchAll(SHA)];
  if (!matches.length)
    throw new GateError(
      `the image template "${template}" has no {sha}`,
      { field },
      'put {sha} (the full commit) or {sha:N} (its first N characters) where the commit goes, e.g. my/rabbitmq:sha-{sha}',
    );
  const other = template.replace(SHA, '').match(/\{[^}]*\}/);
  if (other) throw new GateError(`the image template has ${other[0]}, which is not a placeholder it knows`, { field }, 'use {sha} or {sha:N} only');
  for (const m of matches) if (m[1] !== undefined && !(Number(m[1]) >= 4 && Number(m[1]) <= 40)) throw new GateError(`${m[0]}: N must be between 4 and 40`, { field }, 'e.g. {sha:12}');
}

export function fillTemplate(template: string, sha: string): string {
  return template.replace(SHA, (_, n: string | undefined) => (n ? sha.slice(0, Number(n)) : sha));
}

async function git(repo: string, args: string[]): Promise<string> {
  const { stdout } = await run('git', ['-C', repo, ...args], { maxBuffer: 64 << 20 });
  return stdout;
}

/** The commit a ref names, or a GateError saying it does not resolve. */
async function commitOf(repo: string, ref: string, field: string): Promise<string> {
  try {
    return (await git(repo, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])).trim();
  } catch {
    throw new GateError(`"${ref}" does not resolve to a commit in ${repo}`, { field }, 'check the name, and fetch the history it is in (actions/checkout with fetch-depth: 0, or git fetch)');
  }
}

/** GOOD..BAD → the images of GOOD and of every commit on BAD's first-parent line after it. */
async function fromRange(i: BisectInput, f: BisectFields): Promise<ResolvedImages> {
  const template = i.template!;
  checkTemplate(template, f.template);
  const spec = i.range!.trim();
  if (spec.includes('...')) throw new GateError(`"${spec}" is a symmetric range`, { field: f.range }, 'give GOOD..BAD with two dots: the known-good commit, then the known-bad one');
  const parts = spec.split('..');
  if (parts.length !== 2 || !parts[0].trim() || !parts[1].trim()) {
    throw new GateError(`"${spec}" is not a range of two commits`, { field: f.range }, 'give GOOD..BAD, e.g. v3.13.1..v3.13.2 or two commit shas');
  }
  const [goodRef, badRef] = parts.map((p) => p.trim());
  const repo = i.repo ?? process.cwd();
  try {
    await git(repo, ['rev-parse', '--git-dir']);
  } catch {
    throw new GateError(`${repo} is not a git checkout`, { field: f.repo }, 'point it at a clone of the repository the images are built from');
  }
  const good = await commitOf(repo, goodRef, f.range);
  const bad = await commitOf(repo, badRef, f.range);
  if (good === bad) throw new GateError(`good and bad are the same commit (${good.slice(0, 12)})`, { field: f.range }, 'give a known-good commit older than the known-bad one');
  const ordered = await run('git', ['-C', repo, 'merge-base', '--is-ancestor', good, bad]).then(
    () => true,
    () => false,
  );
  if (!ordered) {
    const reversed = await run('git', ['-C', repo, 'merge-base', '--is-ancestor', bad, good]).then(
      () => true,
      () => false,
    );
    throw new GateError(
      reversed ? `the range is the wrong way round: ${badRef} is older than ${goodRef}` : `the range is unordered: ${goodRef} is not an ancestor of ${badRef}`,
      { field: f.range },
      reversed ? `swap them: ${badRef}..${goodRef}` : 'give a known-good commit that the known-bad one descends from',
    );
  }
  const lines = (await git(repo, ['log', '--first-parent', '--reverse', '--format=%H%x09%P%x09%s', `${good}..${bad}`])).split('\n').filter(Boolean);
  if (!lines.length) throw new GateError(`the range ${spec} is empty`, { field: f.range }, 'give a known-good commit older than the known-bad one');
  const commits = lines.map((l) => {
    const [sha, parents, ...subject] = l.split('\t');
    return { sha, parent: parents.split(' ')[0], subject: subject.join('\t') };
  });
  if (commits[0].parent !== good) {
    throw new GateError(
      `${goodRef} is not on ${badRef}'s first-parent line (it came in through a merge), so the images between them are not one ordered line`,
      { field: f.range },
      `use the merge commit that brought ${goodRef} in, or a commit on the main line, as the good end`,
    );
  }
  const goodSubject = (await git(repo, ['log', '-1', '--format=%s', good])).trim();
  return {
    images: [{ image: fillTemplate(template, good), commit: good, subject: goodSubject }, ...commits.map((c) => ({ image: fillTemplate(template, c.sha), commit: c.sha, subject: c.subject }))],
    range: { repo, spec, template },
  };
}

/** An explicit list, cut to --good … --bad when given. */
function fromList(i: BisectInput, f: BisectFields): ResolvedImages {
  const list = i
    .images!.split(/[\n,]/)
    .map((x) => x.trim())
    .filter(Boolean);
  if (!list.length) throw new GateError('the image list is empty', { field: f.images }, 'give the images in order, the known-good first and the known-bad last');
  const at = (which: 'good' | 'bad', fallback: number): number => {
    const v = i[which]?.trim();
    if (!v) return fallback;
    const byName = list.indexOf(v);
    if (byName >= 0) return byName;
    if (/^\d+$/.test(v) && Number(v) >= 1 && Number(v) <= list.length) return Number(v) - 1;
    throw new GateError(`"${v}" is not one of the ${list.length} images`, { field: f[which] }, `name an image of the list, or its position (1 to ${list.length})`);
  };
  const g = at('good', 0);
  const b = at('bad', list.length - 1);
  if (list.length === 1 || g === b || list[g] === list[b])
    throw new GateError(`good and bad are the same image (${list[g]})`, { field: list.length === 1 ? f.images : f.bad }, 'give at least two images: the known-good end and the known-bad end');
  if (g > b)
    throw new GateError(
      `the range is unordered: the known-good image (${list[g]}, position ${g + 1}) comes after the known-bad one (${list[b]}, position ${b + 1})`,
      { field: f.good },
      'list the images oldest first, or swap good and bad',
    );
  const picked = list.slice(g, b + 1);
  const twice = picked.find((x, k) => picked.indexOf(x) !== k);
  if (twice) throw new GateError(`${twice} is in the list twice`, { field: f.images }, 'list each image once, in order');
  return { images: picked.map((image) => ({ image })) };
}

/** The ordered images to bisect, from a list or a template and git range. */
export async function resolveBisectImages(i: BisectInput, f: BisectFields = CLI_FIELDS): Promise<ResolvedImages> {
  const hasList = i.images !== undefined;
  if (hasList && (i.template !== undefined || i.range !== undefined)) {
    throw new GateError(
      `cannot be combined with ${i.template !== undefined ? f.template : f.range}: both say which images to search`,
      { field: f.images },
      'keep the list, or the template with its range',
    );
  }
  if (hasList) return fromList(i, f);
  if (i.template === undefined && i.range === undefined) throw new GateError('no images to search', { field: f.images }, `give ${f.images} (oldest first), or ${f.template} with ${f.range} GOOD..BAD`);
  if (i.template === undefined) throw new GateError(`${f.range} needs an image template`, { field: f.template }, `give ${f.template}, e.g. my/rabbitmq:sha-{sha}`);
  if (i.range === undefined) throw new GateError(`${f.template} needs a git range`, { field: f.range }, `give ${f.range} GOOD..BAD`);
  if (i.good !== undefined || i.bad !== undefined)
    throw new GateError(`${f.range} already names the known-good and known-bad commits`, { field: i.good !== undefined ? f.good : f.bad }, `drop ${f.good} / ${f.bad}, or put them in ${f.range}`);
  return fromRange(i, f);
}

/** The commits between the last good and the first bad image's commits (all of them, a merge's
 *  branch included): what the culprit stands for. Undefined when the checkout cannot say. */
export async function commitsBetween(repo: string, from: string, to: string, max = 50): Promise<{ range: string; count: number; list: Array<{ sha: string; subject: string }> } | undefined> {
  try {
    const count = Number((await git(repo, ['rev-list', '--count', `${from}..${to}`])).trim());
    const list = (await git(repo, ['log', `--max-count=${max}`, '--format=%H%x09%s', `${from}..${to}`]))
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const [sha, ...subject] = l.split('\t');
        return { sha, subject: subject.join('\t') };
      });
    return { range: `${from.slice(0, 12)}..${to.slice(0, 12)}`, count, list };
  } catch {
    return undefined;
  }
}
