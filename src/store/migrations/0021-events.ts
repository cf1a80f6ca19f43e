/**
 * The event outbox (docs/design.md, "Events"): one row per event, written in the transaction of the change it
 * records, so a committed change always has its event and a rolled-back one never does. `seq` is the order of
 * delivery: every write transaction takes the store's writer lock first (SQLite's one connection, PostgreSQL's
 * advisory lock: src/store/runtime.ts), so the sequence is allocated in commit order. `body` is the whole event
 * as JSON; the other columns are what the events listing filters and sorts by.
 *
 * `event_cursors`: how far each sink has delivered (its last `seq`), so delivery resumes where it stopped.
 *
 * On PostgreSQL both tables get their change counter (migration 0015), with an event's insert and a cursor's
 * advance untraced: neither is anything another replica caches.
 */
import type { Kysely } from 'kysely';
import { onPostgres } from './helpers.js';
import { traceTables } from './0015-change-log.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  const pg = onPostgres(db);
  await db.schema
    .createTable('events')
    .addColumn('seq', pg ? 'bigserial' : 'integer', (c) => (pg ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('namespace', 'text', (c) => c.notNull())
    .addColumn('eventType', 'text', (c) => c.notNull())
    .addColumn('timestamp', 'text', (c) => c.notNull())
    .addColumn('actorId', 'text')
    .addColumn('entityType', 'text')
    .addColumn('entityId', 'text')
    .addColumn('body', 'text', (c) => c.notNull())
    .execute();
  // Listing and pruning go by time; "what happened to this entity" by the entity.
  await db.schema.createIndex('events_by_timestamp').on('events').column('timestamp').execute();
  await db.schema.createIndex('events_by_entity').on('events').columns(['entityId', 'seq']).execute();
  await db.schema
    .createTable('event_cursors')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('seq', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('updatedAt', 'text', (c) => c.notNull())
    .execute();
  if (pg) await traceTables(db, ['events', 'event_cursors']);
}
