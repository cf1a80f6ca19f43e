/**
 * The last data-integrity scan's results, kept in the store (migration 0017) so every replica answers them and a
 * restart keeps them. One row; the details are the wire shape, as JSON.
 */
import { hotRows, hotWrite } from './direct.js';
import type { Executor } from './executor.js';

const SAVE = `insert into integrity_results (id, details, "updatedAt") values ('last', ?, ?)
  on conflict (id) do update set details = excluded.details, "updatedAt" = excluded."updatedAt"`;
const READ = `select details from integrity_results where id = 'last'`;

export async function saveIntegrityResults(db: Executor, details: unknown, at: string): Promise<void> {
  await hotWrite(db, SAVE, [JSON.stringify(details), at]);
}

/** The details last saved, or undefined when no scan ever ran on this store. */
export async function readIntegrityResults<T>(db: Executor): Promise<T | undefined> {
  const [row] = await hotRows<{ details: string }>(db, READ, []);
  return row ? (JSON.parse(row.details) as T) : undefined;
}
