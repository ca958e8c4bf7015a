#!/usr/bin/env node
// Runs bench/sequential.ts (bundled from source): time to verdict and error rates of the fixed and
// the group-sequential same-run A/B, re-decided on rounds recorded by bench/power.mjs (no brokers).
//   node_modules/.bin/node bench/sequential.mjs [--from bench/results/power/power-2026-11-23-pr16.json] [--k 1000] [--holm 1,5]
//        [--looks 8,12,16,24,32] [--fixed 24] [--shifts 0.10,0.15] [--pair-seconds 7] [--seed 11] [--tolerance 0.02] [--margin 0.05] [--no-fail-fast]
import { bundle, run } from './lib/common.mjs';

const child = await bundle('bench/sequential.ts');
const { done } = run(process.execPath, [child, ...process.argv.slice(2)], { onLine: (l) => console.log(l), onErrLine: (l) => console.error(l) });
const code = await done;
process.exitCode = typeof code === 'number' ? code : 1;
