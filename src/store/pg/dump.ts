/**
 * A PostgreSQL store's snapshot: `pg_dump --format=custom` (restored with `pg_restore`) into a new 0600 file.
 * The password never appears on a command line (other users of the host can read those): it is taken out of
 * the URL and handed to pg_dump in its environment (`PGPASSWORD`), which only the same user can read.
 */
import { spawn } from 'node:child_process';
import { chmodSync, closeSync, openSync, rmSync } from 'node:fs';
import { SnapshotUnavailable } from '../snapshot.js';

/** How much of pg_dump's complaint is kept for the error. */
const STDERR_MAX = 2000;

/** The URL without its password, and the password (from the URL's user part or its `password` parameter). */
export function splitPassword(url: string): { url: string; password: string | undefined } {
  const u = new URL(url);
  let password: string | undefined = u.password ? decodeURIComponent(u.password) : undefined;
  password ??= u.searchParams.get('password') ?? undefined;
  u.password = '';
  u.searchParams.delete('password');
  return { url: u.toString(), password };
}

/**
 * Dumps the database at `url` into `dest`, a new file (never overwritten) created with mode 0600 before pg_dump
 * writes a byte. Throws SnapshotUnavailable when pg_dump is not on the PATH, and an error quoting pg_dump when it
 * fails; a failed dump leaves no file behind.
 */
export async function dumpDatabase(url: string, dest: string): Promise<void> {
  const target = splitPassword(url);
  const env = { ...process.env };
  if (target.password !== undefined) env.PGPASSWORD = target.password;
  const fd = openSync(dest, 'wx', 0o600);
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn('pg_dump', ['--format=custom', '--no-password', `--dbname=${target.url}`], {
        stdio: ['ignore', fd, 'pipe'],
        env,
      });
      let complaint = '';
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (d: string) => {
        if (complaint.length < STDERR_MAX) complaint += d;
      });
      child.once('error', (e: NodeJS.ErrnoException) =>
        reject(
          e.code === 'ENOENT'
            ? new SnapshotUnavailable(
                'a PostgreSQL store is snapshotted with pg_dump, which is not on the PATH of this controller: ' +
                  'install the PostgreSQL client tools (pg_dump of the server’s major version or newer), or back ' +
                  'the database up yourself with `pg_dump --format=custom`',
              )
            : e,
        ),
      );
      child.once('close', (code, signal) => {
        if (code === 0) return resolve();
        const said = complaint.trim().slice(0, STDERR_MAX);
        const scrubbed = target.password ? said.replaceAll(target.password, '***') : said;
        reject(new Error(`pg_dump failed (${signal ?? `exit ${code}`})${scrubbed ? `: ${scrubbed}` : ''}`));
      });
    });
  } catch (e) {
    closeSync(fd);
    rmSync(dest, { force: true });
    throw e;
  }
  closeSync(fd);
  chmodSync(dest, 0o600);
}
