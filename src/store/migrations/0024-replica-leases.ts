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

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  if (!onPostgres(db)) return;
  await sql
    .raw(
      `create or replace function store_changes_bump() returns trigger language plpgsql as $body$
      declare
        counted text := coalesce(current_setting('edgectl.changed', true), '');
      begin
        if counted = '' then
          update store_changes set gen = gen + 1 where name = '*';
          perform pg_notify('edgectl_changes', '');
        end if;
        if position('|' || TG_TABLE_NAME || '|' in counted) = 0 then
          update store_changes set gen = gen + 1 where name = TG_TABLE_NAME;
          perform set_config('edgectl.changed', counted || '|' || TG_TABLE_NAME || '|', true);
        end if;
        return null;
      end $body$`,
    )
    .execute(db);
  await db.schema
    .createTable('replica_leases')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('gen', 'bigint', (c) => c.notNull())
    .addColumn('leaseUntil', 'timestamptz', (c) => c.notNull())
    .execute();
}
