// Folded stacks from `perf script` of a RabbitMQ node, and their difference between two targets:
// the RabbitMQ team's method (a node started with `+JPperf true`, `perf record -g` on its beam
// process) reduced to data. Scheduler threads are merged (1_scheduler, 2_scheduler → scheduler),
// frames run from the thread down to the sampled function, and a differential flame graph
// compares each stack's share of its own target's samples.
import type { FlameGraph, Folded } from '../schema/types';

export type { FlameGraph, Folded };

/** "1_scheduler" → "scheduler", "erts_sched_2" → "erts_sched", "2_dirty_cpu_sch" → "dirty_cpu_sch". */
export function threadKind(comm: string): string {
  return comm.replace(/^\d+_/, '').replace(/_\d+$/, '') || comm;
}

/** Frames may not contain the separator. */
const frame = (sym: string) => sym.replace(/;/g, ':').trim() || '[unknown]';

/**
 * Folds `perf script -F comm,tid,ip,sym` output: one sample per block (a header line, then frames
 * leaf first). Repeated [unknown] frames collapse into one; the `keep` most frequent stacks stay
 * and the rest are summed into "<thread>;[other stacks]" so a report stays small.
 */
export function foldPerfScript(text: string, keep = 3000): Folded {
  const out: Folded = {};
  let thread: string | undefined;
  let frames: string[] = [];
  const flush = () => {
    if (thread !== undefined) {
      const stack = [thread, ...frames.reverse()].filter((f, i, a) => !(f === '[unknown]' && a[i - 1] === '[unknown]')).join(';');
      out[stack] = (out[stack] ?? 0) + 1;
    }
    thread = undefined;
    frames = [];
  };
  for (const line of text.split('\n')) {
    if (!line.trim()) {
      flush();
      continue;
    }
    if (!/^\s/.test(line)) {
      flush();
      thread = threadKind(line.trim().split(/\s+/)[0]);
      continue;
    }
    const m = /^\s+[0-9a-f]+\s+(.*)$/.exec(line);
    if (m && thread !== undefined) frames.push(frame(m[1].replace(/\+0x[0-9a-f]+$/, '')));
  }
  flush();
  return trimFolded(out, keep);
}

function trimFolded(f: Folded, keep: number): Folded {
  const entries = Object.entries(f).sort((a, b) => b[1] - a[1]);
  if (entries.length <= keep) return f;
  const out: Folded = Object.fromEntries(entries.slice(0, keep));
  for (const [stack, n] of entries.slice(keep)) {
    const rest = `${stack.split(';')[0]};[other stacks]`;
    out[rest] = (out[rest] ?? 0) + n;
  }
  return out;
}

export const total = (f: Folded): number => Object.values(f).reduce((a, b) => a + b, 0);

/** A node of the merged call tree: its inclusive samples in each target. */
export interface FlameNode {
  name: string;
  candidate: number;
  baseline: number;
  children: FlameNode[];
}

/** The merged call tree of two folded profiles (children sorted by name, as flame graphs are). */
export function flameTree(candidate: Folded, baseline: Folded): FlameNode {
  const root: FlameNode = { name: 'all', candidate: 0, baseline: 0, children: [] };
  const add = (f: Folded, side: 'candidate' | 'baseline') => {
    for (const [stack, n] of Object.entries(f)) {
      let node = root;
      node[side] += n;
      for (const name of stack.split(';')) {
        let child = node.children.find((c) => c.name === name);
        if (!child) node.children.push((child = { name, candidate: 0, baseline: 0, children: [] }));
        child[side] += n;
        node = child;
      }
    }
  };
  add(candidate, 'candidate');
  add(baseline, 'baseline');
  const sort = (n: FlameNode) => {
    n.children.sort((a, b) => (a.name < b.name ? -1 : 1));
    n.children.forEach(sort);
  };
  sort(root);
  return root;
}

/** The frames whose share of the samples grew (or shrank) most, inclusive: for a text summary. */
export function topShifts(candidate: Folded, baseline: Folded, max = 5): Array<{ frame: string; candidateShare: number; baselineShare: number }> {
  const [tc, tb] = [total(candidate), total(baseline)];
  if (!tc || !tb) return [];
  const inc = (f: Folded) => {
    const m = new Map<string, number>();
    for (const [stack, n] of Object.entries(f)) for (const fr of new Set(stack.split(';').slice(1))) m.set(fr, (m.get(fr) ?? 0) + n);
    return m;
  };
  const [c, b] = [inc(candidate), inc(baseline)];
  return [...new Set([...c.keys(), ...b.keys()])]
    .filter((fr) => fr !== '[unknown]')
    .map((fr) => ({ frame: fr, candidateShare: (c.get(fr) ?? 0) / tc, baselineShare: (b.get(fr) ?? 0) / tb }))
    .sort((x, y) => Math.abs(y.candidateShare - y.baselineShare) - Math.abs(x.candidateShare - x.baselineShare))
    .slice(0, max);
}
