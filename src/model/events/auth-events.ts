/**
 * `authentication` and `apiSession` events (parity: the reference's events of those namespaces and their
 * snake_case field names). Unlike the reference's, an apiSession event never carries the session's token.
 *
 * - authentication `success` | `fail` (one per attempt at `POST /authenticate`, with the method as `type`,
 *   the reason of a failure, the source address) and `lockout` (an identity locked by failed passwords);
 * - apiSession `created` (partial while second factors are outstanding), `refreshed` (a second factor passed;
 *   `fully_authenticated` when nothing is left), `deleted` (logout, removal) and `expired` (idle timeout).
 */
import { DomainError } from '../errors.js';
import { withDb, type Ctx } from '../ctx.js';
import { withTx } from '../../store/db.js';
import { defineCache, storeState } from '../../store/runtime.js';
import { recordEvents, type EventRecord } from './event.js';

/** The reference's names of the primary methods. */
export type AuthMethodName = 'updb' | 'cert' | 'ext-jwt';

/** The method names of `POST /authenticate?method=…` as events name them. */
export const AUTH_METHOD: Readonly<Record<string, AuthMethodName>> = {
  password: 'updb',
  cert: 'cert',
  'ext-jwt': 'ext-jwt',
};

export interface AuthenticationFacts {
  eventType: 'success' | 'fail' | 'lockout';
  method?: string | undefined;
  identityId?: string | undefined;
  authenticatorId?: string | undefined;
  username?: string | undefined;
  remoteAddress?: string | undefined;
  reason?: string | undefined;
  /** For a lockout: until when (null: until an admin enables the identity). */
  until?: string | null | undefined;
  /** Fields of one flow (the OIDC login's `flow`, `api_session_id`); never a secret. */
  extra?: Record<string, unknown> | undefined;
}

export function authenticationEvent(f: AuthenticationFacts): EventRecord {
  return {
    namespace: 'authentication',
    typeField: 'event_type',
    eventType: f.eventType,
    actorId: f.identityId,
    entityType: 'identities',
    entityId: f.identityId,
    fields: {
      ...(f.method !== undefined && { type: f.method }),
      authenticator_id: f.authenticatorId ?? '',
      identity_id: f.identityId ?? '',
      ...(f.username !== undefined && { username: f.username }),
      ...(f.remoteAddress !== undefined && { remote_address: f.remoteAddress }),
      success: f.eventType === 'success',
      reason: f.reason ?? '',
      ...(f.until !== undefined && { until: f.until }),
      ...f.extra,
    },
  };
}

export interface ApiSessionFacts {
  eventType: 'created' | 'refreshed' | 'deleted' | 'expired';
  id: string;
  identityId: string;
  ipAddress?: string | undefined;
  /** `jwt` for an OIDC login's session (the reference's name), `legacy` (the default) otherwise. */
  sessionType?: 'legacy' | 'jwt' | undefined;
  extra?: Record<string, unknown>;
}

export function apiSessionEvent(f: ApiSessionFacts): EventRecord {
  return {
    namespace: 'apiSession',
    typeField: 'event_type',
    eventType: f.eventType,
    actorId: f.identityId,
    entityType: 'api-sessions',
    entityId: f.id,
    fields: {
      // The reference names the session `id`; here `id` is every event's own (docs/decisions.md, "Events").
      api_session_id: f.id,
      type: f.sessionType ?? 'legacy',
      identity_id: f.identityId,
      ...(f.ipAddress !== undefined && { ip_address: f.ipAddress }),
      ...f.extra,
    },
  };
}

/** Why an authentication failed, as its event says: the model's note, else the error's code. */
export function failureReason(e: unknown): { reason: string; identityId?: string; authenticatorId?: string } {
  if (e instanceof DomainError) {
    if (e.audit) return e.audit;
    if (e.code === 'RATE_LIMITED') return { reason: 'rate limited' };
    return { reason: e.code.toLowerCase().replace(/_/g, ' ') };
  }
  return { reason: 'error' };
}

/**
 * Rate-limit refusals are answered before any store work, so a flood of them must not become a flood of writes:
 * at most one event per source address and username a minute, carrying how many refusals went unrecorded
 * since the previous one (`suppressed`). Kept per store (bounded; the oldest keys go first).
 */
const REFUSAL_WINDOW_MS = 60_000;
const MAX_REFUSAL_KEYS = 10_000;
const REFUSALS = defineCache('rate-limit-refusal-events', () => new Map<string, { at: number; suppressed: number }>());

/** Whether this refusal is recorded, and how many were not since the last one that was (undefined: not recorded). */
function refusalToRecord(ctx: Ctx, key: string): number | undefined {
  const seen = storeState(ctx.db, REFUSALS);
  if (!seen) return 0;
  const now = ctx.now().getTime();
  const last = seen.get(key);
  if (last && now - last.at < REFUSAL_WINDOW_MS) {
    last.suppressed++;
    return undefined;
  }
  seen.delete(key);
  if (seen.size >= MAX_REFUSAL_KEYS) seen.delete(seen.keys().next().value as string);
  seen.set(key, { at: now, suppressed: 0 });
  return last?.suppressed ?? 0;
}

/**
 * Refusals answered before any limiter or store work can count them (a rate limit; an OIDC login step naming no
 * live authorization request): recorded at most once a minute per source, method and username, as above.
 */
const FLOODABLE_REASONS: ReadonlySet<string> = new Set(['rate limited', 'unknown auth request']);

/** Records a failed authentication in a transaction of its own (what it changed, if anything, is committed). */
export async function recordAuthFailure(
  ctx: Ctx,
  facts: {
    method: string | undefined;
    username?: string | undefined;
    remoteAddress: string;
    extra?: Record<string, unknown> | undefined;
  },
  error: unknown,
): Promise<void> {
  const why = failureReason(error);
  let suppressed: number | undefined;
  if (FLOODABLE_REASONS.has(why.reason)) {
    suppressed = refusalToRecord(ctx, `${facts.remoteAddress}|${facts.method ?? ''}|${facts.username ?? ''}`);
    if (suppressed === undefined) return;
  }
  const event = authenticationEvent({
    eventType: 'fail',
    method: facts.method === undefined ? undefined : (AUTH_METHOD[facts.method] ?? facts.method),
    username: facts.username,
    remoteAddress: facts.remoteAddress,
    reason: why.reason,
    identityId: why.identityId,
    authenticatorId: why.authenticatorId,
    extra: facts.extra,
  });
  if (suppressed !== undefined) event.fields.suppressed = suppressed;
  await withTx(ctx.db, (trx) => recordEvents(withDb(ctx, trx), [event]));
}
