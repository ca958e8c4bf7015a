// Which images a bisect searches: an explicit list (cut at --good/--bad), or a template filled with
// each first-parent commit of a git range in a real repository (with a merged branch, whose
// commits a first-parent walk steps over). Bad input — an empty or unordered range, good = bad, a
// template without {sha}, a ref that does not resolve, a good end off the first-parent line — is
// one GateError each, naming the option.
import { afterAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { checkTemplate, commitsBetween, fillTemplate, resolveBisectImages } from '../../src/config/bisect-range';
import { GateError } from '../../src/schema/errors';
import { GitRepo } from '../support/git-repo';

const repo = new GitRepo();
const c1 = repo.commit({ a: '1' }, 'one');
const c2 = repo.commit({ a: '2' }, 'two');
repo.git('checkout', '-q', '-b', 'topic');
const t1 = repo.commit({ b: '1' }, 'topic one');
const t2 = repo.commit({ b: '2' }, 'topic two');
repo.git('checkout', '-q', 'main');
const c3 = repo.commit({ a: '3' }, 'three');
repo.git('merge', '-q', '--no-ff', '-m', 'merge topic', 'topic');
const m = repo.git('rev-parse', 'HEAD');
const c4 = repo.commit({ a: '4' }, 'four');
afterAll(() => rmSync(repo.dir, { recursive: true, force: true }));

async function error(p: Promise<unknown>): Promise<GateError> {
  const e = await p.then(
    () => undefined,
    (x) => x,
  );
  expect(e).toBeInstanceOf(GateError);
  return e as GateError;
}

describe('bisect images from a git range', () => {
  it('GOOD..BAD: the good commit, then every first-parent commit after it, oldest first, each through the template', async () => {
    const r = await resolveBisectImages({ template: 'my/rabbitmq:sha-{sha}', range: `${c1}..main`, repo: repo.dir });
    expect(r.images.map((i) => i.commit)).toEqual([c1, c2, c3, m, c4]);
    expect(r.images.map((i) => i.subject)).toEqual(['one', 'two', 'three', 'merge topic', 'four']);
    expect(r.images[1].image).toBe(`my/rabbitmq:sha-${c2}`);
    expect(r.range).toEqual({ repo: repo.dir, spec: `${c1}..main`, template: 'my/rabbitmq:sha-{sha}' });
    // A merge stands for its branch's commits too.
    const between = await commitsBetween(repo.dir, c3, m);
    expect(between?.count).toBe(3);
    expect(between?.list.map((x) => x.sha).sort()).toEqual([m, t1, t2].sort());
  });

  it('{sha:N} takes the first N characters', () => {
    expect(fillTemplate('r:{sha:7}-otp28', c1)).toBe(`r:${c1.slice(0, 7)}-otp28`);
    expect(() => checkTemplate('r:{sha:2}', '--template')).toThrow(/between 4 and 40/);
    expect(() => checkTemplate('r:{sha}-{otp}', '--template')).toThrow(/\{otp\}/);
  });

  it('bad ranges: one clear error each, naming --range or --template', async () => {
    const cases: Array<[Record<string, string>, RegExp, string]> = [
      [{ template: 'r:{sha}', range: `${c4}..${c1}` }, /wrong way round/, '--range'],
      [{ template: 'r:{sha}', range: `${c2}..${c2}` }, /good and bad are the same commit/, '--range'],
      [{ template: 'r:{sha}', range: `..${c2}` }, /not a range of two commits/, '--range'],
      [{ template: 'r:{sha}', range: '' }, /not a range of two commits/, '--range'],
      [{ template: 'r:{sha}', range: `${c1}...${c2}` }, /symmetric range/, '--range'],
      [{ template: 'r:{sha}', range: `${c1}..no-such-branch` }, /"no-such-branch" does not resolve/, '--range'],
      [{ template: 'r:latest', range: `${c1}..${c2}` }, /has no \{sha\}/, '--template'],
      [{ template: 'r:{sha}', range: `${t1}..${c4}` }, /not on .*first-parent line/, '--range'],
      [{ range: `${c1}..${c2}` }, /needs an image template/, '--template'],
      [{ template: 'r:{sha}' }, /needs a git range/, '--range'],
    ];
    for (const [input, message, field] of cases) {
      const e = await error(resolveBisectImages({ ...input, repo: repo.dir }));
      expect(e.message, JSON.stringify(input)).toMatch(message);
      expect(e.where.field).toBe(field);
      expect(e.fix).toBeTruthy();
    }
    const e = await error(resolveBisectImages({ template: 'r:{sha}', range: `${c1}..${c2}`, repo: '/' }));
    expect(e.message).toMatch(/not a git checkout/);
  });
});

describe('bisect images from a list', () => {
  it('in order, cut to --good … --bad (names or positions)', async () => {
    expect((await resolveBisectImages({ images: 'a, b,c\nd' })).images.map((i) => i.image)).toEqual(['a', 'b', 'c', 'd']);
    expect((await resolveBisectImages({ images: 'a,b,c,d', good: 'b', bad: '4' })).images.map((i) => i.image)).toEqual(['b', 'c', 'd']);
  });

  it('bad lists: empty, one image, good = bad, unordered, unknown, twice, or mixed with a range', async () => {
    const cases: Array<[Record<string, string>, RegExp, string]> = [
      [{ images: ' , ' }, /image list is empty/, '--images'],
      [{ images: 'a' }, /same image/, '--images'],
      [{ images: 'a,b,c', good: 'b', bad: 'b' }, /same image/, '--bad'],
      [{ images: 'a,b,c', good: 'c', bad: 'a' }, /unordered/, '--good'],
      [{ images: 'a,b,c', good: 'x' }, /not one of the 3 images/, '--good'],
      [{ images: 'a,b,b,c' }, /twice/, '--images'],
      [{ images: 'a,b', template: 'r:{sha}' }, /cannot be combined/, '--images'],
      [{}, /no images to search/, '--images'],
    ];
    for (const [input, message, field] of cases) {
      const e = await error(resolveBisectImages(input));
      expect(e.message, JSON.stringify(input)).toMatch(message);
      expect(e.where.field).toBe(field);
    }
  });
});
