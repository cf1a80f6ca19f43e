/**
 * The event outbox (migration 0021): events are inserted in the transaction of what they record, read back in
 * `seq` order by the listing and the sinks, and pruned past their retention. On SQLite `seq` follows commit
 * order (one writer connection); on PostgreSQL the readers that keep a position stop at the settled horizon
 * (event-horizon.ts).
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { dynamic, type Executor } from './db.js';
import { hotRows, hotWrite } from './direct.js';
import { settledEventSeq } from './event-horizon.js';
import { countFromDb } from './values.js';
import { orderedBy } from './filter-sql.js';
import type { PageOrder } from './crud.js';
import type { EventsTable } from './schema.js';
import { storedText, wholeText, type EventColumns } from './event-text.js';

/** One stored event: its listing columns and the whole event as JSON text (its outbox position left out). */
export type StoredEvent = Omit<EventsTable, 'seq'>;

/** The outbox's insert without its values (a statement may select them: store/sessions.ts). */
export const INSERT_EVENT_COLUMNS =
  'insert into events (id, namespace, "eventType", timestamp, "actorId", "entityType", "entityId", body)';
export const INSERT_EVENT = `${INSERT_EVENT_COLUMNS} values (?, ?, ?, ?, ?, ?, ?, ?)`;

/** An event's values in INSERT_EVENT's order, its whole text stored shortened (event-text.ts). */
export const eventParams = (e: StoredEvent): unknown[] => [
  e.id,
  e.namespace,
  e.eventType,
  e.timestamp,
  e.actorId,
  e.entityType,
  e.entityId,
  storedText(e, e.body),
];

/** What {@link wholeBody} reads of an outbox row. */
export interface EventRow extends EventColumns {
  body: string;
}

/** The outbox's columns {@link wholeBody} reads, for a select list. */
const ROW_COLUMNS = 'id, namespace, "eventType", timestamp, "actorId", "entityType", "entityId", body';

/**
 * An event's whole text from its outbox row. A new session's `created` event is stored without the fields
 * every event starts with (`id`, `namespace`, `version`, `timestamp`, `event_type`): its row's columns hold
 * them, and on the session create's hot path each byte of the row is written to the log and copied again by
 * the checkpoint (~140 of ~330 bytes). Every other event is stored shortened by event-text.ts (a text without
 * control characters is whole already: events written before). Every reader gets the same text as if it had
 * been stored whole.
 */
export function wholeBody(r: EventRow): string {
  const sessionShort =
    r.namespace === 'session' && r.eventType === 'created' && r.body.startsWith('{') && !r.body.startsWith('{"id":');
  if (!sessionShort) return wholeText(r, r.body);
  // Version 1 of the event's shape: the only one these rows were written in.
  return (
    `{"id":"${r.id}","namespace":"session","version":1,"timestamp":"${r.timestamp}","event_type":"created",` +
    r.body.slice(1)
  );
}

/** Adds events to the outbox; `trx` must be the transaction of the change they record. */
export async function insertEvents(trx: Executor, events: readonly StoredEvent[]): Promise<void> {
  if (!trx.isTransaction) throw new Error('events are written inside the transaction of what they record');
  for (const e of events) await hotWrite(trx, INSERT_EVENT, eventParams(e));
}

/** One page of events (aliased `t` for the filter's SQL) in the query's order, whose last term (the id) gives way to `seq`. */
export async function pageEvents(
  db: Executor,
  q: { where: RawBuilder<SqlBool> | null; orderBy: PageOrder[]; limit: number; offset: number },
): Promise<{ bodies: string[]; total: number }> {
  const where = q.where ?? sql<SqlBool>`1 = 1`;
  const counted = await dynamic(db)
    .selectFrom('events as t')
    .select(sql<number>`count(*)`.as('n'))
    .where(where)
    .execute();
  let page = dynamic(db)
    .selectFrom('events as t')
    .select(['t.id', 't.namespace', 't.eventType', 't.timestamp', 't.actorId', 't.entityType', 't.entityId', 't.body'])
    .where(where);
  // The outbox's order breaks ties instead of the id (events of one millisecond), in the first sort's direction.
  const terms = q.orderBy.slice(0, -1);
  for (const o of terms) page = orderedBy(page, db, o);
  page = page
    .orderBy('t.seq', terms[0]?.direction ?? 'asc')
    .limit(q.limit)
    .offset(q.offset);
  const rows = (await page.execute()) as EventRow[];
  return { bodies: rows.map(wholeBody), total: countFromDb(counted[0]?.n) };
}

/**
 * Events after `seq` in outbox order, at most `limit`, none past the settled horizon (event-horizon.ts), so a
 * reader that goes on from the last position it got never passes over an event that commits later.
 */
export async function eventsAfter(
  db: Executor,
  seq: number,
  limit: number,
): Promise<{ seq: number; namespace: string; eventType: string; body: string }[]> {
  const settled = await settledEventSeq(db);
  const rows = await hotRows<EventRow & { seq: unknown }>(
    db,
    Number.isFinite(settled)
      ? `select seq, ${ROW_COLUMNS} from events where seq > ? and seq <= ? order by seq limit ?`
      : `select seq, ${ROW_COLUMNS} from events where seq > ? order by seq limit ?`,
    Number.isFinite(settled) ? [seq, settled, limit] : [seq, limit],
  );
  return rows.map((r) => ({ seq: Number(r.seq), namespace: r.namespace, eventType: r.eventType, body: wholeBody(r) }));
}

/**
 * Removes events older than `before` (ISO time), at most `limit` at a time, but never the newest (it keeps
 * SQLite's next position past every one given: migration 0028); answers how many went.
 */
export async function pruneEvents(db: Executor, before: string, limit: number): Promise<number> {
  return hotWrite(
    db,
    `delete from events where seq in (select seq from events where timestamp < ?
      and seq < (select max(seq) from events) order by seq limit ?)`,
    [before, limit],
  );
}

/** Where the sink `name` stopped (0: nothing delivered yet). */
export async function readCursor(db: Executor, name: string): Promise<number> {
  const [row] = await hotRows<{ seq: unknown }>(db, 'select seq from event_cursors where name = ?', [name]);
  return row ? Number(row.seq) : 0;
}

/** Records that the sink `name` delivered everything up to `seq`. */
export async function writeCursor(db: Executor, name: string, seq: number, at: string): Promise<void> {
  const changed = await hotWrite(db, 'update event_cursors set seq = ?, "updatedAt" = ? where name = ?', [
    seq,
    at,
    name,
  ]);
  if (changed === 0)
    await hotWrite(db, 'insert into event_cursors (name, seq, "updatedAt") values (?, ?, ?)', [name, seq, at]);
}
