// Writes a run's report files (report.json, summary.md, report.html) atomically into one folder,
// so an artifact upload or a later `compare`/`report` command finds complete files.
import { join } from 'node:path';
import type { RunReport } from '../schema/types';
import { writeFileAtomic } from '../compare/baseline-file';
import { renderHtml } from './html';

export function writeReportFiles(dir: string, report: RunReport, summary: string, opts: { name?: string; runUrl?: string } = {}): { json: string; markdown: string; html: string } {
  const json = join(dir, 'report.json');
  const markdown = join(dir, 'summary.md');
  const html = join(dir, 'report.html');
  writeFileAtomic(json, JSON.stringify(report, null, 1) + '\n');
  writeFileAtomic(markdown, summary);
  writeFileAtomic(html, renderHtml(report, opts));
  return { json, markdown, html };
}
