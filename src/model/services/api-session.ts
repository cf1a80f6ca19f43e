/**
 * API session lifecycle: creation after a successful primary authentication, lookup by token on every
 * request (which counts as activity), idle expiry and removal (parity: docs/reference-notes.md §4.1–4.3).
 *
 * Activity is written at a granularity of a tenth of the timeout (at most once a second), so a busy
 * client does not turn every read into a write while expiry stays accurate for short timeouts.
 */
import {
  apiSessionByTokenHash,
  deleteApiSessionsByIds,
  deleteApiSessionsOfIdentity,
  idleApiSessionIds,
  insertApiSession,
  touchApiSession,
} from '../../store/api-sessions.js';
import { dropApiSession, dropIdentityApiSessions } from '../posture/state.js';
import type { Ctx } from '../ctx.js';
import { iso } from '../ctx.js';
import { newId, isUuid } from '../ids.js';
import { tokenHash } from '../tokens.js';
import { apiSessions } from '../resources/api-session.js';
import { isDisabled } from '../resources/identity.js';
import { getEntity } from '../crud.js';
import { renderRecord } from '../render.js';
import type { Row } from '../resource.js';

export interface SessionIdentity {
  id: string;
  name: string;
  isAdmin: boolean;
  isDefaultAdmin: boolean;
  authPolicyId: string;
}

export interface Principal {
  apiSessionId: string;
  token: string;
  identity: SessionIdentity;
  /** Outstanding secondary-factor queries: non-empty means partially authenticated. */
  authQueries: unknown[];
}

export interface NewApiSession {
  identityId: string;
  authenticatorId: string;
  ipAddress: string;
  configTypes: string[];
  authQueries?: unknown[];
  isMfaRequired?: boolean;
}

export async function createApiSession(ctx: Ctx, s: NewApiSession): Promise<string> {
  const now = iso(ctx.now());
  const id = newId(16);
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
    createdAt: now,
  });
  return id;
}

const activityGranularityMs = (ctx: Ctx) => Math.min(1000, Math.max(10, ctx.settings.sessionTimeoutMs / 10));

const isExpired = (ctx: Ctx, lastActivityAt: string, now: Date) =>
  new Date(lastActivityAt).getTime() + ctx.settings.sessionTimeoutMs <= now.getTime();

/**
 * The principal behind a session token, or null when the token is unknown, expired, or its identity is
 * disabled. A valid lookup records activity.
 */
export async function resolveToken(ctx: Ctx, token: string): Promise<Principal | null> {
  if (!isUuid(token)) return null;
  // Every authenticated request runs this: the store keeps it a prepared template query (store/api-sessions.ts).
  const row = await apiSessionByTokenHash(ctx.db, tokenHash(token));
  if (!row) return null;
  const now = ctx.now();
  if (isExpired(ctx, row.lastActivityAt, now)) {
    await deleteApiSessions(ctx, [row.sessionId]);
    return null;
  }
  if (isDisabled(row, now)) return null;
  if (now.getTime() - new Date(row.lastActivityAt).getTime() >= activityGranularityMs(ctx)) {
    await touchApiSession(ctx.db, row.sessionId, iso(now));
  }
  return {
    apiSessionId: row.sessionId,
    token,
    identity: {
      id: row.identityId,
      name: row.name,
      isAdmin: row.isAdmin,
      isDefaultAdmin: row.isDefaultAdmin,
      authPolicyId: row.authPolicyId,
    },
    authQueries: row.authQueries,
  };
}

/** Removes API sessions; what depends on them goes with them through the store's cascades. */
export const deleteApiSessions = (ctx: Ctx, ids: string[]): Promise<number> => {
  // Posture scoped to an API session goes with it (docs/reference-notes.md §4.2).
  ids.forEach(dropApiSession);
  return deleteApiSessionsByIds(ctx.db, ids);
};

export const deleteIdentityApiSessions = (ctx: Ctx, identityId: string): Promise<number> => {
  dropIdentityApiSessions(identityId);
  return deleteApiSessionsOfIdentity(ctx.db, identityId);
};

/** Removes every API session idle for longer than the timeout, in batches. */
export async function sweepExpiredApiSessions(ctx: Ctx): Promise<number> {
  const cutoff = iso(new Date(ctx.now().getTime() - ctx.settings.sessionTimeoutMs));
  let total = 0;
  for (;;) {
    const batch = await idleApiSessionIds(ctx.db, cutoff, 500);
    if (batch.length === 0) return total;
    total += await deleteApiSessions(ctx, batch);
    if (batch.length < 500) return total;
  }
}

/** The current-API-session record: the stored session plus `expiresAt` and `expirationSeconds`. */
export async function currentApiSessionDetail(ctx: Ctx, apiSessionId: string): Promise<Record<string, unknown>> {
  const row: Row = await getEntity(ctx, apiSessions, apiSessionId);
  const out = renderRecord(apiSessions, row);
  out.expiresAt = iso(new Date(new Date(row.lastActivityAt as string).getTime() + ctx.settings.sessionTimeoutMs));
  out.expirationSeconds = Math.round(ctx.settings.sessionTimeoutMs / 1000);
  return out;
}
