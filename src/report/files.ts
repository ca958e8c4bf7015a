// Writes a run's report files (report.json, summary.md, report.html) — or a bisect's (bisect.json,
// bisect.md, bisect.html) — atomically into one folder, so an artifact upload or a later
// `compare`/`report` command finds complete files; and report.json alone, as the CLI saves it
// after each trial (a killed run can be resumed from it).
import { join } from 'node:path';
import type { BisectReport, RunReport } from '../schema/types';
import { writeFileAtomic, writeReport } from '../compare/stored';
import { renderHtml } from './html';
import { renderBisectHtml } from './bisect';

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
  writeReport(json, report);
  return json;
}

export function writeBisectFiles(dir: string, r: BisectReport, markdown: string, opts: { name?: string; runUrl?: string } = {}): { json: string; markdown: string; html: string } {
  const files = { json: join(dir, 'bisect.json'), markdown: join(dir, 'bisect.md'), html: join(dir, 'bisect.html') };
  writeFileAtomic(files.json, JSON.stringify(r, null, 1) + '\n');
  writeFileAtomic(files.markdown, markdown);
  writeFileAtomic(files.html, renderBisectHtml(r, opts));
  return files;
}
