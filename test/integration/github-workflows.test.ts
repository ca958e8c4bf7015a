// The shipped workflow files (docs/workflows/*.yml and the repository's own .github/workflows/)
// are valid YAML, use only inputs and modes action.yml declares, hand the fork's artifact from
// the pull_request run to the workflow_run step under one name, and never give the fork's code a
// write token (the workflow_run job checks out the default branch only). The templates lead with
// the strong paths: every measuring step starts its brokers (an image, a target file) unless the
// file says it is the second choice and what that can detect; docs/workflows.md lists each file.
// The dependency update configuration covers npm and the workflows' actions.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ROOT } from '../support/action-runner';

const action = parse(readFileSync(join(ROOT, 'action.yml'), 'utf8'));
const inputs = new Set(Object.keys(action.inputs));
const files = ['docs/workflows', '.github/workflows'].flatMap((d) =>
  readdirSync(join(ROOT, d))
    .filter((f) => f.endsWith('.yml'))
    .map((f) => `${d}/${f}`),
);
const load = (f: string) => parse(readFileSync(join(ROOT, f), 'utf8'));
const steps = (wf: any) => Object.values(wf.jobs as Record<string, any>).flatMap((j) => j.steps ?? []);
const ours = (s: any) => s.uses === './' || /^rabbitmq-perf-gate\/rabbitmq-perf-gate@/.test(s.uses ?? '');

