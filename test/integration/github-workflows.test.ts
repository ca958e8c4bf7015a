// The shipped workflow files (docs/workflows/*.yml and the repository's own .github/workflows/)
// are valid YAML, use only inputs and modes action.yml declares, hand the fork's artifact from
// the pull_request run to the workflow_run step under one name, and never give the fork's code a
// write token (the workflow_run job checks out the default branch only).
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ROOT } from '../support/action-runner';

const action = parse(readFileSync(join(ROOT, 'action.yml'), 'utf8'));
const inputs = new Set(Object.keys(action.inputs));
const files = ['docs/workflows', '.github/workflows'].flatMap((d) => readdirSync(join(ROOT, d)).filter((f) => f.endsWith('.yml')).map((f) => `${d}/${f}`));
const load = (f: string) => parse(readFileSync(join(ROOT, f), 'utf8'));
const steps = (wf: any) => Object.values(wf.jobs as Record<string, any>).flatMap((j) => j.steps ?? []);
const ours = (s: any) => s.uses === './' || /^rabbitmq-perf-gate\/rabbitmq-perf-gate@/.test(s.uses ?? '');

describe('shipped workflows', () => {
  it('exist: every example and the repository’s own ci, perf and perf-comment', () => {
    expect(files).toEqual(expect.arrayContaining([
      'docs/workflows/perf.yml', 'docs/workflows/perf-comment.yml', 'docs/workflows/perf-dispatch.yml',
      'docs/workflows/perf-refresh.yml', 'docs/workflows/perf-sharded.yml',
      '.github/workflows/ci.yml', '.github/workflows/perf.yml', '.github/workflows/perf-comment.yml',
    ]));
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
    it(`${dir}: the workflow_run step posts the pull_request run's artifact, and never checks out the fork`, () => {
      const pr = load(`${dir}/perf.yml`);
      const comment = load(`${dir}/perf-comment.yml`);
      expect(comment.on.workflow_run.workflows).toEqual([pr.name]);
      const uploaded = steps(pr).find((s: any) => /upload-artifact/.test(s.uses)).with.name;
      const download = steps(comment).find((s: any) => /download-artifact/.test(s.uses));
      expect(download.with.name).toBe(uploaded);
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

  it('action.yml descriptions hold no expressions', () => {
    expect(readFileSync(join(ROOT, 'action.yml'), 'utf8')).not.toMatch(/description:.*\$\{\{/);
  });
});
