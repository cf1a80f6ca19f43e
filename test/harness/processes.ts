/**
 * Temporary dirs and child processes of a test file, cleaned up after it. A controller left running by a failed
 * test would keep the test process waiting forever, so every tracked child is killed.
 */
import { after } from 'node:test';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Scratch {
  tempDir(): string;
  track<T extends ChildProcess>(child: T): T;
}

/** Registers the clean-up with the calling test file; call once at its top level. */
export function scratch(prefix: string): Scratch {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  after(() => {
    children.forEach((c) => c.exitCode === null && c.signalCode === null && c.kill('SIGKILL'));
    dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
  });
  return {
    tempDir() {
      const d = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(d);
      return d;
    },
    track(child) {
      children.push(child);
      return child;
    },
  };
}
