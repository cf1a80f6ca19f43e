/** The cheapest question the store can answer: whether it answers at all (`GET /health`). */
import { sql } from 'kysely';
import type { TypedExecutor } from './executor.js';

export async function pingStore(db: TypedExecutor): Promise<void> {
  await sql`select 1`.execute(db);
}

/** The size of a PostgreSQL store's database in bytes (its `edgectl_store_size_bytes`). */
export async function databaseBytes(db: TypedExecutor): Promise<number> {
  const { rows } = await sql<{ n: unknown }>`select pg_database_size(current_database()) as n`.execute(db);
  return Number(rows[0]?.n ?? 0);
}
