/**
 * Online snapshots of the store: SQLite's backup API copies a consistent image of the live database page by
 * page while the controller keeps serving (docs/decisions.md, "Database snapshots").
 */
import { chmodSync, closeSync, openSync, rmSync } from 'node:fs';
import type Database from 'better-sqlite3';

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
