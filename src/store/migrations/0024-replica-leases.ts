/**
 * Pushed change notices between replicas (PostgreSQL only; src/store/pg/replica-changes.ts). The change counters'
 * trigger (migration 0015) now also notifies channel `edgectl_changes` once per transaction that moves them, so
 * every replica learns of another's model write when it commits instead of reading the counters before each
 * request. `replica_leases`: each serving replica's acknowledgement of the counters it has applied (`gen`, the
 * `*` counter) and how long that holds (`leaseUntil`); a replica answers a request that wrote the model only
 * once every other replica with a live lease has acknowledged the write, or its lease has run out. Not traced:
 * nothing caches it.
 */
import { sql, type Kysely } from 'kysely';
import { onPostgres } from './helpers.js';
import { storeChangesBumpFunction } from './0015-change-log.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  if (!onPostgres(db)) return;
  await sql.raw(storeChangesBumpFunction(true)).execute(db);
  await db.schema
    .createTable('replica_leases')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('gen', 'bigint', (c) => c.notNull())
    .addColumn('leaseUntil', 'timestamptz', (c) => c.notNull())
    .execute();
}
