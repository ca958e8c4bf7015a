// Fault table (docs/reliability.md), the bundled action against bad input and a broken
// environment: each case ends with exactly one `::error` annotation (or the documented notice /
// warning), no stack trace, secrets masked, the stored baseline byte-for-byte untouched, the right
// verdict (inconclusive when data is missing) and no container left behind. Runs that measure use
// the shared broker briefly (1 trial of 1 s); faults that need a broker of their own are in
// faults-broker.test.ts and faults-hang.test.ts.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGitHubServer, type GitHubServer } from '../support/github-server';
import { runAction, newWorkspace, type ActionRun } from '../support/action-runner';
import { AMQP_URL, MANAGEMENT_URL } from '../support/broker';

const TOKEN = 'ghs_perfgatefaultstoken';
const REPO = 'Codertocat/Hello-World';
const BASELINE = '.github/rabbitmq-perf/baseline.json';
const quick = { scenarios: 'smoke', repetitions: '1', duration: '1', warmup: '0', 'broker-url': AMQP_URL, 'management-url': MANAGEMENT_URL, comment: 'never' };

let gh: GitHubServer;
beforeAll(async () => {
  gh = await startGitHubServer({ token: TOKEN, repo: REPO });
  gh.state.addPull(REPO, { head: 'changes', number: 2 });
});
afterEach(() => {
  // After each test, so a request or response outside the OpenAPI spec fails the test that made it.
  expect(gh.violations).toEqual([]);
});
afterAll(async () => {
  await gh.close();
});

const errorsOf = (r: ActionRun) => r.stdout.split('\n').filter((l) => l.startsWith('::error'));
const noStack = (r: ActionRun) => expect(r.stdout + r.stderr).not.toMatch(/\n\s+at .+[(\s].*:\d+:\d+\)?/);

/** Exactly one error annotation matching `re`, exit 1, no stack trace. */
function oneError(r: ActionRun, re: RegExp): string {
  const errors = errorsOf(r);
  expect(errors, r.stdout + r.stderr).toHaveLength(1);
  expect(errors[0]).toMatch(re);
  expect(r.code, r.stdout + r.stderr).toBe(1);
  noStack(r);
  return errors[0];
}

