// `cleanup`: the orphan sweep every run starts with, on its own (src/broker/cleanup.ts): removes
// the broker containers of runs whose process is gone from this host (a SIGKILL, an OOM kill, a
// closed terminal), and lists, without touching them, those of runs still going and those
// without an owner (older versions, other hosts). --json for scripts.
import { describeContainer, sweepOrphans } from '../broker/cleanup';
import type { Values } from './shared';

export async function cleanupCommand(v: Values): Promise<number> {
  const s = await sweepOrphans();
  if (v.json) {
    process.stdout.write(`${JSON.stringify({ removed: s.removed, live: s.live, unknown: s.unknown }, null, 1)}\n`);
    return 0;
  }
  const section = (title: string, cs: typeof s.removed) => (cs.length ? `${title} (${cs.length}):\n${cs.map((c) => `  ${describeContainer(c)}\n`).join('')}` : '');
  const out = [
    s.removed.length ? section('Removed: containers of runs whose process is gone', s.removed) : 'Nothing to remove: no container of an ended run is left.\n',
    section('Left alone: containers of runs still going (they load this machine)', s.live),
    section('Left alone: containers without an owner on this host (older versions or another host; docker rm -f them once no run uses them)', s.unknown),
  ].join('');
  process.stdout.write(out);
  return 0;
}
