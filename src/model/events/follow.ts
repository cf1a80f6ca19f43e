/**
 * Reading the outbox in order from a position, for the live stream (daemon/event-stream.ts): the outbox's
 * positions (`seq`) follow commit order, so a reader that remembers the last position it got never misses an
 * event that commits later, whichever controller recorded it.
 */
import { eventsAfter } from '../../store/events.js';
import { lastEventSeq } from '../../store/event-backlog.js';
import type { Ctx } from '../ctx.js';

/** The events after position `after`, at most `limit`, in order, each with its position. */
export function eventsAfterPosition(
  ctx: Ctx,
  after: number,
  limit: number,
): Promise<{ seq: number; namespace: string; eventType: string; body: string }[]> {
  return eventsAfter(ctx.db, after, limit);
}

/** The position of the last event recorded (0: none). */
export function lastEventPosition(ctx: Ctx): Promise<number> {
  return lastEventSeq(ctx.db);
}
