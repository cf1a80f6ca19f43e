/**
 * What bounds the outbox and each sink's backlog (model/events/deliver.ts): the outbox's last position, the
 * events a cursor would skip (counted by namespace and type, for the sink's filter), a sink's lag, and removal of
 * the outbox's oldest events as a prefix of `seq`. Bounds use positions, not counts: `max(seq) - cursor` is at
 * least the number of events after a cursor (the sequence may have gaps, never repeats), so no count of a
 * large table runs per round.
 */
import type { Executor } from './db.js';
import { hotRows, hotWrite } from './direct.js';
import { settledEventSeq } from './event-horizon.js';
import { countFromDb } from './values.js';

/** The last settled position in the outbox (0: empty): no event still to commit takes a position under it. */
export async function lastEventSeq(db: Executor): Promise<number> {
  const [row] = await hotRows<{ seq: unknown }>(db, 'select max(seq) as seq from events', []);
  const last = row?.seq === null || row?.seq === undefined ? 0 : Number(row.seq);
  return Math.min(last, await settledEventSeq(db));
}

/**
 * The text of {@link lastSeqBefore}. `max(seq + 0)`, not `max(seq)`: SQLite answers `max` of the key by walking
 * the table back from its newest row until one is old enough, i.e. through the whole outbox while every event is
 * within the retention (a full scan at every sweep: ~50 ms for 100,000 events, seconds for a million); an
 * expression makes it read the timestamp index's entries before `before` instead, the events about to go.
 */
export const LAST_SEQ_BEFORE = 'select max(seq + 0) as seq from events where timestamp < ?';

/** The last position of an event older than `before` (0: none). */
export async function lastSeqBefore(db: Executor, before: string): Promise<number> {
  const [row] = await hotRows<{ seq: unknown }>(db, LAST_SEQ_BEFORE, [before]);
  return row?.seq === null || row?.seq === undefined ? 0 : Number(row.seq);
}

/** The events in (`after`, `upTo`], counted by namespace and event type. */
export async function eventCountsBetween(
  db: Executor,
  after: number,
  upTo: number,
): Promise<{ namespace: string; eventType: string; n: number }[]> {
  const rows = await hotRows<{ namespace: string; eventType: string; n: unknown }>(
    db,
    'select namespace, "eventType", count(*) as n from events where seq > ? and seq <= ? group by namespace, "eventType"',
    [after, upTo],
  );
  return rows.map((r) => ({ namespace: r.namespace, eventType: r.eventType, n: countFromDb(r.n) }));
}

/** How many events follow `cursor`, and the time of the first of them (undefined: none). */
export async function eventsBehind(db: Executor, cursor: number): Promise<{ events: number; oldest?: string }> {
  const [count] = await hotRows<{ n: unknown }>(db, 'select count(*) as n from events where seq > ?', [cursor]);
  const events = countFromDb(count?.n);
  if (events === 0) return { events };
  const [first] = await hotRows<{ timestamp: string }>(
    db,
    'select timestamp from events where seq > ? order by seq limit 1',
    [cursor],
  );
  return first ? { events, oldest: first.timestamp } : { events };
}

/** Removes up to `limit` of the events at positions up to `upTo`, oldest first; answers how many went. */
export async function removeEventsThrough(db: Executor, upTo: number, limit: number): Promise<number> {
  return hotWrite(db, 'delete from events where seq in (select seq from events where seq <= ? order by seq limit ?)', [
    upTo,
    limit,
  ]);
}
