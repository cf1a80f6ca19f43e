/** The cheapest question the store can answer: whether it answers at all (`GET /health`). */
import { sql } from 'kysely';
import type { TypedExecutor } from './executor.js';

export async function pingStore(db: TypedExecutor): Promise<void> {
  await sql`select 1`.execute(db);
}
