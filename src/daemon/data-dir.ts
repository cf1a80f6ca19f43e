/**
 * Making sure the data dir is a directory the controller can write, before anything is put in it.
 *
 * Node's recursive `mkdirSync` loops forever on some paths (`/proc/x`: the kernel answers ENOENT for the very
 * parent that exists), synchronously, so even SIGTERM goes unheard. The missing levels are created one at a
 * time instead, and every failure becomes one message naming the dir (docs/decisions.md, "Serve fails loudly").
 */
import { mkdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOTDIR: 'a part of the path is not a directory',
  ENOENT: 'a part of the path does not exist and cannot be created',
  ENOSPC: 'no space left on the device',
  EEXIST: 'it exists and is not a directory',
};

export class DataDirError extends Error {}

function fail(dir: string, e: unknown): never {
  const code = (e as NodeJS.ErrnoException).code ?? '';
  throw new DataDirError(
    `the data dir ${dir} is not usable: ${REASONS[code] ?? (e as Error).message}${code ? ` (${code})` : ''}`,
  );
}

function isDirectory(path: string): boolean | undefined {
  try {
    return statSync(path).isDirectory();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** Creates `dir` (mode 0700) if missing and checks it can hold files; throws DataDirError otherwise. */
export function prepareDataDir(dir: string): void {
  try {
    const missing: string[] = [];
    let at = dir;
    let state = isDirectory(at);
    while (state === undefined) {
      missing.unshift(at);
      const up = dirname(at);
      if (up === at) break;
      at = up;
      state = isDirectory(at);
    }
    if (state === false) throw Object.assign(new Error('not a directory'), { code: at === dir ? 'EEXIST' : 'ENOTDIR' });
    for (const level of missing) mkdirSync(level, { mode: 0o700 });
    // Writing is what the controller needs; permission bits alone do not tell (root, read-only mounts, /proc).
    const probe = join(dir, `.edgectl-write-check-${process.pid}`);
    writeFileSync(probe, '', { flag: 'wx', mode: 0o600 });
    unlinkSync(probe);
  } catch (e) {
    fail(dir, e);
  }
}
