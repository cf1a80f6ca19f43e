/**
 * The access journal's transitions in the store (src/store/access-journal.ts), for replicas sharing a PostgreSQL
 * database: a transaction that described its access changes records, before it commits, which marker
 * generations it moved (`moves`: kind → [from, to]) and its notes, one row per transaction. The other replicas
 * read the new rows when the table's change counter moves (pg/replica-changes.ts), so they revise their caches
 * as narrowly as the writing replica does instead of recomputing every entry of the kinds that moved. Only the
 * newest rows are kept (the journal's own bound); an older generation is simply unexplained, a cache miss.
 *
 * SQLite's store has one writer, whose journal is in memory: the table exists there and stays empty.
 */
import type { Kysely } from 'kysely';
import { onPostgres } from './helpers.js';
import { traceTables } from './0015-change-log.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  const pg = onPostgres(db);
  await db.schema
    .createTable('access_transitions')
    .addColumn('id', pg ? 'bigserial' : 'integer', (c) => (pg ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('moves', 'text', (c) => c.notNull())
    .addColumn('notes', 'text', (c) => c.notNull())
    .execute();
  if (pg) await traceTables(db, ['access_transitions']);
}
