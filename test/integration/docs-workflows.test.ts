// Every workflow in docs/workflows/ run as the Actions runner would run it (test/support/
// workflow-runner.ts: GitHub's expression library, the job's `if:`, matrix and permissions, `run:`
// steps in bash, artifacts between jobs), with the bundled action against real brokers and the
// local GitHub server (each request checked against GitHub's OpenAPI description):
// - perf.yml builds the pull request's image and A/Bs it against the release in the same job, and
//   comments; on a fork's pull request it only uploads the report, and perf-comment.yml posts it;
// - perf-refresh.yml refreshes on the target file's broker (anchored) and opens the refresh pull
//   request; perf-target.yml then A/Bs base against head when a pull request changes the broker,
//   and starts the anchored broker again next to the head's when it does not;
// - perf-sharded.yml's shard jobs each A/B their share, the merge job makes one verdict and comment;
// - perf-dispatch.yml A/Bs the two images of the run form;
// - perf-stored.yml (second choice) refreshes and checks a `services:` broker against stored trials.
// The two offline images stand in for the tags the templates name (World.images), and every
// measuring step runs one_fast in 3 short rounds (World.size) instead of the preset — in 1 round
// where the test asserts nothing about what the trials measured (the fork's run, perf-target.yml's
// pull requests, perf-stored.yml's check): the job's wiring and the brokers it starts are its subject.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import examples from '@octokit/webhooks-examples/api.github.com/index.json' with { type: 'json' };
import type { RunReport } from '../../src/schema/types';
import { ANCHOR_ID } from '../../src/broker/anchor';
import { startGitHubServer, type GitHubServer } from '../support/github-server';
import { pullRequestEvent } from '../support/action-runner';
import { scheduleEvent, seedForkPull, workflowRunEvent, writeScenarioFolder } from '../support/github-events';
import { GitRepo } from '../support/git-repo';
import { MANAGEMENT_URL } from '../support/broker';
import { runJob, type JobRecord, type StepRecord, type World } from '../support/workflow-runner';
import { expectValidUnlessDisturbed } from '../support/trials';

const TOKEN = 'ghs_perfgatedocsworkflows';
const READ_ONLY = 'ghs_perfgatedocsreadonly';
const REPO = 'Codertocat/Hello-World';
const MARKER = '<!-- rabbitmq-perf-gate:rabbitmq-perf-gate -->';
const OLD = 'rabbitmq-perf-gate/rabbitmq:3.10.8';
const NEW = 'rabbitmq-perf-gate/rabbitmq:4.0.5';
/** The older offline image plays the release the templates name, the newer one the upgrade. */
const IMAGES = { 'rabbitmq:4.0-management': OLD, 'rabbitmq:4.1-management': NEW };
const SIZE = { scenarios: 'one_fast', repetitions: '3', duration: '1', warmup: '0.5' };
/** One round: for a job whose assertions read no measured value (a disturbed or invalid pair
 *  breaks none of them), so two more boots' worth of trials would buy nothing. */
const ONE = { ...SIZE, repetitions: '1' };
const T = '.github/rabbitmq-perf/target.yml';
const BASELINE = '.github/rabbitmq-perf/baseline.json';
const built = new Set<string>();

async function newWorld(size: Record<string, string> = SIZE): Promise<World> {
  const gh = await startGitHubServer({ token: TOKEN, repo: REPO });
  gh.addToken(READ_ONLY, { readOnly: true });
  gh.state.addPull(REPO, { head: 'changes', number: 2 });
  return { gh, token: TOKEN, readOnlyToken: READ_ONLY, artifacts: store(), images: IMAGES, size };
}

/** actions/checkout: a fresh clone of the repository's commit. */
function checkout(repo: GitRepo): string {
  const dir = mkdtempSync(join(tmpdir(), 'perf-gate-checkout-'));
  execFileSync('git', ['clone', '-q', repo.dir, dir]);
  return dir;
}

/** A repository with nothing for the gate in it. */
function plainRepo(): GitRepo {
  const repo = new GitRepo();
  repo.commit({ 'README.md': 'An application that uses RabbitMQ.\n' }, 'start');
  return repo;
}

