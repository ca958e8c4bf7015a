#!/usr/bin/env node
// Runs bench/power.ts (bundled from source): false-fail rate in A/A gate runs and detection rate
// of broker-side slowdowns (docker --cpus on the broker), with Clopper-Pearson CIs.
//   node_modules/.bin/node bench/power.mjs [--scenarios one_fast,one_one_one] [--runs 30] [--n 8] [--seconds 5] [--warmup 1] [--cpus 1.3,1.2]
//        [--base-cpus N] [--tolerance T] [--json FILE] [--from FILE] [--no-freeze] [--statistic mean] [--resample 0] (bench/power.ts: all options)
import { bundle, run } from './lib/common.mjs';

const child = await bundle('bench/power.ts');
const { done } = run(process.execPath, [child, ...process.argv.slice(2)], { onLine: (l) => console.log(l), onErrLine: (l) => console.error(l) });
const code = await done;
process.exitCode = typeof code === 'number' ? code : 1;
