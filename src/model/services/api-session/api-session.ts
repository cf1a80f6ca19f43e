/**
 * API session lifecycle: creation after a successful primary authentication, lookup by token on every
 * request (which counts as activity), idle expiry and removal (parity: docs/reference-notes.md §4.1–4.3).
 *
 * Activity is written at a granularity of a tenth of the timeout (at most once a second), so a busy
 * client does not turn every read into a write while expiry stays accurate for short timeouts.
 */
import {
  apiSessionOwners,
  apiSessionByTokenHash,
  deleteApiSessionsByIds,
  apiSessionIdsOfIdentity,
  idleApiSessionIds,
  insertApiSession,
  touchApiSession,
} from '../../../store/api-sessions.js';
import type { Ctx } from '../../ctx.js';
import { iso } from '../../ctx.js';
import { newEntityId, isUuid } from '../../ids.js';
import { tokenHash } from '../../tokens.js';
import { apiSessions } from '../../resources/api-session.js';
import { isDisabled } from '../../resources/identity.js';
import { getEntity } from '../../crud.js';
import { renderRecord } from '../../render.js';
import type { Row } from '../../resource.js';
import { policyForIdentity } from '../hooks/auth-policy.js';
import type { AuthPolicy } from '../../resources/auth-policy.js';
import { cachedPrincipal, forgetPrincipal, principalGeneration, rememberPrincipal } from './api-session-cache.js';
import type { CachedPrincipal } from './api-session-cache.js';
import type { SessionIdentity } from './session-identity.js';
import { textOf } from '../../row.js';
import { certExtendRequest } from '../../../store/authenticators.js';
import { withDb } from '../../ctx.js';
import { withTx } from '../../../store/db.js';
import { recordEvents } from '../../events/event.js';
import { apiSessionEvent } from '../../events/auth-events.js';
import { recordSessionsEnding } from '../../events/session-events.js';

export interface Principal {
  apiSessionId: string;
  token: string;
  identity: SessionIdentity;
  /** Outstanding secondary-factor queries: non-empty means partially authenticated. */
  authQueries: unknown[];
  /** The auth policy's required secondary ext-JWT signer, when known (null: none); ext-jwt-secondary.ts. */
  extJwtSigner?: string | null;
  /** Why this request's bearer JWT did not meet the policy's secondary ext-JWT requirement (ext-jwt-secondary.ts). */
  extJwtRefusal?: 'missing' | 'invalid' | 'expired';
  /** Set when the request was authenticated by an OIDC access token (model/services/oidc/bearer.ts). */
  oidc?: OidcBearer;
}

/** What an OIDC bearer request carries besides its API session. */
export interface OidcBearer {
  /** The access token's claims, as verified. */
  claims: Record<string, unknown>;
}

export interface NewApiSession {
  identityId: string;
  authenticatorId: string;
  ipAddress: string;
  configTypes: string[];
  authQueries?: unknown[];
  isMfaRequired?: boolean;
  /** Made by an OIDC login: used with its bearer tokens only (model/services/oidc/). */
  isOidc?: boolean;
}

export async function createApiSession(ctx: Ctx, s: NewApiSession & { id?: string }): Promise<string> {
  const now = iso(ctx.now());
  const id = s.id ?? newEntityId();
  await insertApiSession(ctx.db, {
    id,
    // The token is derived from the id (model/tokens.ts); the store keeps only its hash.
    tokenHash: tokenHash(ctx.tokens.token('api-session', id)),
    identityId: s.identityId,
    authenticatorId: s.authenticatorId,
    ipAddress: s.ipAddress,
    configTypes: s.configTypes,
    authQueries: s.authQueries ?? [],
    isMfaRequired: s.isMfaRequired ?? false,
    isOidc: s.isOidc ?? false,
    createdAt: now,
  });
  return id;
}

export const activityGranularityMs = (ctx: Ctx) => Math.min(1000, Math.max(10, ctx.settings.sessionTimeoutMs / 10));

export const isExpired = (ctx: Ctx, lastActivityMs: number, now: Date) =>
  lastActivityMs + ctx.settings.sessionTimeoutMs <= now.getTime();

/** The store's answer for a token, as the cache keeps it (api-session-cache.ts). */
async function lookupToken(ctx: Ctx, token: string): Promise<CachedPrincipal | undefined> {
  const genBefore = principalGeneration(ctx.db);
  // Every cache miss runs this: the store keeps it a prepared template query (store/api-sessions.ts).
  const row = await apiSessionByTokenHash(ctx.db, tokenHash(token));
  if (!row) return undefined;
  // The policy read with the session; a policy id that names no policy falls back to the default's.
  const secondary =
    row.policySecondary !== null
      ? (row.policySecondary as AuthPolicy['secondary'])
      : (await policyForIdentity(ctx.db, row.authPolicyId)).secondary;
  const found: CachedPrincipal = {
    sessionId: row.sessionId,
    lastActivityMs: new Date(row.lastActivityAt).getTime(),
    authQueries: row.authQueries,
    identity: {
      id: row.identityId,
      name: row.name,
      isAdmin: row.isAdmin,
      isDefaultAdmin: row.isDefaultAdmin,
      authPolicyId: row.authPolicyId,
    },
    disabledAt: row.disabledAt,
    disabledUntil: row.disabledUntil,
    extJwtSigner: secondary?.requireExtJwtSigner ?? null,
  };
  rememberPrincipal(ctx.db, token, genBefore, found);
  return found;
}

/**
 * The principal behind a session token, or null when the token is unknown, expired, or its identity is
 * disabled. A valid lookup records activity. Answers come from memory while no write could have changed
 * them (api-session-cache.ts); expiry and the disabled period are judged on every request.
 */
