#!/usr/bin/env node
// Runs bench/changepoint.ts (bundled from source): detection and false alarms of the nightly
// change-point search on synthetic, resampled-real and recorded series (no brokers).
//   node_modules/.bin/node bench/changepoint.mjs [--cases 200] [--nights 30] [--aa-nights 200] [--aa-histories 20] [--seed 34]
//        [--recorded a.json,b.json] [--history bench/results/nightly-history/nightly-history-2026-11-27.json --truth 31]
import { bundle, run } from './lib/common.mjs';

const child = await bundle('bench/changepoint.ts');
const { done } = run(process.execPath, [child, ...process.argv.slice(2)], { onLine: (l) => console.log(l), onErrLine: (l) => console.error(l) });
const code = await done;
process.exitCode = typeof code === 'number' ? code : 1;
