// Where a target description and its config files are read from: the working tree, a commit's
// git objects (when the checkout has the history), or the REST contents API at a ref. Each
// source says what it is, so the log can tell the user which one was used.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface FileSource {
  /** e.g. "working tree", "git commit 1a2b3c4", "REST contents API at 1a2b3c4". */
  name: string;
  /** The file's bytes, or undefined when it does not exist there. */
  read(path: string): Promise<Buffer | undefined>;
}

export function workingTree(root: string): FileSource {
  return {
    name: 'working tree',
    read: async (path) =>
      readFile(resolve(root, path)).catch((e: NodeJS.ErrnoException) => {
        if (e.code === 'ENOENT' || e.code === 'EISDIR') return undefined;
        throw e;
      }),
  };
}

/** True when `repo` is a git checkout that has `ref` (a commit, branch or tag). */
export async function hasCommit(repo: string, ref: string): Promise<boolean> {
  try {
    await run('git', ['-C', repo, 'cat-file', '-e', `${ref}^{commit}`]);
    return true;
  } catch {
    return false;
  }
}

export function gitCommit(repo: string, ref: string): FileSource {
  return {
    name: `git commit ${ref.slice(0, 12)}`,
    read: async (path) => {
      const spec = `${ref}:${path.replace(/^\.\//, '')}`;
      try {
        await run('git', ['-C', repo, 'cat-file', '-e', spec]);
      } catch {
        return undefined;
      }
      const { stdout } = await run('git', ['-C', repo, 'cat-file', 'blob', spec], { encoding: 'buffer', maxBuffer: 64 << 20 });
      return stdout as unknown as Buffer;
    },
  };
}

/** Minimal shape of the octokit call used, so this module stays free of the GitHub stage. */
export type ContentsGetter = (args: { owner: string; repo: string; path: string; ref: string }) => Promise<{ data: unknown }>;

export function restContents(get: ContentsGetter, owner: string, repo: string, ref: string): FileSource {
  return {
    name: `REST contents API at ${ref.slice(0, 12)}`,
    read: async (path) => {
      try {
        const { data } = await get({ owner, repo, path: path.replace(/^\.\//, ''), ref });
        const file = data as { type?: string; content?: string; encoding?: string };
        if (file.type !== 'file' || typeof file.content !== 'string') return undefined;
        return Buffer.from(file.content, (file.encoding as BufferEncoding) ?? 'base64');
      } catch (e) {
        if ((e as { status?: number }).status === 404) return undefined;
        throw e;
      }
    },
  };
}
