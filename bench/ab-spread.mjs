#!/usr/bin/env node
// Runs bench/ab-spread.ts (bundled from source): A/A spread with both brokers up vs started in
// turn, and a real A/B (3.10.8 vs 4.0.5), on the offline images with host networking.
//   node_modules/.bin/node bench/ab-spread.mjs [--pairs 6] [--seconds 4] [--warmup 1] [--modes aa-both-up,aa-in-turn,ab-both-up]
import { bundle, run } from './lib/common.mjs';

const child = await bundle('bench/ab-spread.ts');
const { done } = run(process.execPath, [child, ...process.argv.slice(2)], { onLine: (l) => console.log(l), onErrLine: (l) => console.error(l) });
const code = await done;
process.exitCode = typeof code === 'number' ? code : 1;
