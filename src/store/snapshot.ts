/**
 * Online snapshots of the store (docs/decisions.md, "Database snapshots"): SQLite's backup API copies a
 * consistent image of the live database page by page while the controller keeps serving; a PostgreSQL store is
 * dumped by `pg_dump` (pg/dump.ts), whose archive is as consistent and is restored with `pg_restore`.
 */
import { chmodSync, closeSync, existsSync, openSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type Database from 'better-sqlite3';
import type { StoreKind } from './dialect.js';

/** A snapshot this store cannot take here (a PostgreSQL store on a host without `pg_dump`). */
export class SnapshotUnavailable extends Error {}

/**
 * Copies the database behind `raw` to `dest`, a new file (never overwritten) created with mode 0600 before
 * any page is written, so the copy is never readable by others. A failed copy leaves no file behind.
 */
export async function backupStore(raw: Database.Database, dest: string): Promise<void> {
  closeSync(openSync(dest, 'wx', 0o600));
  try {
    await raw.backup(dest);
    chmodSync(dest, 0o600);
  } catch (e) {
    rmSync(dest, { force: true });
    throw e;
  }
}

/**
 * Where a snapshot taken at `stamp` (`YYYYMMDD-HHMMSS`) goes, `file` being the SQLite store's path in the data
 * dir: `<file>-STAMP` beside it, or for a PostgreSQL store `edgectl-postgres-STAMP.dump` in the same directory;
 * `-1`, `-2`… added while the name is taken.
 */
export function snapshotPath(kind: StoreKind, file: string, stamp: string): string {
  const name = (suffix: string) =>
    kind === 'postgres' ? join(dirname(file), `edgectl-postgres-${stamp}${suffix}.dump`) : `${file}-${stamp}${suffix}`;
  let dest = name('');
  for (let i = 1; existsSync(dest); i++) dest = name(`-${i}`);
  return dest;
}
