/**
 * `session` events (parity: the reference's session events, its snake_case fields `session_type`,
 * `api_session_id`, `identity_id`, `service_id`): `created` when `POST /sessions` stores a new session (a repeat
 * that answers the existing one records nothing), `deleted` whenever one goes: deleted by its owner or an admin,
 * refused by posture, or taken with its API session (logout, idle expiry, MFA failures), its identity or its
 * service. The reference's `id` (the session's) is `session_id` here, and its `token` is never written.
 */
import { sessionsWhere, type EndingSession, type NewSessionEvent } from '../../store/sessions.js';
import { newEventId, recordEvents, type EventRecord } from './event.js';
import type { Ctx } from '../ctx.js';

/** Why sessions went, as their `deleted` events say. */
export type SessionEndReason =
  | 'deleted'
  | 'posture'
  | 'api-session-deleted'
  | 'api-session-expired'
  | 'identity-deleted'
  | 'service-deleted'
  | 'token-key-changed';

type SessionFacts = Pick<EndingSession, 'id' | 'type' | 'apiSessionId' | 'serviceId' | 'identityId'>;

export function sessionEvent(
  ctx: Ctx,
  eventType: 'created' | 'deleted',
  s: SessionFacts,
  reason?: SessionEndReason,
): EventRecord {
  const author = ctx.actor?.author;
  return {
    namespace: 'session',
    typeField: 'event_type',
    eventType,
    // Who acted: the admin who deleted it, else the identity it belongs to.
    actorId: author?.id ?? s.identityId,
    entityType: 'sessions',
    entityId: s.id,
    fields: {
      session_id: s.id,
      session_type: s.type,
      api_session_id: s.apiSessionId,
      identity_id: s.identityId,
      service_id: s.serviceId,
      ...(reason !== undefined && { reason }),
      ...(author && author.id !== s.identityId && { author_id: author.id }),
    },
  };
}

/** JSON text of a string: quoted as it is when nothing in it needs escaping (ids), else by JSON.stringify. */
const PLAIN = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;
const jsonString = (v: string): string => (PLAIN.test(v) ? `"${v}"` : JSON.stringify(v));

/**
 * The `created` event of a new session made at `at` (its `createdAt` is `iso(at)`), for the store to insert with
 * it (store/sessions.ts): its id, actor and the text of its own fields (the common ones are the row's columns:
 * store/events.ts, `wholeBody`); its time is the session's `createdAt` and its entity the session, which the
 * store takes from the row. Built as text directly, on the session create's hot path: read back, the same event,
 * field for field and in the same order, as `storedEvent(at, sessionEvent(ctx, 'created', s))` makes (a unit
 * test holds them equal), in about a third of its CPU.
 */
export function sessionCreatedEvent(ctx: Ctx, s: SessionFacts & { createdAt: string }, at: Date): NewSessionEvent {
  const id = newEventId(at);
  const author = ctx.actor?.author;
  const actorId = author?.id ?? s.identityId;
  const body =
    `{"session_id":${jsonString(s.id)},"session_type":${jsonString(s.type)},` +
    `"api_session_id":${jsonString(s.apiSessionId)},"identity_id":${jsonString(s.identityId)},` +
    `"service_id":${jsonString(s.serviceId)}` +
    (author && author.id !== s.identityId ? `,"author_id":${JSON.stringify(author.id)}}` : '}');
  return { id, actorId, body };
}

/**
 * Records the `deleted` events of the sessions a deletion in the transaction `ctx.db` is about to take (run it
 * before the delete, in the same transaction, so the rows are still there to read).
 */
export async function recordSessionsEnding(
  ctx: Ctx,
  by: 'id' | 'apiSessionId' | 'identityId' | 'serviceId',
  ids: readonly string[],
  reason: SessionEndReason,
): Promise<void> {
  const rows = await sessionsWhere(ctx.db, by, ids);
  await recordEvents(
    ctx,
    rows.map((s) => sessionEvent(ctx, 'deleted', s, reason)),
  );
}
