/** Shared helpers of the PKI unit tests: temp dirs and an optional OpenSSL for interoperability checks. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A fresh temp directory, removed when the test file ends. */
export function tempDir(prefix = 'edgectl-pki-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

/** True when an `openssl` binary is on PATH (interop tests are skipped without it). */
export const hasOpenssl: boolean = spawnSync('openssl', ['version'], { encoding: 'utf8' }).status === 0;

/** Runs openssl with `args`, returning stdout; throws with stderr on failure. */
export function openssl(args: string[], input?: string | Buffer): string {
  const r = spawnSync('openssl', args, { input, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`openssl ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}
