// Bench child: runs ONE trial of our load generator (src/workload/scenario.ts runWorkload, exactly
// what the action runs) with PerfTest flags, in its own process so the parent can read this
// process's /proc/<pid>/stat. Bundled on the fly by bench/lib/common.mjs (esbuild).
//
//   node gate-child.mjs --url AMQP_URL --warmup S --seconds S -- <PerfTest flags>
//
// stdout, one JSON object per line:
//   {"event":"window","phase":"start"|"end","t":<epoch ms>}   (the engine's measured window edges)
//   {"event":"result", ...WorkloadResult}
import { subscribe } from 'node:diagnostics_channel';
import { parseArgs } from 'node:util';
import { applyPerfTestArgs, perfTestDefaults } from '../../src/config/perftest-args';
import { WINDOW_CHANNEL } from '../../src/metrics/selfload';
import type { ScenarioSpec } from '../../src/schema/types';
import { runWorkload } from '../../src/workload/scenario';

const sep = process.argv.indexOf('--');
const own = sep >= 0 ? process.argv.slice(2, sep) : process.argv.slice(2);
const flags = sep >= 0 ? process.argv.slice(sep + 1).join(' ') : '';
const { values } = parseArgs({
  args: own,
  options: { url: { type: 'string' }, warmup: { type: 'string' }, seconds: { type: 'string' }, id: { type: 'string' } },
});

const w = perfTestDefaults(values.id ?? 'bench');
applyPerfTestArgs(w, flags, { file: 'bench' });
const spec: ScenarioSpec = {
  id: values.id ?? 'bench',
  kind: 'messaging',
  description: 'bench',
  origin: { source: 'bench', command: flags },
  workload: w,
  warmupSeconds: Number(values.warmup ?? 3),
  durationSeconds: Number(values.seconds ?? 10),
  gate: [],
  tolerances: {},
  file: 'bench',
  lines: {},
};

// process.stdout is created lazily (and costs ~100 ms of CPU the first time): create it now,
// outside the measured window.
const stdout = process.stdout;
const out = (o: unknown) => stdout.write(JSON.stringify(o) + '\n');
out({ event: 'ready', pid: process.pid });
// Event-loop utilisation over the same window (the main loop: the engine runs on it).
let elu: ReturnType<typeof performance.eventLoopUtilization> | undefined;
subscribe(WINDOW_CHANNEL, (m) => {
  const phase = (m as { phase: string }).phase;
  if (phase === 'start') elu = performance.eventLoopUtilization();
  const utilization = phase === 'end' && elu ? performance.eventLoopUtilization(elu).utilization : undefined;
  out({ event: 'window', phase, t: Date.now(), utilization });
});

const r = await runWorkload(spec, values.url!);
const mem = process.memoryUsage();
out({ event: 'result', ...r, rssBytes: mem.rss, memory: mem });
process.exit(0);