/** Containers of the run whose id the action saved for its post step (none expected). */
function containersOf(r: ActionRun): string[] {
  const runId = /::save-state name=run-id::(\S+)/.exec(r.stdout)?.[1];
  if (!runId) return [];
  return execFileSync('docker', ['ps', '-aq', '--filter', `label=rabbitmq-perf-gate.run=${runId}`], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
}

describe('bad input: one ::error naming the input or file:line, before any broker is touched', () => {
  it('malformed YAML in a scenario file of the repository', async () => {
    const ws = newWorkspace();
    mkdirSync(join(ws, 'perf'));
    writeFileSync(join(ws, 'perf/bad.yml'), 'id: bad\ndescription: d\norigin: { source: s, command: c }\nwarmup: 1\n  duration: 3\n');
    const r = await runAction({ workspace: ws, inputs: { ...quick, scenarios: 'perf/bad.yml' } });
    oneError(r, /^::error title=rabbitmq-perf-gate,file=perf\/bad\.yml,line=4::perf\/bad\.yml:4: malformed YAML: .*Fix: fix the YAML syntax/);
  });

  it('an unknown field and an unknown PerfTest flag in a scenario file', async () => {
    const ws = newWorkspace();
    writeFileSync(join(ws, 'a.yml'), 'id: a\ndescription: d\norigin: { source: s, command: c }\ndurration: 3\n');
    oneError(await runAction({ workspace: ws, inputs: { ...quick, scenarios: 'a.yml' } }), /file=a\.yml,line=4::.*durration: unknown field "durration"/);
    writeFileSync(join(ws, 'b.yml'), 'id: b\ndescription: d\norigin: { source: s, command: c }\nperf-test: -x 1 --bogus 2\n');
    oneError(await runAction({ workspace: ws, inputs: { ...quick, scenarios: 'b.yml' } }), /file=b\.yml,line=4::.*perf-test: unknown PerfTest flag "--bogus"/);
  });

  // Refused before any broker is touched: these runs can go side by side.
  it.concurrent.each([
    ['repetitions', '0', /input repetitions is "0".*Fix: use a whole number of at least 1/],
    ['repetitions', 'five', /input repetitions is "five"/],
    ['duration', '-1', /input duration is "-1".*Fix: use a number of at least 1/],
    ['time-limit', '-5', /input time-limit is "-5".*Fix: use a number of at least 0/],
    ['time-limit', 'an hour', /input time-limit is "an hour"/],
    ['mode', 'chek', /input mode is "chek".*Fix: use one of: check, refresh, comment, merge/],
    ['broker-url', 'http://localhost:5672', /input broker-url has protocol http:.*Fix: use amqp: or amqps:/],
  ])('input %s: %s', async (input, value, re) => {
    oneError(await runAction({ inputs: { ...quick, [input]: value } }), re);
  });
});

describe('the broker cannot be reached: one ::error, password masked', () => {
  it('wrong credentials', async () => {
    const r = await runAction({ inputs: { ...quick, 'broker-url': 'amqp://guest:wrong-s3cret-pw@127.0.0.1:5672' } });
    oneError(r, /cannot connect to the broker at amqp:\/\/guest:\*\*\*@127\.0\.0\.1:5672: wrong user name or password/);
    expect(r.stdout).toContain('::add-mask::wrong-s3cret-pw');
    expect(r.stdout.replace(/^::add-mask::.*$/m, '') + r.stderr).not.toContain('wrong-s3cret-pw');
  });

  it('TLS mismatch: amqps:// to the plain AMQP port', async () => {
    const r = await runAction({ inputs: { ...quick, 'broker-url': 'amqps://guest:guest@127.0.0.1:5672' } });
    oneError(
      r,
      /cannot connect to the broker at amqps:\/\/guest:\*\*\*@127\.0\.0\.1:5672: TLS handshake failed \(ERR_SSL_WRONG_VERSION_NUMBER\).*Fix: amqps:\/\/ needs the broker's TLS listener \(usually port 5671\)/,
    );
  });

  it('management API missing (wrong port)', async () => {
    const r = await runAction({ inputs: { ...quick, 'management-url': 'http://127.0.0.1:2' } });
    oneError(r, /management-url: management API at http:\/\/127\.0\.0\.1:2 is unreachable \(ECONNREFUSED\).*Fix: enable the rabbitmq_management plugin/);
    expect(r.stdout).not.toContain('guest:guest@');
  });
});

describe('broker containers that cannot start: one ::error, no container left', () => {
  it('image missing', async () => {
    const r = await runAction({ inputs: { ...quick, 'broker-image': '127.0.0.1:1/rabbitmq-perf-gate/missing:0' } });
    oneError(r, /image: image 127\.0\.0\.1:1\/rabbitmq-perf-gate\/missing:0 not found locally and could not be pulled.*Fix: build it/);
    expect(containersOf(r)).toEqual([]);
  });

  it('docker absent', async () => {
    const r = await runAction({ inputs: { ...quick, 'broker-image': 'rabbitmq-perf-gate/rabbitmq:3.10.8' }, env: { PATH: '/nonexistent' } });
    oneError(r, /image: the docker CLI was not found on PATH.*Fix: install Docker on the runner/);
  });

  it('a config file that keeps the broker from booting: the container log in a group, no container left', async () => {
    const ws = newWorkspace();
    writeFileSync(join(ws, 'rabbitmq.conf'), 'listeners.tcp.default = = 5672 ]]\nthis is not a setting\n');
    const r = await runAction({ workspace: ws, inputs: { ...quick, 'broker-image': 'rabbitmq-perf-gate/rabbitmq:3.10.8', 'broker-config': 'rabbitmq.conf' } });
    oneError(
      r,
      /image: container rabbitmq-perf-gate-candidate-\w+-1 \(rabbitmq-perf-gate\/rabbitmq:3\.10\.8\) exited with code \d+ while RabbitMQ was booting: Syntax error in \/etc\/rabbitmq\/rabbitmq\.conf.*Fix: see the container log/,
    );
    expect(r.stdout).toMatch(/::group::Last log lines of rabbitmq-perf-gate\/rabbitmq:3\.10\.8\n[\s\S]*BOOT FAILED/);
    expect(containersOf(r)).toEqual([]);
  }, 180_000);
});

describe('stored baselines: the verdict is inconclusive, the file untouched', () => {
  const withBaseline = (text: string | undefined) => {
    const ws = newWorkspace();
    if (text !== undefined) {
      mkdirSync(join(ws, '.github/rabbitmq-perf'), { recursive: true });
      writeFileSync(join(ws, BASELINE), text);
    }
    return ws;
  };

  it('missing: a notice (a first run is normal), verdict inconclusive, exit 0, no file created', async () => {
    const ws = withBaseline(undefined);
    const r = await runAction({ workspace: ws, inputs: quick });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/::notice::No stored baseline at .*baseline\.json: nothing to compare with until a refresh writes one/);
    expect(errorsOf(r)).toEqual([]);
    expect(r.outputs.verdict).toBe('inconclusive');
    expect(existsSync(join(ws, BASELINE))).toBe(false);
  });

  it.each([
    ['empty', '', /the baseline file is empty/],
    ['from an older schema', JSON.stringify({ schemaVersion: 0, scenarios: {}, fingerprint: {} }), /schema version 0, which can no longer be migrated/],
    ['from a newer schema', JSON.stringify({ schemaVersion: 99, scenarios: {}, fingerprint: {} }), /schema version 99, newer than this version of rabbitmq-perf-gate understands \(1\)/],
  ])('%s: one ::error at the file, the run goes on, inconclusive, file untouched', async (_what, text, re) => {
    const ws = withBaseline(text);
    const r = await runAction({ workspace: ws, inputs: quick });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const errors = errorsOf(r);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^::error title=rabbitmq-perf-gate,file=\.github\/rabbitmq-perf\/baseline\.json::/);
    expect(errors[0]).toMatch(re);
    expect(r.outputs.verdict).toBe('inconclusive');
    expect(readFileSync(join(ws, BASELINE), 'utf8')).toBe(text);
    noStack(r);
  });
});

