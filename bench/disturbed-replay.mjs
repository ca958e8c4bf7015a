#!/usr/bin/env node
// Runs bench/disturbed-replay.ts (bundled from source): real gate runs' kept reports re-decided with
// and without the disturbed-pair rule (no brokers).
//   node_modules/.bin/node bench/disturbed-replay.mjs REPORT.json[.gz] …
import { bundle, run } from './lib/common.mjs';

const child = await bundle('bench/disturbed-replay.ts');
const { done } = run(process.execPath, [child, ...process.argv.slice(2)], { onLine: (l) => console.log(l), onErrLine: (l) => console.error(l) });
const code = await done;
process.exitCode = typeof code === 'number' ? code : 1;
