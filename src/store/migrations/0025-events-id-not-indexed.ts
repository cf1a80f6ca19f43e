/**
 * The outbox's event ids lose their unique index (docs/decisions.md, "A new session's event in its group
 * commit"): every event insert paid for it (on SQLite ~4,000 instructions and one more page in the write-ahead
 * log per commit), the new session's event on the session create's hot path too, while nothing needs it: an
 * id is a UUID version 7 (its millisecond and 74 random bits: model/events/event.ts), never looked up by the
 * store, and a sink's receivers de-duplicate by it. A filter on `id` in the events listing now reads the outbox
 * as one on `actorId` or `namespace` does.
 *
 * SQLite cannot drop a column's `unique`: the table is made again without it, its rows copied with their
 * positions, and its AUTOINCREMENT position kept (`sqlite_sequence`), so a position once used, even by an event
 * pruned since, is never given again (delivery cursors point past it).
 */
import { sql, type Kysely } from 'kysely';
import { onPostgres } from './helpers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  if (onPostgres(db)) {
    await sql`alter table events drop constraint events_id_key`.execute(db);
    return;
  }
  const [last] = (await sql<{ seq: number }>`select seq from sqlite_sequence where name = 'events'`.execute(db)).rows;
  await db.schema
    .createTable('events_new')
    .addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('namespace', 'text', (c) => c.notNull())
    .addColumn('eventType', 'text', (c) => c.notNull())
    .addColumn('timestamp', 'text', (c) => c.notNull())
    .addColumn('actorId', 'text')
    .addColumn('entityType', 'text')
    .addColumn('entityId', 'text')
    .addColumn('body', 'text', (c) => c.notNull())
    .execute();
  await sql`insert into events_new (seq, id, namespace, "eventType", timestamp, "actorId", "entityType", "entityId", body)
    select seq, id, namespace, "eventType", timestamp, "actorId", "entityType", "entityId", body from events`.execute(
    db,
  );
  await db.schema.dropTable('events').execute();
  await sql`alter table events_new rename to events`.execute(db);
  // The copy set the sequence to the last row kept; the old table's may have been past it (pruned positions).
  // (None at all when no row was left to copy.)
  if (last) {
    await sql`update sqlite_sequence set seq = max(seq, ${last.seq}) where name = 'events'`.execute(db);
    await sql`insert into sqlite_sequence (name, seq) select 'events', ${last.seq}
      where not exists (select 1 from sqlite_sequence where name = 'events')`.execute(db);
  }
  // Listing and pruning go by time; "what happened to this entity" by the entity (as migration 0021 made them).
  await db.schema.createIndex('events_by_timestamp').on('events').column('timestamp').execute();
  await db.schema.createIndex('events_by_entity').on('events').columns(['entityId', 'seq']).execute();
}