/** A repository that builds its broker image: the newer offline image with one setting changed. */
function imageRepo(): GitRepo {
  const repo = new GitRepo();
  repo.commit(
    {
      Dockerfile: `FROM ${NEW}\nCOPY 40-pr.conf /etc/rabbitmq/conf.d/40-pr.conf\n`,
      '40-pr.conf': 'channel_max = 1000\n',
    },
    'broker image',
  );
  return repo;
}

const step = (job: JobRecord, id: string): StepRecord => {
  const s = job.steps.find((x) => x.id === id);
  expect(s, `step ${id}`).toBeTruthy();
  return s!;
};
const log = (job: JobRecord) => job.steps.map((s) => `${s.label}: ${s.outcome}\n${s.log ?? ''}${s.action ? s.action.stdout + s.action.stderr : ''}`).join('\n');
const reportOf = (s: StepRecord): RunReport => JSON.parse(readFileSync(s.action!.outputs.report, 'utf8'));
const target = (r: RunReport, id: string) => r.targets.find((t) => t.id === id)!;
const ours = (gh: GitHubServer, pr: number) => gh.state.comments(REPO, pr).filter((c) => c.body.startsWith(MARKER));
const writes = (gh: GitHubServer, from: number) =>
  gh.requests
    .slice(from)
    .filter((q) => q.method !== 'GET')
    .map((q) => q.operationId);
/** No container left behind by the run (the step removes them; the post step is the net). */
function noContainers(s: StepRecord): void {
  const runId = /::save-state name=run-id::(\S+)/.exec(s.action!.stdout)?.[1];
  expect(runId).toBeTruthy();
  expect(execFileSync('docker', ['ps', '-aq', '--filter', `label=rabbitmq-perf-gate.run=${runId}`], { encoding: 'utf8' }).trim()).toBe('');
}
const store = () => mkdtempSync(join(tmpdir(), 'perf-gate-artifacts-'));
const uploaded = (artifacts: string, name: string) => (existsSync(join(artifacts, name)) ? readdirSync(join(artifacts, name)).sort() : []);

afterAll(() => {
  for (const image of built) spawnSync('docker', ['image', 'rm', image]);
});