describe('GitHub token', () => {
  it('missing: a warning, the comment skipped, verdict and exit status stand', async () => {
    const before = gh.requests.length;
    const r = await runAction({ apiUrl: gh.url, inputs: { ...quick, comment: 'always', 'github-token': '' } });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/::warning title=rabbitmq-perf-gate::No github-token: the pull-request comment was skipped\./);
    expect(errorsOf(r)).toEqual([]);
    expect(r.outputs.verdict).toBe('inconclusive');
    expect(gh.requests.length).toBe(before);
  });
});

describe('hostile text in scenario metadata, labels and broker messages', () => {
  it('is escaped in the job summary, summary.md, report.html and the PR comment', async () => {
    const ws = newWorkspace();
    const evil = '<img src=x onerror=alert(1)> @octo-org/admins [x](javascript:alert(1)) | `code` <!-- -->';
    // A queue argument the broker refuses: its error echoes the (hostile) queue name back.
    writeFileSync(
      join(ws, 'evil.yml'),
      [
        'id: evil.scenario',
        `description: ${JSON.stringify(evil)}`,
        `origin: { source: ${JSON.stringify(evil)}, command: ${JSON.stringify(evil)} }`,
        `perf-test: -x 1 -y 1 -u '<script>alert(1)</script>@Codertocat' -qa x-max-length=nope`,
        'gate: [consumed_rate]',
        '',
      ].join('\n'),
    );
    const r = await runAction({
      workspace: ws,
      apiUrl: gh.url,
      inputs: { ...quick, scenarios: 'evil.yml', comment: 'always', 'github-token': TOKEN, 'broker-label': `<script>alert(2)</script> @Codertocat ${evil}` },
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const report = JSON.parse(readFileSync(r.outputs.report, 'utf8'));
    expect(report.trials[0].invalidReason).toContain('<script>alert(1)</script>@Codertocat'); // the raw data is kept in JSON
    const comment = gh.state.comments(REPO, 2).find((c) => c.user.login === 'github-actions[bot]')!.body;
    const dir = join(ws, 'rabbitmq-perf-gate-report');
    for (const [where, text] of [
      ['job summary', r.summary],
      ['summary.md', readFileSync(join(dir, 'summary.md'), 'utf8')],
      ['comment', comment],
    ]) {
      expect(text, where).not.toMatch(/<script|<img|\]\(javascript|@(Codertocat|octo-org)\b/);
      expect(text, where).toContain('&lt;script&gt;');
    }
    expect(comment.split('<!--').length).toBe(2); // only our marker opens a comment
    const html = readFileSync(join(dir, 'report.html'), 'utf8');
    expect(html).not.toMatch(/<script>alert|<img src=x/);
  });
});

describe('disk full when writing results (a tiny tmpfs, mounted here as root)', () => {
  const mounts: string[] = [];
  /** A 64 kB tmpfs, or undefined when this user cannot mount. */
  function tinyDisk(): string | undefined {
    const dir = mkdtempSync(join(tmpdir(), 'perf-gate-full-'));
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { stdio: 'ignore' });
    } catch {
      rmSync(dir, { recursive: true, force: true });
      return undefined;
    }
    mounts.push(dir);
    return dir;
  }
  /** Fills the rest of the disk: every later write fails with ENOSPC. */
  function fill(dir: string): void {
    try {
      writeFileSync(join(dir, 'filler'), Buffer.alloc(256 * 1024));
    } catch (e) {
      expect((e as NodeJS.ErrnoException).code).toBe('ENOSPC');
      return;
    }
    throw new Error('the tmpfs did not fill up');
  }
  /** Probed at once (mount, then unmount): hooks do not run when a -t filter skips this block. */
  const canMount =
    process.getuid?.() === 0 &&
    (() => {
      const dir = mkdtempSync(join(tmpdir(), 'perf-gate-full-'));
      try {
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { stdio: 'ignore' });
        execFileSync('umount', [dir], { stdio: 'ignore' });
        return true;
      } catch {
        return false;
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    })();
  afterAll(() => {
    for (const d of mounts) {
      try {
        execFileSync('umount', [d], { stdio: 'ignore' });
      } catch {
        execFileSync('umount', ['-l', d], { stdio: 'ignore' });
      }
      rmSync(d, { recursive: true, force: true });
    }
  });

  it.skipIf(!canMount)('report-dir full: one ::error (ENOSPC), the job summary still has the results, the step fails', async () => {
    const dir = tinyDisk()!;
    mkdirSync(join(dir, 'report'));
    fill(dir);
    const r = await runAction({ inputs: { ...quick, 'report-dir': join(dir, 'report') } });
    oneError(r, /report files: cannot write .*report\.json \(ENOSPC\); the previous file is untouched; the results are still in the job summary.*Fix: check free disk space/);
    // No baseline in this run: the summary shows what was measured, and the verdict stays inconclusive.
    expect(r.summary).toMatch(/^## 📏 rabbitmq-perf-gate: measured, nothing to compare with yet/);
    expect(r.summary).toContain('### Measured');
    expect(r.summary).toContain('**Targets:** **broker**: RabbitMQ');
    expect(r.outputs.verdict).toBe('inconclusive');
    expect(readdirSync(join(dir, 'report'))).toEqual([]);
  });

  it.skipIf(!canMount)('refresh with the baseline on a full disk: one ::error, the old baseline byte-for-byte intact', async () => {
    const dir = tinyDisk()!;
    const old = JSON.stringify({ schemaVersion: 1, scenarios: {}, fingerprint: {}, history: [] });
    writeFileSync(join(dir, 'baseline.json'), old);
    fill(dir);
    const r = await runAction({ inputs: { ...quick, mode: 'refresh', 'baseline-file': join(dir, 'baseline.json') } });
    oneError(r, /cannot write .*baseline\.json \(ENOSPC\); the previous file is untouched.*Fix: check free disk space/);
    expect(readFileSync(join(dir, 'baseline.json'), 'utf8')).toBe(old);
    expect(readdirSync(dir).sort()).toEqual(['baseline.json', 'filler']);
  });
});
