/**
 * State the replicas sharing a PostgreSQL database must share beyond the model:
 *
 * - `access_transitions`: the access journal's transitions (src/store/access-journal.ts). A transaction that
 *   described its access changes records, before it commits, which marker generations it moved (`moves`: kind →
 *   [from, to]) and its notes, one row per transaction. The other replicas read the new rows when the table's
 *   change counter moves (pg/replica-changes.ts), so they revise their caches as narrowly as the writing replica
 *   does instead of recomputing every entry of the kinds that moved. Only the newest rows are kept (the journal's
 *   own bound); an older generation is simply unexplained, a cache miss. SQLite's store has one writer, whose
 *   journal is in memory: the table exists there and stays empty.
 * - `integrity_results`: the last data-integrity scan's results (`GET /database/data-integrity-results`), one
 *   row, written as the scan goes, so whichever replica a balancer sends the question to answers it, and a
 *   restart keeps them.
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
  await db.schema
    .createTable('integrity_results')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('details', 'text', (c) => c.notNull())
    .addColumn('updatedAt', 'text', (c) => c.notNull())
    .execute();
  if (pg) await traceTables(db, ['access_transitions', 'integrity_results']);
}