describe('shipped workflows', () => {
  it('exist: every example and the repository’s own ci, perf and perf-comment', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'docs/workflows/perf.yml',
        'docs/workflows/perf-target.yml',
        'docs/workflows/perf-comment.yml',
        'docs/workflows/perf-dispatch.yml',
        'docs/workflows/perf-refresh.yml',
        'docs/workflows/perf-sharded.yml',
        'docs/workflows/perf-stored.yml',
        '.github/workflows/ci.yml',
        '.github/workflows/perf.yml',
        '.github/workflows/perf-comment.yml',
        '.github/workflows/release.yml',
      ]),
    );
  });

  for (const f of files) {
    it(`${f}: uses only declared inputs and modes`, () => {
      const wf = load(f);
      expect(wf.on ?? wf[true as any]).toBeTruthy();
      for (const s of steps(wf).filter(ours)) {
        for (const k of Object.keys(s.with ?? {})) expect(inputs, `${f}: input ${k}`).toContain(k);
        if (s.with?.mode) expect(['check', 'refresh', 'comment', 'merge', 'bisect', 'nightly']).toContain(s.with.mode);
        if (s.with?.['refresh-commit']) expect(['pr', 'direct', 'none']).toContain(s.with['refresh-commit']);
      }
    });
  }

  for (const dir of ['docs/workflows', '.github/workflows']) {
    it(`${dir}: the workflow_run step posts the pull_request runs' artifact, and never checks out the fork`, () => {
      const comment = load(`${dir}/perf-comment.yml`);
      const download = steps(comment).find((s: any) => /download-artifact/.test(s.uses));
      // Every pull-request workflow of the folder that uploads what the comment step downloads
      // (the alternatives a user picks one of) is one it listens to.
      const prs = files
        .filter((f) => f.startsWith(`${dir}/`))
        .map(load)
        .filter((wf) => wf.on?.pull_request !== undefined && steps(wf).some((s: any) => /upload-artifact/.test(s.uses) && s.with?.name === download.with.name));
      expect(prs.length).toBeGreaterThan(0);
      for (const pr of prs) expect(comment.on.workflow_run.workflows).toContain(pr.name);
      expect(download.with['run-id']).toBe('${{ github.event.workflow_run.id }}');
      const post = steps(comment).find(ours);
      expect(post.with.mode).toBe('comment');
      expect(post.with.report).toBe(`${download.with.path}/report.json`);
      const text = readFileSync(join(ROOT, `${dir}/perf-comment.yml`), 'utf8');
      expect(text).not.toMatch(/workflow_run\.head_(sha|branch)|pull_request\.head/);
      for (const s of steps(comment).filter((s: any) => /checkout/.test(s.uses ?? ''))) expect(s.with?.ref).toBeUndefined();
      expect(steps(comment).some((s: any) => s.run)).toBe(false);
    });
  }

  const templates = files.filter((f) => f.startsWith('docs/workflows/'));
  for (const f of templates) {
    it(`${f}: measures on the strong path, or says it is the second choice and what it can detect`, () => {
      const text = readFileSync(join(ROOT, f), 'utf8');
      const wf = load(f);
      // No strong path left as a commented-out line to uncomment.
      expect(text).not.toMatch(/^\s*#\s*(broker-image|baseline-image|target|baseline-target):/m);
      for (const job of Object.values(wf.jobs as Record<string, any>)) {
        for (const s of (job.steps ?? []).filter(ours).filter((s: any) => ['check', 'refresh'].includes(s.with?.mode ?? 'check'))) {
          if (s.with?.['broker-url'] !== undefined || job.services) {
            expect(text).toMatch(/^# Second choice/m);
            expect(text).toMatch(/−25 %/);
            expect(text).toMatch(/can only warn/);
          } else {
            // The action starts the brokers: an image, a named target file, or the repository's
            // target file (no broker input at all, which the file's header explains).
            expect(s.with?.['broker-image'] || s.with?.target || /target file/.test(text), `${f}: ${JSON.stringify(s.with)}`).toBeTruthy();
          }
        }
      }
    });
  }

  it('docs/workflows.md lists every template, and docs-workflows.test.ts runs each', () => {
    const doc = readFileSync(join(ROOT, 'docs/workflows.md'), 'utf8');
    const run = readFileSync(join(ROOT, 'test/integration/docs-workflows.test.ts'), 'utf8');
    // The bisect and nightly templates are linted and listed; their action modes are run through
    // the bundled action by bisect-action.test.ts and nightly.test.ts, not as whole workflow files
    // (a bisect needs a built image per commit). Every other template runs whole here.
    const elsewhere: Record<string, string> = { 'docs/workflows/perf-bisect.yml': 'bisect-action.test.ts', 'docs/workflows/perf-nightly.yml': 'nightly.test.ts' };
    for (const f of templates) {
      expect(doc).toContain(`](${f.replace('docs/', '')})`);
      if (elsewhere[f]) expect(readFileSync(join(ROOT, 'test/integration', elsewhere[f]), 'utf8')).toMatch(/mode/);
      else expect(run).toContain(`'${f}'`);
    }
  });

  it(".github/dependabot.yml: weekly updates of the npm packages and of the workflows' actions", () => {
    const d = parse(readFileSync(join(ROOT, '.github/dependabot.yml'), 'utf8'));
    expect(d.version).toBe(2);
    const by = Object.fromEntries(d.updates.map((u: any) => [u['package-ecosystem'], u]));
    expect(Object.keys(by).sort()).toEqual(['github-actions', 'npm']);
    for (const u of d.updates) {
      expect(u.directory).toBe('/');
      expect(['daily', 'weekly', 'monthly']).toContain(u.schedule.interval);
      expect(Object.keys(u).every((k) => ['package-ecosystem', 'directory', 'schedule', 'groups', 'ignore', 'labels', 'commit-message', 'open-pull-requests-limit'].includes(k))).toBe(true);
    }
    // The runtime of a node24 action stays Node 24: no major update of the node package.
    expect(by.npm.ignore).toContainEqual({ 'dependency-name': 'node', 'update-types': ['version-update:semver-major'] });
    expect(readFileSync(join(ROOT, 'action.yml'), 'utf8')).toMatch(/using: node24/);
  });

  it('release.yml: from the run form on the default branch, scripts/release.mjs tags, the notes become the release, npm gets the tag', () => {
    const wf = load('.github/workflows/release.yml');
    expect(Object.keys(wf.on)).toEqual(['workflow_dispatch']);
    expect(wf.on.workflow_dispatch.inputs.version.required).toBe(true);
    expect(wf.jobs.release.if).toBe('github.ref_name == github.event.repository.default_branch');
    expect(wf.jobs.release.permissions).toEqual({ contents: 'write' });
    const runs = wf.jobs.release.steps
      .filter((s: any) => s.run)
      .map((s: any) => s.run)
      .join('\n');
    expect(runs).toContain('node scripts/release.mjs "$VERSION" --notes-file "$RUNNER_TEMP/notes.md"');
    expect(runs).toMatch(/gh release create "v\$\{VERSION#v\}" --verify-tag .*--notes-file "\$RUNNER_TEMP\/notes\.md"/);
    expect(wf.jobs.release.steps.find((s: any) => /checkout/.test(s.uses)).with['fetch-depth']).toBe(0);
    expect(wf.jobs.npm.needs).toBe('release');
    expect(wf.jobs.npm.permissions).toEqual({ contents: 'read', 'id-token': 'write' });
    expect(wf.jobs.npm.steps.find((s: any) => /checkout/.test(s.uses)).with.ref).toBe('${{ needs.release.outputs.tag }}');
    expect(readFileSync(join(ROOT, 'scripts/release.mjs'), 'utf8')).toContain("default: 'npm run -s bundle'");
  });

  it('action.yml descriptions hold no expressions', () => {
    expect(readFileSync(join(ROOT, 'action.yml'), 'utf8')).not.toMatch(/description:.*\$\{\{/);
  });
});
