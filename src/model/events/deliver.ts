/**
 * Delivery from the outbox to the sinks (docs/events.md): each sink gets every event past its cursor (kept in the
 * store), in outbox order, in batches; the cursor moves only after the sink has the batch durably, so a crash in
 * between delivers that batch again (at least once; the `id` tells repeats apart) and a restart resumes where
 * delivery stopped. Run by the controller that runs the periodic work, so with several controllers each event is
 * delivered by one of them.
 *
 * Nothing grows without bound: a sink more than its backlog behind loses its oldest events, and the outbox keeps
 * its retention and at most `maxEvents`. Whatever a sink loses is recorded (an `eventSink` `dropped` event, in the
 * transaction that moves its cursor) and counted (`onDropped`).
 */
import { eventsAfter, readCursor, writeCursor } from '../../store/events.js';
import {
  eventCountsBetween,
  eventsBehind,
  lastEventSeq,
  lastSeqBefore,
  removeEventsThrough,
} from '../../store/event-backlog.js';
import { withTx } from '../../store/db.js';
import { iso, type Ctx } from '../ctx.js';
import { recordEvents } from './event.js';

export interface EventSink {
  /** Its delivery cursor's name in the store. */
  readonly name: string;
  accepts(namespace: string, eventType: string): boolean;
  /** Writes the events (JSON text each) in order; resolves once they are durable, throws if they may not be. */
  write(events: readonly string[]): Promise<void>;
}

/** Why a sink lost events: behind by more than its backlog, pruned from the outbox first, or given up. */
export type DropReason = 'backlog' | 'retention' | 'maxEvents' | 'undeliverable';

export interface DeliveryOptions {
  /** Outbox rows read per batch (default 500). */
  batch?: number;
  /** Undelivered events the sink may have; past it the oldest are dropped first (default: no bound). */
  backlog?: number;
  /** Told of events the sink lost (after they are recorded). */
  onDropped?: (sink: string, count: number, reason: DropReason) => void;
}

const BATCH = 500;

/** A sink's filter: `namespaces`, and `types` entries naming a namespace or one `namespace.eventType`. */
export function eventFilter(
  namespaces: readonly string[] | undefined,
  types: readonly string[] | undefined,
): (namespace: string, eventType: string) => boolean {
  const ns = namespaces && new Set(namespaces);
  const ts = types && new Set(types);
  return (namespace, eventType) =>
    (!ns || ns.has(namespace)) && (!ts || ts.has(namespace) || ts.has(`${namespace}.${eventType}`));
}

/**
 * Moves `sink`'s cursor from `from` to `upTo` without delivering what is between, recording how many of those
 * events it would have taken (none: nothing recorded); answers that number.
 */
async function dropThrough(
  ctx: Ctx,
  sink: EventSink,
  from: number,
  upTo: number,
  reason: DropReason,
  opts: DeliveryOptions,
): Promise<number> {
  const counts = await eventCountsBetween(ctx.db, from, upTo);
  const count = counts.reduce((n, c) => n + (sink.accepts(c.namespace, c.eventType) ? c.n : 0), 0);
  await withTx(ctx.db, async (trx) => {
    await writeCursor(trx, sink.name, upTo, iso(ctx.now()));
    if (count > 0)
      await recordEvents({ ...ctx, db: trx }, [
        {
          namespace: 'eventSink',
          typeField: 'event_type',
          eventType: 'dropped',
          fields: { sink: sink.name, reason, count },
        },
      ]);
  });
  if (count > 0) opts.onDropped?.(sink.name, count, reason);
  return count;
}

/**
 * Drops `sink`'s oldest undelivered events once it has more than `backlog`, down to a tenth below it (at least
 * one), so a sink that stays down loses events in chunks, each loss one event, rather than one loss event per
 * round, each making the backlog overflow again. Answers how many events it would have taken.
 */
export async function boundBacklog(ctx: Ctx, sink: EventSink, backlog: number, opts: DeliveryOptions = {}) {
  const cursor = await readCursor(ctx.db, sink.name);
  const last = await lastEventSeq(ctx.db);
  // `last - cursor` bounds the events after the cursor from above (gaps only make it larger).
  if (last - cursor <= backlog) return 0;
  const keep = backlog - Math.max(1, Math.floor(backlog / 10));
  return dropThrough(ctx, sink, cursor, last - keep, 'backlog', opts);
}

