#!/usr/bin/env node
// A report.json as the ledgers keep it: every trial's metrics, validity, order, evidence and
// machine load — what bench/pair-spread.mjs and a replay of the run need — without the per-second
// series, histograms and queue listings that make a report a megabyte; gzipped.
//   node bench/lib/strip-report.mjs REPORT.json OUT.report.json.gz
import { readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

/** The report without its bulk. */
export function stripped(report) {
  for (const t of report.trials) {
    delete t.series;
    delete t.histograms;
    delete t.topQueues;
    delete t.queues;
  }
  delete report.flames;
  return report;
}

export function writeStripped(src, dst) {
  writeFileSync(dst, gzipSync(JSON.stringify(stripped(JSON.parse(readFileSync(src, 'utf8'))))));
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop())) {
  const [src, dst] = process.argv.slice(2);
  if (!src || !dst) {
    console.error('usage: node bench/lib/strip-report.mjs REPORT.json OUT.report.json.gz');
    process.exit(2);
  }
  writeStripped(src, dst);
}
