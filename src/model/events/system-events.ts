/**
 * `database` and `controller` events (edgectl's own namespaces: the reference records neither). Snake_case
 * fields and `event_type`, as the reference's non-entity namespaces are written.
 *
 * - database `snapshot`, `integrity-check`, `integrity-fix` (once it ended: findings, fixed, error), `restore`
 *   (recorded in the restored store), `migrate` (the migrations applied), with who asked (`author_id`, or the
 *   operating-system user offline) and from where (`source`: rest, offline, or the controller itself);
 * - controller `started` (once migrated and listening) and `stopped` (a graceful stop, before the store closes).
 *
 * None of these is a change of the model that a transaction could carry its event with: each is recorded in a
 * transaction of its own right after the operation, so a crash between the two loses that event alone.
 */
import { withTx } from '../../store/db.js';
import { insertEvents } from '../../store/events.js';
import type { Executor } from '../../store/executor.js';
import type { Ctx, EventActor } from '../ctx.js';
import { storedEvent, type EventRecord } from './event.js';

export type DatabaseOperation = 'snapshot' | 'integrity-check' | 'integrity-fix' | 'restore' | 'migrate';

/** Who asked and from where, as these events name them. */
function sourceFields(actor: EventActor | undefined): Record<string, unknown> {
  if (!actor) return { source: 'controller' };
  const s = actor.source;
  return {
    source: s.type,
    ...(actor.author && { author_id: actor.author.id, author_name: actor.author.name }),
    ...(s.remoteAddr !== undefined && { remote_address: s.remoteAddr }),
    ...(s.osUser !== undefined && { os_user: s.osUser }),
  };
}

export function databaseEvent(
  operation: DatabaseOperation,
  actor: EventActor | undefined,
  fields: Record<string, unknown>,
): EventRecord {
  return {
    namespace: 'database',
    typeField: 'event_type',
    eventType: operation,
    actorId: actor?.author?.id,
    fields: { ...sourceFields(actor), ...fields },
  };
}

export function controllerEvent(eventType: 'started' | 'stopped', fields: Record<string, unknown>): EventRecord {
  return { namespace: 'controller', typeField: 'event_type', eventType, fields };
}

/** Records one event in a transaction of its own on `db`. */
export function recordEventNow(db: Executor, now: Date, e: EventRecord): Promise<void> {
  return withTx(db, (trx) => insertEvents(trx, [storedEvent(now, e)]));
}

/** Records one event in a transaction of its own on the context's store. */
export const recordOwnEvent = (ctx: Ctx, e: EventRecord): Promise<void> => recordEventNow(ctx.db, ctx.now(), e);