/** Delivers what `sink` has not had yet (after bounding its backlog); answers how many events it was given. */
export async function deliverEvents(ctx: Ctx, sink: EventSink, opts: DeliveryOptions = {}): Promise<number> {
  const batch = opts.batch ?? BATCH;
  if (opts.backlog !== undefined) await boundBacklog(ctx, sink, opts.backlog, opts);
  let cursor = await readCursor(ctx.db, sink.name);
  let delivered = 0;
  for (;;) {
    const rows = await eventsAfter(ctx.db, cursor, batch);
    if (rows.length === 0) return delivered;
    const bodies = rows.filter((r) => sink.accepts(r.namespace, r.eventType)).map((r) => r.body);
    if (bodies.length > 0) await sink.write(bodies);
    cursor = rows[rows.length - 1]!.seq;
    const at = iso(ctx.now());
    await withTx(ctx.db, (trx) => writeCursor(trx, sink.name, cursor, at));
    delivered += bodies.length;
    if (rows.length < batch) return delivered;
  }
}

/**
 * Gives up the next batch of `sink` (the one its delivery keeps failing on): its cursor moves past it and the
 * loss is recorded as `undeliverable`. Answers how many of its events the sink would have taken.
 */
export async function skipBatch(ctx: Ctx, sink: EventSink, batch: number, opts: DeliveryOptions = {}) {
  const cursor = await readCursor(ctx.db, sink.name);
  const rows = await eventsAfter(ctx.db, cursor, batch);
  if (rows.length === 0) return 0;
  return dropThrough(ctx, sink, cursor, rows[rows.length - 1]!.seq, 'undeliverable', opts);
}

export interface PruneOptions extends DeliveryOptions {
  retentionMs: number;
  maxEvents: number;
  /** The sinks whose undelivered events a prune removes: each is told (and the loss recorded) first. */
  sinks: readonly EventSink[];
}

/**
 * Removes the events past the retention, and the oldest past `maxEvents`, as a prefix of the outbox (so every
 * cursor still points into it); answers how many went. A sink that had not delivered some of them loses them
 * as `retention` or `maxEvents` drops, recorded before they go.
 */
export async function pruneEvents(ctx: Ctx, opts: PruneOptions): Promise<number> {
  const before = iso(new Date(ctx.now().getTime() - opts.retentionMs));
  const last = await lastEventSeq(ctx.db);
  // The newest event always stays: SQLite's next position is the newest one kept plus one (migration 0028), so
  // removing it would give its position again, which cursors already point past.
  const byTime = Math.min(await lastSeqBefore(ctx.db, before), last - 1);
  const byCount = last - opts.maxEvents;
  const upTo = Math.max(byTime, byCount);
  if (upTo <= 0) return 0;
  const reason = byTime >= byCount ? 'retention' : 'maxEvents';
  for (const sink of opts.sinks) {
    const cursor = await readCursor(ctx.db, sink.name);
    if (cursor < upTo) await dropThrough(ctx, sink, cursor, upTo, reason, opts);
  }
  let total = 0;
  for (;;) {
    const n = await withTx(ctx.db, (trx) => removeEventsThrough(trx, upTo, 1000));
    total += n;
    if (n < 1000) return total;
  }
}

/** Removes the events older than the retention; answers how many went (no sink is told). */
export async function pruneExpiredEvents(ctx: Ctx, retentionMs: number): Promise<number> {
  return pruneEvents(ctx, { retentionMs, maxEvents: Number.MAX_SAFE_INTEGER, sinks: [] });
}

/** How far behind each sink is: events after its cursor, and the age in seconds of the oldest (0: none). */
export async function sinkLag(
  ctx: Ctx,
  names: readonly string[],
): Promise<{ sink: string; events: number; seconds: number }[]> {
  const out = [];
  for (const sink of names) {
    const behind = await eventsBehind(ctx.db, await readCursor(ctx.db, sink));
    const seconds = behind.oldest ? Math.max(0, (ctx.now().getTime() - Date.parse(behind.oldest)) / 1000) : 0;
    out.push({ sink, events: behind.events, seconds });
  }
  return out;
}
