// Targets as data through the bundled action: a pull request's base and head target files, read
// from real git commits, decide between a same-run A/B on real containers (offline images) and
// the stored baseline; setup commands and missing files fail clearly; no container is left.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { runAction, pullRequestEvent } from '../support/action-runner';
import { GitRepo } from '../support/git-repo';
import { expectValidUnlessDisturbed } from '../support/trials';

const T = '.github/rabbitmq-perf/target.yml';
const IMG_3 = 'rabbitmq-perf-gate/rabbitmq:3.10.8';
const IMG_4 = 'rabbitmq-perf-gate/rabbitmq:4.0.5';
const quick = { scenarios: 'smoke', repetitions: '3', duration: '1', warmup: '0.5', comment: 'never', 'fail-on-regression': 'false' };
/** One round, for a test that asserts nothing about what the trials measured (only which brokers ran). */
const once = { repetitions: '1' };

function event(_repo: GitRepo, base: string, head: string) {
  const e = pullRequestEvent();
  e.pull_request.base.sha = base;
  e.pull_request.head.sha = head;
  return e;
}

/** Containers (running or not) labelled with the run id the action saved for its post step. */
function containersOf(stdout: string): string[] {
  const runId = /::save-state name=run-id::(\S+)/.exec(stdout)?.[1];
  expect(runId).toBeTruthy();
  return execFileSync('docker', ['ps', '-aq', '--filter', `label=rabbitmq-perf-gate.run=${runId}`], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
}

async function prRun(files: { base: Record<string, string | null>; head: Record<string, string | null> }, inputs: Record<string, string> = {}) {
  const repo = new GitRepo();
  const base = repo.commit(files.base, 'base');
  const head = repo.commit(files.head, 'head');
  const r = await runAction({ workspace: repo.dir, event: event(repo, base, head), inputs: { ...quick, ...inputs } });
  const report = r.outputs.report ? JSON.parse(readFileSync(r.outputs.report, 'utf8')) : undefined;
  expect(containersOf(r.stdout)).toEqual([]);
  return { r, report, head };
}

describe('base vs head target files', () => {
  it('an image change runs base and head side by side and names both', async () => {
    const { r, report } = await prRun({ base: { [T]: `image: ${IMG_3}\n` }, head: { [T]: `image: ${IMG_4}\n` } });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Targets: base and head describe different brokers.*git commit.*same-run A\/B/);
    const versions = Object.fromEntries(report.targets.map((t: any) => [t.id, t.rabbitmqVersion]));
    expect(versions.base).toBe('3.10.8');
    expect(versions.head).toMatch(/^4\.0\./);
    expect(report.comparisons.some((c: any) => c.against === 'base' && c.baselineLabel.startsWith('base: '))).toBe(true);
    expect(report.decidedBy).toMatch(/same-run A\/B against base: /);
    expect(r.summary).toContain(`- image: ${IMG_3}`);
    expect(r.summary).toContain(`+ image: ${IMG_4}`);
    expectValidUnlessDisturbed(report.trials, 6);
  });

  it('a config-only change runs the same image twice with the two configs', async () => {
    const conf = '.github/rabbitmq-perf/rabbitmq.conf';
    const { r, report } = await prRun(
      {
        base: { [T]: `image: ${IMG_4}\nconfig: [${conf}]\n`, [conf]: 'queue_index_embed_msgs_below = 4096\n' },
        head: { [conf]: 'queue_index_embed_msgs_below = 0\n' },
      },
      once,
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const [a, b] = report.targets;
    expect(a.image).toBe(b.image);
    expect(a.configDigest).not.toBe(b.configDigest);
    expect(report.targetDiff).toMatch(/- queue_index_embed_msgs_below = 4096\n\+ queue_index_embed_msgs_below = 0/);
  });

  it('no change to the broker → the stored baseline only, and the log says so', async () => {
    const { r, report } = await prRun({ base: { [T]: `image: ${IMG_4}\n`, 'README.md': 'a' }, head: { 'README.md': 'b' } }, once);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Targets: base and head describe the same broker.*stored baseline only/);
    expect(report.targets).toHaveLength(1);
    expect(report.targets[0].image).toBe(IMG_4);
  });

  it('a failing setup command is one clear error naming the command; containers are removed', async () => {
    const { r } = await prRun({ base: { 'README.md': 'a' }, head: { [T]: `image: ${IMG_4}\nsetup:\n  - rabbitmqctl set_policy bad "^x" 'not json'\n` } });
    expect(r.code).toBe(1);
    const errors = r.stdout.split('\n').filter((l) => l.startsWith('::error'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/set_policy/);
  });

  it('a target file referencing a missing file names the file and the commit', async () => {
    const { r, head } = await prRun({ base: { 'README.md': 'a' }, head: { [T]: `image: ${IMG_4}\nconfig: [conf/missing.conf]\n` } });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(new RegExp(`::error.*config file "conf/missing.conf" referenced by the target does not exist in git commit ${head.slice(0, 12)}`));
    expect(r.stdout + r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+\)/);
  });
});