describe("perf.yml: the pull request's image A/B'd against the release it replaces", () => {
  let world: World;
  beforeAll(async () => {
    world = await newWorld();
  });
  afterEach(() => {
    expect(world.gh.violations).toEqual([]);
  });
  afterAll(async () => {
    await world.gh.close();
  });

  it("a pull request from this repository: built, A/B'd on this runner, commented, report uploaded", async () => {
    const [job] = await runJob(world, 'docs/workflows/perf.yml', 'perf', { workspace: checkout(imageRepo()), event: pullRequestEvent(), eventName: 'pull_request' });
    built.add('perf-candidate:pr-2');
    expect(job.result, log(job)).toBe('success');
    expect(job.token).toBe(TOKEN);
    const gate = step(job, 'gate');
    expect(gate.inputs).toMatchObject({ 'broker-image': 'perf-candidate:pr-2', 'broker-label': 'pull request', 'baseline-image': OLD, 'github-token': TOKEN, mode: 'check' });
    const report = reportOf(gate);
    // Both brokers as they ran: the built image (its conf.d setting read back) and the release.
    expect(target(report, 'candidate')).toMatchObject({ label: 'pull request', rabbitmqVersion: '4.0.5' });
    expect(target(report, 'candidate').effective?.node?.channel_max).toBe('1000');
    expect(target(report, 'baseline').rabbitmqVersion).toBe('3.10.8');
    expect(target(report, 'baseline').effective?.node?.channel_max).not.toBe('1000');
    expect(report.decidedBy).toMatch(/^same-run A\/B against baseline: rabbitmq-perf-gate\/rabbitmq:3\.10\.8/);
    expect(report.comparisons.filter((c) => c.gating).every((c) => c.paired && c.against === 'baseline')).toBe(true);
    expectValidUnlessDisturbed(report.trials, 6);
    expect(ours(world.gh, 2)).toHaveLength(1);
    expect(gate.action!.outputs['comment-url']).toContain('#issuecomment-');
    expect(uploaded(world.artifacts, 'rabbitmq-perf-gate-report')).toEqual(['pr.json', 'report.html', 'report.json', 'summary.md']);
    noContainers(gate);
    expect(job.post.map((p) => p.code)).toEqual([0]);
  }, 400_000);

  it("a fork's pull request: measured with a read-only token, no write; perf-comment.yml posts its artifact", async () => {
    const w: World = { ...world, artifacts: store(), size: ONE };
    const fork = seedForkPull(world.gh, REPO, { number: 3 });
    const from = world.gh.requests.length;
    const [job] = await runJob(w, 'docs/workflows/perf.yml', 'perf', { workspace: checkout(imageRepo()), event: fork.event, eventName: 'pull_request', fork: true });
    built.add('perf-candidate:pr-3');
    expect(job.result, log(job)).toBe('success');
    expect(job.token).toBe(READ_ONLY);
    expect(writes(world.gh, from)).toEqual([]);
    expect(reportOf(step(job, 'gate')).decidedBy).toMatch(/^same-run A\/B against baseline/);
    expect(uploaded(w.artifacts, 'rabbitmq-perf-gate-report')).toEqual(['pr.json', 'report.html', 'report.json', 'summary.md']);

    // The workflow_run job skips runs of this repository's own pull requests (perf.yml commented).
    const own = await runJob(w, 'docs/workflows/perf-comment.yml', 'comment', {
      workspace: checkout(plainRepo()),
      event: workflowRunEvent({ headSha: fork.headSha, headRepo: REPO }),
      eventName: 'workflow_run',
    });
    expect(own.map((j) => j.result)).toEqual(['skipped']);
    const [post] = await runJob(w, 'docs/workflows/perf-comment.yml', 'comment', {
      workspace: checkout(plainRepo()),
      event: workflowRunEvent({ headSha: fork.headSha, headRepo: fork.headRepo }),
      eventName: 'workflow_run',
    });
    expect(post.result, log(post)).toBe('success');
    expect(post.token).toBe(TOKEN);
    expect(post.steps.map((s) => s.outcome)).toEqual(['success', 'success', 'success']);
    const [comment] = ours(world.gh, 3);
    expect(comment.body).toContain('**Decided by:** same-run A/B against baseline: rabbitmq-perf-gate/rabbitmq:3.10.8');
    expect(writes(world.gh, from)).toEqual(['issues/create-comment']);
  }, 400_000);
});

