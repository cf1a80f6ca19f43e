/**
 * The outbox's positions without AUTOINCREMENT (SQLite; docs/decisions.md, "A new session's event in its group
 * commit"). AUTOINCREMENT reads and rewrites `sqlite_sequence` at every event's insert: ~2,800 instructions per
 * event and one more page in the write-ahead log per commit, on the session create's hot path too. A plain
 * integer key is the rowid: the next position is the largest one in the table plus one, so positions still grow
 * in commit order as long as the newest event is never removed, which the pruning now keeps
 * (model/events/deliver.ts). PostgreSQL's positions come from a sequence, which never gives one again: unchanged.
 *
 * The table is made again with its rows and positions; the indexes as migrations 0021 and 0025 made them. A
 * delivery cursor past the newest position kept (every event was pruned before this migration, which the old
 * pruning allowed) is moved back to it, so a sink takes every event that comes after.
 */
import { sql, type Kysely } from 'kysely';
import { onPostgres } from './helpers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  if (onPostgres(db)) return;
  await db.schema
    .createTable('events_new')
    .addColumn('seq', 'integer', (c) => c.primaryKey())
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
  await db.schema.createIndex('events_by_timestamp').on('events').column('timestamp').execute();
  await db.schema.createIndex('events_by_entity').on('events').columns(['entityId', 'seq']).execute();
  await sql`update event_cursors set seq = (select coalesce(max(seq), 0) from events)
    where seq > (select coalesce(max(seq), 0) from events)`.execute(db);
}
