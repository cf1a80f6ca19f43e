/**
 * The offline check behind `edgectl db check-integrity`: what the controller verifies at start (open-checks.ts),
 * with SQLite's full `integrity_check` instead of `quick_check`, on a read-only connection, reporting every
 * problem instead of stopping at the first.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { integrityProblems, knownMigrations } from '../model/store.js';

export const STORE_FILE = 'edgectl.db';

export interface StoreCheck {
  file: string;
  problems: string[];
}

export async function checkStoreIntegrity(dataDir: string): Promise<StoreCheck> {
  const file = join(dataDir, STORE_FILE);
  if (!existsSync(file)) return { file, problems: ['there is no store file'] };
  if (statSync(file).size === 0) return { file, problems: ['the store file is empty (0 bytes)'] };
  return { file, problems: await integrityProblems(file, knownMigrations) };
}
