/**
 * The one-file binary (`dist/edgectl`, scripts/build-binary.mjs) for tests: built at most once per test process,
 * and not at all when the one on disk is newer than everything it is made of.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './cli.js';

export const BINARY = join(ROOT, 'dist', 'edgectl');

/** Newest modification time under `path` (a file or a directory tree). */
function newest(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  return readdirSync(path).reduce((m, name) => Math.max(m, newest(join(path, name))), st.mtimeMs);
}

/** True when `dist/edgectl` is newer than the sources, the build script, the lockfile and the running node. */
export function binaryIsFresh(): boolean {
  if (!existsSync(BINARY)) return false;
  const inputs = [
    join(ROOT, 'src'),
    join(ROOT, 'scripts', 'build-binary.mjs'),
    join(ROOT, 'scripts', 'sea'),
    join(ROOT, 'package-lock.json'),
    process.execPath,
  ];
  return statSync(BINARY).mtimeMs > Math.max(...inputs.map(newest));
}

let built: Promise<string> | undefined;

/** The path of an up-to-date `dist/edgectl`, building it first when needed (once per process). */
export function builtBinary(): Promise<string> {
  built ??= binaryIsFresh()
    ? Promise.resolve(BINARY)
    : new Promise((resolve, reject) => {
        execFile(
          process.execPath,
          [join(ROOT, 'scripts', 'build-binary.mjs'), '--out', BINARY],
          { cwd: ROOT, timeout: 180_000, maxBuffer: 16 * 1024 * 1024 },
          (err, stdout, stderr) =>
            err ? reject(new Error(`build failed: ${err.message}\n${stdout}${stderr}`)) : resolve(BINARY),
        );
      });
  return built;
}
