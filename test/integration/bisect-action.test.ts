// mode: bisect through the bundled action (workflow_dispatch), real containers and the local GitHub
// server: three local tags from the offline 3.10.8 image, the last with a broker-side regression
// (credit_flow_default_credit {2, 1}); one probe names tag 3, the job summary and the sticky
// comment on the issue given by comment-on carry every step, and the outputs culprit and
// bisect-status are set. Bad inputs are one annotation each, before any broker starts: no images,
// a template without {sha}, an unordered git range.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGitHubServer, type GitHubServer } from '../support/github-server';
import { runAction } from '../support/action-runner';
import { GitRepo } from '../support/git-repo';
import { buildImageSeries, type ImageSeries } from '../support/bisect-images';

const TOKEN = 'ghs_perfgatebisect';
const REPO = 'Codertocat/Hello-World';
let gh: GitHubServer;
let series: ImageSeries;
const dispatch = { ref: 'refs/heads/main', repository: { name: 'Hello-World', full_name: REPO, owner: { login: 'Codertocat' }, default_branch: 'main' }, inputs: {} };

beforeAll(async () => {
  gh = await startGitHubServer({ token: TOKEN, repo: REPO });
  gh.state.addIssue(REPO, { number: 41, title: 'one_fast got slower between two nightlies' });
  series = buildImageSeries({ repo: `rabbitmq-perf-gate/bisect-action-${process.pid}`, count: 3, regressFrom: 3, credit: [2, 1] });
});
afterEach(() => {
  expect(gh.violations).toEqual([]);
  expect(gh.warnings).toEqual([]);
});
afterAll(async () => {
  series?.remove();
  await gh.close();
});

const bisect = (inputs: Record<string, string>, workspace?: string) =>
  runAction({
    workspace,
    apiUrl: gh.url,
    eventName: 'workflow_dispatch',
    event: dispatch,
    timeoutMs: 600_000,
    inputs: { mode: 'bisect', 'github-token': TOKEN, scenarios: 'one_fast', duration: '1', warmup: '0.5', looks: '8,12', ...inputs },
  });

describe('mode: bisect', () => {
  it('bad input is one annotation naming the input, and nothing starts', async () => {
    const repo = new GitRepo();
    const a = repo.commit({ f: '1' }, 'a');
    const b = repo.commit({ f: '2' }, 'b');
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{}, /bisect-images: mode: bisect needs the images to search/],
      [{ 'bisect-template': 'my/rmq:latest', 'bisect-range': `${a}..${b}` }, /bisect-template: the image template "my\/rmq:latest" has no \{sha\}/],
      [{ 'bisect-template': 'my/rmq:{sha}', 'bisect-range': `${b}..${a}` }, /bisect-range: the range is the wrong way round/],
      [{ 'bisect-images': 'my/rmq:a' }, /bisect-images: good and bad are the same image/],
    ];
    for (const [inputs, message] of cases) {
      const r = await bisect(inputs, repo.dir);
      expect(r.code, JSON.stringify(inputs)).toBe(1);
      const errors = r.stdout.split('\n').filter((l) => l.startsWith('::error'));
      expect(errors, r.stdout).toHaveLength(1);
      expect(errors[0]).toMatch(message);
      expect(r.stdout).not.toMatch(/Starting brokers/);
    }
  });

  it('three images, the last regressed: names tag 3 after the ends check and one probe; summary, comment on the issue and outputs', async () => {
    const r = await bisect({ 'bisect-images': series.images.join('\n'), 'comment-on': '41', 'time-limit': '15', scenarios: writeScenario() });
    expect(r.code, r.stdout.slice(-4000)).toBe(0);
    expect(r.outputs['bisect-status']).toBe('found');
    expect(r.outputs.culprit).toBe(series.images[2]);
    const report = JSON.parse(readFileSync(r.outputs.report, 'utf8'));
    expect(report.state.steps.map((s: { index: number; outcome: string; ends?: boolean }) => [s.index, s.outcome, !!s.ends])).toEqual([
      [2, 'bad', true],
      [1, 'good', false],
    ]);
    expect(r.summary).toContain(`first bad image: ${series.images[2]}`);
    expect(r.summary).toContain(series.images[1]);
    const comments = gh.state.comments(REPO, 41);
    expect(comments).toHaveLength(1);
    expect(comments[0].body).toContain('first bad image');
    expect(r.outputs['comment-url']).toBeTruthy();
    expect(r.stdout).toMatch(/::notice title=rabbitmq-perf-gate bisect::bisect: first bad image/);
  }, 900_000);
});

/** one_fast with a 25 % tolerance (an A/A on a busy machine stays inside it; the regression is far beyond). */
function writeScenario(): string {
  const dir = join(process.env.TMPDIR ?? '/tmp', `bisect-action-${process.pid}`);
  const text = readFileSync(join(import.meta.dirname, '../../scenarios/one_fast.yml'), 'utf8').replace(/^tolerances:.*$/m, '');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'one_fast.yml'), `${text.trimEnd()}\ntolerances: { consumed_rate: 0.25 }\n`);
  return join(dir, 'one_fast.yml');
}