describe('perf-refresh.yml (anchored), then perf-target.yml: a broker kept as a target file', () => {
  let world: World;
  const files = { [T]: `label: production\nimage: ${OLD}\nconfig: [.github/rabbitmq-perf/rabbitmq.conf]\n`, '.github/rabbitmq-perf/rabbitmq.conf': 'channel_max = 1000\n' };
  /** The scheduled refresh (and a manual run from another branch), made once, here: the pull
   *  requests below are checked against the baseline it wrote, merged into main. */
  let manual: JobRecord[];
  let refresh: JobRecord;
  let workspace: string;
  let baseline = '';
  beforeAll(async () => {
    world = await newWorld();
    world.gh.state.writeFiles(REPO, 'main', files, 'The broker as data');
    const repo = new GitRepo();
    repo.commit(files, 'The broker as data');
    manual = await runJob(world, 'docs/workflows/perf-refresh.yml', 'refresh', {
      workspace: checkout(repo),
      event: { ...wfDispatch(), repository: { default_branch: 'main' } },
      eventName: 'workflow_dispatch',
      ref: 'refs/heads/feature',
    });
    workspace = checkout(repo);
    [refresh] = await runJob(world, 'docs/workflows/perf-refresh.yml', 'refresh', { workspace, event: scheduleEvent(), eventName: 'schedule' });
    baseline = existsSync(join(workspace, BASELINE)) ? readFileSync(join(workspace, BASELINE), 'utf8') : '';
    world.gh.state.writeFiles(REPO, 'main', { [BASELINE]: baseline }, 'Merge the baseline refresh');
  }, 400_000);
  afterEach(() => {
    expect(world.gh.violations).toEqual([]);
  });
  afterAll(async () => {
    await world.gh.close();
  });

  it("the scheduled refresh starts the target file's broker, records it and opens the refresh pull request", () => {
    expect(manual.map((j) => j.result)).toEqual(['skipped']); // a manual run only from the default branch
    expect(refresh.result, log(refresh)).toBe('success');
    const gate = refresh.steps.find((s) => s.action)!;
    expect(gate.inputs).toMatchObject({ mode: 'refresh', target: T, 'refresh-commit': 'pr' });
    const anchor = JSON.parse(baseline).anchor;
    expect(anchor).toMatchObject({ image: OLD, nodes: 1 });
    expect(anchor.imageId).toMatch(/^sha256:/);
    expect(anchor.configFiles.map((f: { name: string }) => f.name)).toEqual(['rabbitmq.conf']);
    expect(reportOf(gate).targets[0].effective?.node?.channel_max).toBe('1000');
    const [pull] = world.gh.state.pulls(REPO).filter((p) => p.headRef === 'rabbitmq-perf-gate/baseline-refresh');
    expect(world.gh.state.readFile(REPO, BASELINE, pull.headRef)).toBe(baseline);
    expect(uploaded(world.artifacts, 'rabbitmq-perf-gate-refresh')).toContain('report.json');
    noContainers(gate);
  });

  /** A pull request (a workflow run of its own) whose base is main on the server, read through
   *  the REST API, and whose head is a shallow checkout holding only the head commit, as
   *  actions/checkout makes it. */
  function pullRequest(head: Record<string, string>) {
    expect(baseline).not.toBe('');
    const base = world.gh.state.branchSha(REPO, 'main')!;
    const repo = new GitRepo();
    const headSha = repo.commit({ ...files, [BASELINE]: baseline, ...head }, 'The change');
    const event = pullRequestEvent();
    event.pull_request.base.sha = base;
    event.pull_request.head.sha = headSha;
    return { workspace: checkout(repo), event, eventName: 'pull_request', base, artifacts: store() };
  }

  it('a pull request that changes the broker: base and head side by side, the base read through the REST API', async () => {
    const pr = pullRequest({ '.github/rabbitmq-perf/rabbitmq.conf': 'channel_max = 1500\n' });
    const from = world.gh.requests.length;
    const [job] = await runJob({ ...world, size: ONE }, 'docs/workflows/perf-target.yml', 'perf', pr);
    expect(job.result, log(job)).toBe('success');
    const gate = step(job, 'gate');
    for (const k of ['broker-image', 'baseline-image', 'target', 'baseline-target']) expect(gate.inputs![k]).toBeUndefined(); // no broker input
    expect(gate.inputs!['target-file']).toBe(T);
    expect(world.gh.requests.slice(from).some((q) => q.operationId === 'repos/get-content' && q.query.ref === pr.base)).toBe(true);
    const report = reportOf(gate);
    expect(report.decidedBy).toMatch(/^same-run A\/B against base: /);
    expect(target(report, 'base').effective?.node?.channel_max).toBe('1000');
    expect(target(report, 'head').effective?.node?.channel_max).toBe('1500');
    expect(ours(world.gh, 2)).toHaveLength(1);
    expect(uploaded(pr.artifacts, 'rabbitmq-perf-gate-report')).toContain('report.json');
    noContainers(gate);
  }, 400_000);

  it("a pull request that leaves the broker alone: the anchored baseline's broker is started again and decides by a same-run A/B", async () => {
    const [job] = await runJob({ ...world, size: ONE }, 'docs/workflows/perf-target.yml', 'perf', pullRequest({ 'README.md': 'docs only\n' }));
    expect(job.result, log(job)).toBe('success');
    const gate = step(job, 'gate');
    const report = reportOf(gate);
    expect(report.targetNote).toMatch(/stored baseline's broker \(rabbitmq-perf-gate\/rabbitmq:3\.10\.8, image [0-9a-f]{12}, refreshed \d{4}-\d\d-\d\d\) was started again next to the candidate/);
    expect(report.decidedBy).toMatch(/^same-run A\/B against baseline broker/);
    expect(target(report, ANCHOR_ID)).toMatchObject({ rabbitmqVersion: '3.10.8' });
    expect(target(report, ANCHOR_ID).effective?.node?.channel_max).toBe('1000');
    const stored = report.comparisons.filter((c) => c.against === 'stored');
    expect(stored.length).toBeGreaterThan(0); // the refresh's stored trials, shown beside the A/B
    expect(stored.every((c) => !c.gating)).toBe(true);
    expect(ours(world.gh, 2)).toHaveLength(1); // one sticky comment, whichever test ran first
    noContainers(gate);
  }, 400_000);
});

describe('perf-sharded.yml: shards A/B their share of the matrix, one merged verdict and comment', () => {
  let world: World;
  beforeAll(async () => {
    world = await newWorld({ ...SIZE, scenarios: 'perf' });
  });
  afterEach(() => {
    expect(world.gh.violations).toEqual([]);
  });
  afterAll(async () => {
    await world.gh.close();
  });

  it('three shard jobs and the merge job', async () => {
    const repo = imageRepo();
    const ws = checkout(repo);
    writeScenarioFolder(join(ws, 'perf'), ['alpha', 'beta', 'gamma']);
    execFileSync('git', ['-C', ws, 'add', '-A']);
    execFileSync('git', ['-C', ws, '-c', 'user.name=t', '-c', 'user.email=t@example.invalid', 'commit', '-qm', 'scenarios']);
    const head = new GitRepo();
    execFileSync('git', ['-C', head.dir, 'pull', '-q', ws, 'main']);
    const shards = await runJob(world, 'docs/workflows/perf-sharded.yml', 'shard', { workspace: () => checkout(head), event: pullRequestEvent(), eventName: 'pull_request' });
    built.add('perf-candidate:pr-2');
    expect(shards.map((j) => j.matrix)).toEqual([{ shard: 1 }, { shard: 2 }, { shard: 3 }]);
    for (const j of shards) expect(j.result, log(j)).toBe('success');
    const ran = shards.map((j) => reportOf(j.steps.find((s) => s.action)!).scenarios.map((s) => s.id));
    expect(ran.flat().sort()).toEqual(['alpha', 'beta', 'gamma']);
    expect(ours(world.gh, 2)).toHaveLength(0); // shards never comment
    const [merge] = await runJob(world, 'docs/workflows/perf-sharded.yml', 'merge', {
      workspace: checkout(head),
      event: pullRequestEvent(),
      eventName: 'pull_request',
      needs: { shard: { result: 'success', outputs: {} } },
    });
    expect(merge.result, log(merge)).toBe('success');
    const report = reportOf(step(merge, 'gate'));
    expect(report.scenarios.map((s) => s.id).sort()).toEqual(['alpha', 'beta', 'gamma']);
    expect(report.decidedBy).toMatch(/^same-run A\/B against baseline: .*merged from 3 shards$/);
    expect(report.comparisons.filter((c) => c.gating).every((c) => c.paired)).toBe(true);
    const [comment] = ours(world.gh, 2);
    for (const id of ['alpha', 'beta', 'gamma']) expect(comment.body).toMatch(new RegExp(`^\\| ${id} vs baseline: rabbitmq-perf-gate/rabbitmq:3\\.10\\.8 \\| consumed \\|`, 'm'));
    expect(uploaded(world.artifacts, 'rabbitmq-perf-gate-report')).toContain('report.json');
  }, 900_000);
});

describe("perf-dispatch.yml: two images from the run form, A/B'd in one job", () => {
  let world: World;
  beforeAll(async () => {
    world = await newWorld();
  });
  afterEach(() => {
    expect(world.gh.violations).toEqual([]);
  });
  afterAll(async () => {
    await world.gh.close();
  });

  it("the form's defaults: the upgrade against the release; a measurement, no comment", async () => {
    const from = world.gh.requests.length;
    const [job] = await runJob(world, 'docs/workflows/perf-dispatch.yml', 'perf', { workspace: checkout(plainRepo()), event: wfDispatch(), eventName: 'workflow_dispatch' });
    expect(job.result, log(job)).toBe('success');
    const gate = step(job, 'gate');
    expect(gate.inputs).toMatchObject({ 'broker-image': NEW, 'baseline-image': OLD, comment: 'never', 'fail-on-regression': 'false' });
    const report = reportOf(gate);
    expect(target(report, 'candidate').rabbitmqVersion).toBe('4.0.5');
    expect(target(report, 'baseline').rabbitmqVersion).toBe('3.10.8');
    expect(report.decidedBy).toMatch(/^same-run A\/B against baseline/);
    expect(writes(world.gh, from)).toEqual([]);
    expect(gate.action!.summary).toContain('| Scenario | Metric |');
    expect(uploaded(world.artifacts, 'rabbitmq-perf-gate-report-1234')).toContain('report.json');
    noContainers(gate);
  }, 400_000);
});

describe('perf-stored.yml (second choice): a services: broker against stored trials', () => {
  let world: World;
  beforeAll(async () => {
    world = await newWorld();
  });
  afterEach(() => {
    expect(world.gh.violations).toEqual([]);
  });
  afterAll(async () => {
    await world.gh.close();
  });

  it('the scheduled refresh, then a pull request compared with the stored trials (which record no broker)', async () => {
    const { rabbitmq_version: version } = (await (
      await fetch(new URL('/api/overview', MANAGEMENT_URL.replace(/\/\/[^@]*@/, '//')), { headers: { authorization: `Basic ${Buffer.from('guest:guest').toString('base64')}` } })
    ).json()) as { rabbitmq_version: string };
    const ws = checkout(plainRepo());
    const jobs = await runJob(world, 'docs/workflows/perf-stored.yml', 'refresh', { workspace: ws, event: scheduleEvent(), eventName: 'schedule' });
    expect(jobs[0].result, log(jobs[0])).toBe('success');
    expect((await runJob(world, 'docs/workflows/perf-stored.yml', 'perf', { workspace: ws, event: scheduleEvent(), eventName: 'schedule' }))[0].result).toBe('skipped');
    const baseline = readFileSync(join(ws, BASELINE), 'utf8');
    expect(JSON.parse(baseline).anchor).toBeUndefined();
    expect(world.gh.state.pulls(REPO).some((p) => p.headRef === 'rabbitmq-perf-gate/baseline-refresh')).toBe(true);

    const base = world.gh.state.writeFiles(REPO, 'main', { [BASELINE]: baseline }, 'Merge the baseline refresh');
    const repo = new GitRepo();
    const headSha = repo.commit({ [BASELINE]: baseline, 'src/app.txt': 'a change\n' });
    const event = pullRequestEvent();
    event.pull_request.base.sha = base;
    event.pull_request.head.sha = headSha;
    const [job] = await runJob({ ...world, size: ONE }, 'docs/workflows/perf-stored.yml', 'perf', { workspace: checkout(repo), event, eventName: 'pull_request' });
    expect(job.result, log(job)).toBe('success');
    const gate = step(job, 'gate');
    expect(gate.inputs).toMatchObject({ 'broker-url': 'amqp://guest:guest@localhost:5672', 'management-url': 'http://localhost:15672' });
    const report = reportOf(gate);
    expect(report.targets[0].rabbitmqVersion).toBe(version); // the machine's broker played the service
    const gating = report.comparisons.filter((c) => c.gating);
    expect(gating.length).toBeGreaterThan(0); // one per stored gating metric, whatever the one trial gave
    expect(gating.every((c) => c.against === 'stored' && !c.paired)).toBe(true);
    expect(report.decidedBy).toMatch(/stored baseline/);
    expect(ours(world.gh, 2)).toHaveLength(1);
  }, 400_000);
});

function wfDispatch(): any {
  const wd = (examples as any[]).find((e) => e.name === 'workflow_dispatch');
  return structuredClone(wd.examples[0]);
}
