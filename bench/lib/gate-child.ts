// Bench child: runs ONE trial of our load generator (src/workload/engine.ts runWorkload, exactly
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
import { runWorkload } from '../../src/workload/engine';

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
  id: values.id ?? 'bench', description: 'bench', origin: { source: 'bench', command: flags },
  workload: w, warmupSeconds: Number(values.warmup ?? 3), durationSeconds: Number(values.seconds ?? 10),
  gate: [], tolerances: {}, file: 'bench', lines: {},
};

// process.stdout is created lazily (and costs ~100 ms of CPU the first time): create it now,
// outside the measured window.
const stdout = process.stdout;
const out = (o: unknown) => stdout.write(JSON.stringify(o) + '\n');
out({ event: 'ready', pid: process.pid });
subscribe(WINDOW_CHANNEL, (m) => out({ event: 'window', phase: (m as { phase: string }).phase, t: Date.now() }));

const r = await runWorkload(spec, values.url!);
out({ event: 'result', ...r, rssBytes: process.memoryUsage.rss() });
process.exit(0);
