// Writes a run's report files (report.json, summary.md, report.html) atomically into one folder,
// so an artifact upload or a later `compare`/`report` command finds complete files; and report.json
// alone, as the CLI saves it after each trial (a killed run can be resumed from it).
import { join } from 'node:path';
import type { RunReport } from '../schema/types';
import { writeFileAtomic } from '../compare/baseline-file';
import { renderHtml } from './html';

export function writeReportFiles(dir: string, report: RunReport, summary: string, opts: { name?: string; runUrl?: string } = {}): { json: string; markdown: string; html: string } {
  const json = join(dir, 'report.json');
  const markdown = join(dir, 'summary.md');
  const html = join(dir, 'report.html');
  writeReportJson(dir, report);
  writeFileAtomic(markdown, summary);
  writeFileAtomic(html, renderHtml(report, opts));
  return { json, markdown, html };
}

/** Writes `dir`/report.json atomically; returns its path. */
export function writeReportJson(dir: string, report: RunReport): string {
  const json = join(dir, 'report.json');
  writeFileAtomic(json, JSON.stringify(report, null, 1) + '\n');
  return json;
}
