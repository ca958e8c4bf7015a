// Target files read at a PR's base and head commits from real git repositories: digests decide
// between same-run A/B and stored-baseline mode; bad files give errors naming file and commit.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { gitCommit, restContents, workingTree } from '../../src/config/file-source';
import { baseVsHead } from '../../src/config/targets';
import { loadTarget } from '../../src/config/target-file';
import { GateError } from '../../src/schema/errors';
import { GitRepo } from '../support/git-repo';

const T = '.github/rabbitmq-perf/target.yml';
const target = (image: string, extra = '') => `image: ${image}\nconfig: [.github/rabbitmq-perf/rabbitmq.conf]\n${extra}`;

describe('base vs head', () => {
  it('an image bump → A/B naming both, with a diff', async () => {
    const repo = new GitRepo();
    const base = repo.commit({ [T]: target('rabbitmq:4.0-management'), '.github/rabbitmq-perf/rabbitmq.conf': 'vm_memory_high_watermark.relative = 0.6\n' });
    const head = repo.commit({ [T]: target('rabbitmq:4.1-management') });
    const plan = await baseVsHead(gitCommit(repo.dir, base), gitCommit(repo.dir, head), T);
    expect(plan.reference?.image).toBe('rabbitmq:4.0-management');
    expect(plan.candidate.image).toBe('rabbitmq:4.1-management');
    expect(plan.reference!.label).toMatch(/^base: /);
    expect(plan.candidate.label).toMatch(/^head: /);
    expect(plan.note).toMatch(/different brokers.*git commit .*same-run A\/B/);
    expect(plan.diff).toContain('- image: rabbitmq:4.0-management');
    expect(plan.diff).toContain('+ image: rabbitmq:4.1-management');
    // Files from a commit are materialised for the container provider.
    expect(readFileSync(plan.reference!.configFiles[0], 'utf8')).toContain('0.6');
  });

  it('a config-only change → A/B with the same image and two configs', async () => {
    const repo = new GitRepo();
    const base = repo.commit({ [T]: target('rabbitmq:4.0'), '.github/rabbitmq-perf/rabbitmq.conf': 'queue_index_embed_msgs_below = 4096\n' });
    const head = repo.commit({ '.github/rabbitmq-perf/rabbitmq.conf': 'queue_index_embed_msgs_below = 0\n' });
    const plan = await baseVsHead(gitCommit(repo.dir, base), gitCommit(repo.dir, head), T);
    expect(plan.reference?.image).toBe(plan.candidate.image);
    expect(readFileSync(plan.reference!.configFiles[0], 'utf8')).toContain('4096');
    expect(readFileSync(plan.candidate.configFiles[0], 'utf8')).toContain('= 0');
    expect(plan.diff).toMatch(/- queue_index_embed_msgs_below = 4096\n\+ queue_index_embed_msgs_below = 0/);
  });

  it('no change (or only a label) → stored-baseline mode, and it says so', async () => {
    const repo = new GitRepo();
    const base = repo.commit({ [T]: target('rabbitmq:4.0'), '.github/rabbitmq-perf/rabbitmq.conf': 'x = 1\n', 'README.md': 'a' });
    const head = repo.commit({ 'README.md': 'b', [T]: `label: renamed\n${target('rabbitmq:4.0')}` });
    const plan = await baseVsHead(gitCommit(repo.dir, base), gitCommit(repo.dir, head), T);
    expect(plan.reference).toBeUndefined();
    expect(plan.note).toMatch(/same broker.*stored baseline only/);
  });

  it('a target added by the PR has no base: stored baseline only', async () => {
    const repo = new GitRepo();
    const base = repo.commit({ 'README.md': 'a' });
    const head = repo.commit({ [T]: 'image: rabbitmq:4.0\n' });
    const plan = await baseVsHead(gitCommit(repo.dir, base), gitCommit(repo.dir, head), T);
    expect(plan.reference).toBeUndefined();
    expect(plan.note).toMatch(/base .* has no/);
  });

  it('a missing referenced file names the file and the commit; bad fields name the line', async () => {
    const repo = new GitRepo();
    const head = repo.commit({ [T]: 'image: rabbitmq:4.0\nconfig: [conf/missing.conf]\n' });
    const err = await baseVsHead(workingTree(repo.dir), gitCommit(repo.dir, head), T).catch((e) => e);
    expect(err).toBeInstanceOf(GateError);
    expect(err.describe()).toMatch(
      new RegExp(`target.yml \\(git commit ${head.slice(0, 12)}\\):2: config\\[0\\]: config file "conf/missing.conf" .* does not exist in git commit ${head.slice(0, 12)}`),
    );
    const bad = repo.commit({ [T]: 'image: rabbitmq:4.0\nnodez: 3\n' });
    const err2 = await baseVsHead(workingTree(repo.dir), gitCommit(repo.dir, bad), T).catch((e) => e);
    expect(err2.describe()).toMatch(/:2: nodez: unknown field "nodez"/);
    const err3 = await baseVsHead(workingTree(repo.dir), gitCommit(repo.dir, bad), 'nope.yml').catch((e) => e);
    expect(err3.describe()).toMatch(/nope\.yml: target file not found in git commit/);
  });

  it('evidence: false reaches the target spec; a non-boolean is an error naming the line', async () => {
    const repo = new GitRepo();
    const off = repo.commit({ [T]: 'image: rabbitmq:4.0\nevidence: false\n' });
    expect((await loadTarget(gitCommit(repo.dir, off), T, 't')).spec.evidence).toBe(false);
    const on = repo.commit({ [T]: 'image: rabbitmq:4.0\n' });
    expect((await loadTarget(gitCommit(repo.dir, on), T, 't')).spec.evidence).toBeUndefined();
    const bad = repo.commit({ [T]: 'image: rabbitmq:4.0\nevidence: off please\n' });
    const err = await loadTarget(gitCommit(repo.dir, bad), T, 't').catch((e) => e);
    expect(err.describe()).toMatch(/:2: evidence: must be boolean/);
  });

  it('reads through the REST contents API when the checkout lacks the history', async () => {
    const files: Record<string, string> = { [T]: 'image: rabbitmq:4.0\n' };
    const get = async ({ path, ref }: { path: string; ref: string }) => {
      if (ref !== 'abc123' || !(path in files)) throw Object.assign(new Error('Not Found'), { status: 404 });
      return { data: { type: 'file', encoding: 'base64', content: Buffer.from(files[path]).toString('base64') } };
    };
    const src = restContents(get, 'o', 'r', 'abc123');
    expect(src.name).toBe('REST contents API at abc123');
    expect((await src.read(T))!.toString()).toBe('image: rabbitmq:4.0\n');
    expect(await src.read('missing')).toBeUndefined();
  });
});