export async function resolveToken(ctx: Ctx, token: string): Promise<Principal | null> {
  if (!isUuid(token)) return null;
  const cached = cachedPrincipal(ctx.db, token);
  let found = cached ?? (await lookupToken(ctx, token));
  if (!found) return null;
  const now = ctx.now();
  if (cached && isExpired(ctx, found.lastActivityMs, now)) {
    // The cache holds this controller's last view of the activity time. Replicas sharing the store record
    // activity without telling each other (the touch moves no change counter, migration 0015): the session
    // may have been used through another one since, so the stored time decides.
    forgetPrincipal(ctx.db, token);
    found = await lookupToken(ctx, token);
    if (!found) return null;
  }
  if (isExpired(ctx, found.lastActivityMs, now)) {
    forgetPrincipal(ctx.db, token);
    await deleteApiSessions(ctx, [found.sessionId], 'expired');
    return null;
  }
  if (isDisabled(found, now)) return null;
  if (now.getTime() - found.lastActivityMs >= activityGranularityMs(ctx)) {
    found.lastActivityMs = now.getTime();
    await touchApiSession(ctx.db, found.sessionId, iso(now));
  }
  return {
    apiSessionId: found.sessionId,
    token,
    identity: found.identity,
    authQueries: found.authQueries,
    extJwtSigner: found.extJwtSigner,
  };
}

/**
 * What {@link resolveToken} answers, when the principal cache alone decides it: a kept, fully authenticated
 * principal that is neither expired nor disabled, with no activity to record and no secondary ext-JWT to check.
 * Undefined whenever anything else must happen (then `resolveToken`, which also refuses what must be refused).
 */
export function resolveTokenNow(ctx: Ctx, token: string): Principal | undefined {
  const found = cachedPrincipal(ctx.db, token);
  if (!found || found.authQueries.length > 0 || found.extJwtSigner !== null) return undefined;
  const now = ctx.now();
  if (isExpired(ctx, found.lastActivityMs, now) || isDisabled(found, now)) return undefined;
  if (now.getTime() - found.lastActivityMs >= activityGranularityMs(ctx)) return undefined;
  return {
    apiSessionId: found.sessionId,
    token,
    identity: found.identity,
    authQueries: found.authQueries,
    extJwtSigner: found.extJwtSigner,
  };
}

/**
 * Records the events of API sessions a deletion in the transaction `ctx.db` is about to take, and of the
 * sessions they take with them (run before the delete: the rows are read).
 */
export async function recordApiSessionsEnding(
  ctx: Ctx,
  ids: readonly string[],
  why: 'deleted' | 'expired',
  opts: { sessions: boolean } = { sessions: true },
): Promise<void> {
  const gone = await apiSessionOwners(ctx.db, ids);
  if (opts.sessions)
    await recordSessionsEnding(
      ctx,
      'apiSessionId',
      ids,
      why === 'expired' ? 'api-session-expired' : 'api-session-deleted',
    );
  await recordEvents(
    ctx,
    gone.map((g) =>
      apiSessionEvent({
        eventType: why,
        id: g.id,
        identityId: g.identityId,
        ipAddress: g.ipAddress,
        sessionType: g.isOidc ? 'jwt' : 'legacy',
      }),
    ),
  );
}

/**
 * Removes API sessions; what depends on them goes with them through the store's cascades, their posture too
 * (docs/reference-notes.md §4.2).
 */
export const deleteApiSessions = (ctx: Ctx, ids: string[], why: 'deleted' | 'expired' = 'deleted'): Promise<number> =>
  withTx(ctx.db, async (trx) => {
    // Each session's event with its removal.
    await recordApiSessionsEnding(withDb(ctx, trx), ids, why);
    return deleteApiSessionsByIds(trx, ids);
  });

/** Removes an identity's API sessions (it was disabled or locked out), with their events. */
export const deleteIdentityApiSessions = (ctx: Ctx, identityId: string): Promise<number> =>
  withTx(ctx.db, async (trx) => deleteApiSessions(withDb(ctx, trx), await apiSessionIdsOfIdentity(trx, identityId)));

/** Removes every API session idle for longer than the timeout, in batches. */
export async function sweepExpiredApiSessions(ctx: Ctx): Promise<number> {
  const cutoff = iso(new Date(ctx.now().getTime() - ctx.settings.sessionTimeoutMs));
  let total = 0;
  for (;;) {
    const batch = await idleApiSessionIds(ctx.db, cutoff, 500);
    if (batch.length === 0) return total;
    total += await deleteApiSessions(ctx, batch, 'expired');
    if (batch.length < 500) return total;
  }
}

/** The current-API-session record: the stored session plus `expiresAt` and `expirationSeconds`. */
export async function currentApiSessionDetail(ctx: Ctx, apiSessionId: string): Promise<Record<string, unknown>> {
  const row: Row = await getEntity(ctx, apiSessions, apiSessionId);
  const out = renderRecord(apiSessions, row);
  out.expiresAt = iso(new Date(new Date(textOf(row, 'lastActivityAt')).getTime() + ctx.settings.sessionTimeoutMs));
  out.expirationSeconds = Math.round(ctx.settings.sessionTimeoutMs / 1000);
  // An administrator asked this login's certificate to be extended (`request-extend`): the SDK then extends it.
  const asked = row.authenticatorId ? await certExtendRequest(ctx.db, String(row.authenticatorId)) : undefined;
  out.isCertExtendRequested = asked?.extend ?? false;
  out.isCertKeyRollRequested = asked?.rollKeys ?? false;
  return out;
}
