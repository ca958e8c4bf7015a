// A pull request cannot move its own bar: on a pull_request event the stored baseline is read at
// the base commit (the checkout's git objects), not from the PR's checkout. A PR that edits the
// baseline file is compared with the base version and told so; a PR that leaves it alone is not.
// The bundled action against the local RabbitMQ service, in real git repositories.
import { beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { newWorkspace, pullRequestEvent, runAction } from '../support/action-runner';
import { AMQP_URL, MANAGEMENT_URL } from '../support/broker';
import { GitRepo } from '../support/git-repo';

const FILE = '.github/rabbitmq-perf/baseline.json';
const fast = { scenarios: 'smoke', repetitions: '3', duration: '1', warmup: '0.5', 'broker-url': AMQP_URL, 'management-url': MANAGEMENT_URL, comment: 'never', 'fail-on-regression': 'false' };
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

let genuine: string;
beforeAll(async () => {
  const ws = newWorkspace();
  const r = await runAction({ workspace: ws, inputs: { ...fast, mode: 'refresh' } });
  expect(r.code, r.stdout + r.stderr).toBe(0);
  genuine = readFileSync(join(ws, FILE), 'utf8');
}, 120_000);

async function check(headBaseline: string, other: Record<string, string> = {}) {
  const repo = new GitRepo();
  const base = repo.commit({ [FILE]: genuine, 'README.md': 'base\n' }, 'base');
  const head = repo.commit({ [FILE]: headBaseline, ...other }, 'head');
  const event = pullRequestEvent();
  event.pull_request.base.sha = base;
  event.pull_request.head.sha = head;
  const r = await runAction({ workspace: repo.dir, event, inputs: fast });
  expect(r.code, r.stdout + r.stderr).toBe(0);
  return { r, report: JSON.parse(readFileSync(r.outputs.report, 'utf8')) };
}

describe('the stored baseline of a pull request comes from its base commit', () => {
  it('a PR that lowers the stored figures is compared with the base version, and told so', async () => {
    const forged = JSON.parse(genuine);
    for (const sc of Object.values<any>(forged.scenarios)) for (const k of Object.keys(sc.metrics)) sc.metrics[k] = sc.metrics[k].map((v: number) => v / 10);
    const { r, report } = await check(JSON.stringify(forged, null, 1));
    expect(r.stdout).toMatch(
      /::notice::This pull request edits \.github\/rabbitmq-perf\/baseline\.json: the check compares with the base commit's version \(git commit [0-9a-f]{12}\), so a pull request cannot move its own baseline/,
    );
    const stored = report.comparisons.filter((c: any) => c.against === 'stored');
    expect(stored.length).toBeGreaterThan(0);
    const real = JSON.parse(genuine).scenarios;
    for (const c of stored) expect(c.baselineMedian, `${c.scenario} ${c.metric}`).toBeCloseTo(median(real[c.scenario].metrics[c.metric]), 6);
  }, 120_000);

  it('a PR that leaves the file alone: compared with it, no notice', async () => {
    const { r, report } = await check(genuine, { 'README.md': 'head\n' });
    expect(r.stdout).not.toContain('cannot move its own baseline');
    expect(report.comparisons.some((c: any) => c.against === 'stored')).toBe(true);
  }, 120_000);
});
