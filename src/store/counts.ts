/** Row counts (the `/summary` listing). */
import { sql } from 'kysely';
import type { TypedExecutor } from './executor.js';
import { countFromDb } from './values.js';

/** The number of rows of a table. */
export async function countRows(db: TypedExecutor, table: string): Promise<number> {
  const { rows } = await sql<{ n: unknown }>`select count(*) as n from ${sql.table(table)}`.execute(db);
  return countFromDb(rows[0]?.n);
}
