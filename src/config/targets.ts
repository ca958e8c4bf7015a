// Base vs head: reads the target file (and every file it references) as the pull request's base
// commit and head commit describe it, and decides what to run. Different digests → a same-run
// A/B of base against head; identical → the head alone against the stored baseline.
import type { DockerTargetSpec } from '../schema/types';
import { lineDiff } from './diff';
import type { FileSource } from './file-source';
import { loadTarget } from './target-file';

export interface TargetPlan {
  candidate: DockerTargetSpec;
  /** Present when base and head describe different brokers. */
  reference?: DockerTargetSpec;
  /** One sentence for the log and the report: what is compared with what, and why. */
  note: string;
  /** Line diff of the two descriptions (target file + referenced files), when they differ. */
  diff?: string;
}

export async function baseVsHead(base: FileSource, head: FileSource, path: string): Promise<TargetPlan> {
  const h = await loadTarget(head, path, 'head');
  if (!(await base.read(path))) {
    return { candidate: h.spec, note: `the base (${base.name}) has no ${path}: the head's broker is compared with the stored baseline only` };
  }
  const b = await loadTarget(base, path, 'base');
  const read = `read from ${b.source} (base) and ${h.source} (head)`;
  if (b.digest === h.digest) {
    return { candidate: h.spec, note: `base and head describe the same broker (${h.digest.slice(0, 19)}…, ${read}): compared with the stored baseline only` };
  }
  return {
    candidate: { ...h.spec, label: `head: ${h.spec.label}` },
    reference: { ...b.spec, label: `base: ${b.spec.label}` },
    note: `base and head describe different brokers (${b.digest.slice(0, 19)}… → ${h.digest.slice(0, 19)}…, ${read}): same-run A/B`,
    diff: lineDiff(b.text, h.text),
  };
}

/** Two named targets (workflow_dispatch): any two target files or refs. */
export async function namedPair(candidate: { source: FileSource; path: string }, reference?: { source: FileSource; path: string }): Promise<TargetPlan> {
  const c = await loadTarget(candidate.source, candidate.path, 'candidate');
  if (!reference) return { candidate: c.spec, note: `${candidate.path} (${c.source}) against the stored baseline` };
  const r = await loadTarget(reference.source, reference.path, 'reference');
  return {
    candidate: c.spec,
    reference: r.spec,
    note: `${candidate.path} (${c.source}) against ${reference.path} (${r.source})${c.digest === r.digest ? ' — identical descriptions: an A/A run' : ''}`,
    diff: c.digest === r.digest ? undefined : lineDiff(r.text, c.text),
  };
}
