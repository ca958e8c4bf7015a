// Writes a run's report files (report.json, summary.md) atomically into one folder, so an
// artifact upload or a later `compare`/`report` command finds complete files.
import { join } from 'node:path';
import type { RunReport } from '../schema/types';
import { writeFileAtomic } from '../compare/baseline-file';

export function writeReportFiles(dir: string, report: RunReport, summary: string): { json: string; markdown: string } {
  const json = join(dir, 'report.json');
  const markdown = join(dir, 'summary.md');
  writeFileAtomic(json, JSON.stringify(report, null, 1) + '\n');
  writeFileAtomic(markdown, summary);
  return { json, markdown };
}
