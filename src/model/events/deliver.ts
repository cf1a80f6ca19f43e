/**
 * Delivery from the outbox to the sinks (docs/design.md, "Events"): each sink gets every event past its
 * cursor (kept in the store), in outbox order, in batches; the cursor moves only after the sink has the batch
 * durably, so a crash in between delivers that batch again (at least once; the `id` tells repeats apart) and a
 * restart resumes where delivery stopped. Run by the controller that runs the periodic work, so with several
 * controllers each event is delivered by one of them.
 */
import { eventsAfter, pruneEvents, readCursor, writeCursor } from '../../store/events.js';
import { withTx } from '../../store/db.js';
import { iso, type Ctx } from '../ctx.js';

export interface EventSink {
  /** Its delivery cursor's name in the store. */
  readonly name: string;
  accepts(namespace: string): boolean;
  /** Writes the events (JSON text each) in order; resolves once they are durable, throws if they may not be. */
  write(events: readonly string[]): Promise<void>;
}

const BATCH = 500;

/** Delivers what `sink` has not had yet; answers how many events it was given. */
export async function deliverEvents(ctx: Ctx, sink: EventSink, batch = BATCH): Promise<number> {
  let cursor = await readCursor(ctx.db, sink.name);
  let delivered = 0;
  for (;;) {
    const rows = await eventsAfter(ctx.db, cursor, batch);
    if (rows.length === 0) return delivered;
    const bodies = rows.filter((r) => sink.accepts(r.namespace)).map((r) => r.body);
    if (bodies.length > 0) await sink.write(bodies);
    cursor = rows[rows.length - 1]!.seq;
    const at = iso(ctx.now());
    await withTx(ctx.db, (trx) => writeCursor(trx, sink.name, cursor, at));
    delivered += bodies.length;
    if (rows.length < batch) return delivered;
  }
}

/** Removes the events older than the retention, in batches; answers how many went. */
export async function pruneExpiredEvents(ctx: Ctx, retentionMs: number): Promise<number> {
  const before = iso(new Date(ctx.now().getTime() - retentionMs));
  let total = 0;
  for (;;) {
    const n = await withTx(ctx.db, (trx) => pruneEvents(trx, before, 1000));
    total += n;
    if (n < 1000) return total;
  }
}
