// Real git repositories for tests: commit files, get the sha back.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export class GitRepo {
  readonly dir = mkdtempSync(join(tmpdir(), 'perf-gate-repo-'));

  constructor() {
    this.git('init', '-q', '-b', 'main');
    this.git('config', 'user.email', 'test@example.invalid');
    this.git('config', 'user.name', 'test');
  }

  git(...args: string[]): string {
    return execFileSync('git', ['-C', this.dir, ...args], { encoding: 'utf8' }).trim();
  }

  /** Writes (or, with null, deletes) files and commits them; returns the commit sha. */
  commit(files: Record<string, string | null>, message = 'change'): string {
    for (const [path, content] of Object.entries(files)) {
      const full = join(this.dir, path);
      if (content === null) rmSync(full, { force: true });
      else {
        mkdirSync(dirname(full), { recursive: true });
        writeFileSync(full, content);
      }
    }
    this.git('add', '-A');
    this.git('commit', '-q', '--allow-empty', '-m', message);
    return this.git('rev-parse', 'HEAD');
  }
}
