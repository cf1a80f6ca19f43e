/**
 * The offline check behind `edgectl db check-integrity`: what the controller verifies at start (open-checks.ts),
 * with SQLite's full `integrity_check` instead of `quick_check`, on a read-only connection, reporting every
 * problem instead of stopping at the first.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { knownMigrations } from '../store/migrations/index.js';
import { checkSchema } from '../store/open-checks.js';

export const STORE_FILE = 'edgectl.db';

export interface StoreCheck {
  file: string;
  problems: string[];
}

export async function checkStoreIntegrity(dataDir: string): Promise<StoreCheck> {
  const file = join(dataDir, STORE_FILE);
  if (!existsSync(file)) return { file, problems: ['there is no store file'] };
  if (statSync(file).size === 0) return { file, problems: ['the store file is empty (0 bytes)'] };
  const problems: string[] = [];
  let raw: Database.Database | undefined;
  try {
    raw = new Database(file, { readonly: true, fileMustExist: true });
    const rows = raw.pragma('integrity_check(50)') as { integrity_check: string }[];
    problems.push(...rows.map((r) => r.integrity_check).filter((r) => r !== 'ok'));
    if (problems.length === 0) await checkSchema(raw, file, knownMigrations);
  } catch (e) {
    problems.push((e as Error).message);
  } finally {
    raw?.close();
  }
  return { file, problems };
}
