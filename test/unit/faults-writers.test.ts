// Fault table (docs/reliability.md): two gates writing the same baseline at once. Each writer is
// its own process running writeFileAtomic in a loop; the two even share the same pid and clock
// (as two containers' PID 1 can), so only the random part of the temp-file name keeps them apart.
// A reader polling the file meanwhile must only ever see one writer's complete file: never a
// partial or interleaved one. (The last rename wins: one refresh's values replace the other's.)
import { describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

describe('two gates writing the same baseline', () => {
  it('never leave a corrupt or interleaved file, even with the same pid and clock', async () => {
    const d = mkdtempSync(join(tmpdir(), 'perf-gate-writers-'));
    const entry = join(d, 'writer.mjs');
    await build({
      stdin: {
        contents: `import { writeFileAtomic } from ${JSON.stringify(resolve('src/compare/stored.ts'))};
          Object.defineProperty(process, 'pid', { value: 1 });
          Date.now = () => 1700000000000;
          const [file, name, rounds] = process.argv.slice(2);
          for (let i = 0; i < Number(rounds); i++) {
            writeFileAtomic(file, JSON.stringify({ schemaVersion: 1, writer: name, round: i, pad: name.repeat(2 * 1024 * 1024) }));
          }`,
        resolveDir: process.cwd(),
        loader: 'ts',
      },
      bundle: true,
      platform: 'node',
      format: 'esm',
      outfile: entry,
      logLevel: 'silent',
    });
    const target = join(d, 'baseline.json');
    writeFileSync(target, JSON.stringify({ schemaVersion: 1, writer: 'old', round: 0, pad: '' }));
    const children = ['a', 'b'].map((name) => {
      const child = spawn(process.execPath, [entry, target, name, '25'], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (c) => (stderr += c));
      return { done: new Promise<{ code: number | null; stderr: string }>((r) => child.on('close', (code) => r({ code, stderr }))), exited: () => child.exitCode !== null };
    });
    const seen = new Set<string>();
    let reads = 0;
    while (!children.every((c) => c.exited())) {
      const until = Date.now() + 50;
      while (Date.now() < until) {
        const data = JSON.parse(readFileSync(target, 'utf8'));
        expect(['old', 'a', 'b']).toContain(data.writer);
        if (data.writer !== 'old') expect(data.pad).toBe(data.writer.repeat(2 * 1024 * 1024));
        seen.add(data.writer);
        reads++;
      }
      await new Promise((r) => setImmediate(r));
    }
    for (const c of children) expect(await c.done).toEqual({ code: 0, stderr: '' });
    expect(reads).toBeGreaterThan(10);
    expect([...seen].filter((w) => w !== 'old').length).toBeGreaterThanOrEqual(1);
    const last = JSON.parse(readFileSync(target, 'utf8'));
    expect(last.round).toBe(24); // whoever renamed last, its file is whole
    // No temp file is left behind, and none could shadow the baseline.
    expect(readdirSync(d).sort()).toEqual(['baseline.json', 'writer.mjs']);
    expect(existsSync(target)).toBe(true);
  }, 120_000);
});
