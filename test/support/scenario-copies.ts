// Copies of catalogue scenario files with a few fields changed, for tests that run catalogue
// scenarios through the pipeline or the CLI but can show what they assert with less work (a
// smaller definitions import, a shorter backlog): the same files, ids and everything else, in a
// folder the `scenarios` input/option takes.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { packagePath } from '../../src/config/paths';

/**
 * Writes `scenarios/<file>.yml` of each key of `changes` into `dir`, with each of its
 * `path.to.field: value` changes applied, and returns `dir`.
 */
export function scenarioCopies(dir: string, changes: Record<string, Record<string, unknown>>): string {
  mkdirSync(dir, { recursive: true });
  for (const [file, fields] of Object.entries(changes)) {
    const doc = parseDocument(readFileSync(packagePath(`scenarios/${file}.yml`), 'utf8'));
    for (const [path, value] of Object.entries(fields)) {
      if (!doc.hasIn(path.split('.'))) throw new Error(`scenarios/${file}.yml has no ${path}`);
      doc.setIn(path.split('.'), value);
    }
    writeFileSync(join(dir, `${file}.yml`), doc.toString());
  }
  return dir;
}

/** A file's number at `path` (e.g. its `scale:`), to derive a change from it. */
export function scenarioNumber(file: string, path: string): number {
  const v = parseDocument(readFileSync(packagePath(`scenarios/${file}.yml`), 'utf8')).getIn(path.split('.'));
  if (typeof v !== 'number') throw new Error(`scenarios/${file}.yml: ${path} is not a number`);
  return v;
}
