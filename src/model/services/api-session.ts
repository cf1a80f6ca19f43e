/**
 * API session lifecycle: creation after a successful primary authentication, lookup by token on every
 * request (which counts as activity), idle expiry and removal (parity: docs/reference-notes.md §4.1–4.3).
 *
 * Activity is written at a granularity of a tenth of the timeout (at most once a second), so a busy
 * client does not turn every read into a write while expiry stays accurate for short timeouts.
 */
import { sql } from 'kysely';
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

interface TokenRow {
  sessionId: string;
  lastActivityAt: string;
  authQueries: string;
  identityId: string;
  name: string;
  isAdmin: number;
  isDefaultAdmin: number;
  authPolicyId: string;
  disabledAt: string | null;
  disabledUntil: string | null;
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
  await ctx.db
    .insertInto('api_sessions')
    .values({
      id,
      createdAt: now,
      updatedAt: now,
      tags: '{}',
      isSystem: 0,
      // The token is derived from the id (model/tokens.ts); the store keeps only its hash.
      tokenHash: tokenHash(ctx.tokens.token('api-session', id)),
      identityId: s.identityId,
      authenticatorId: s.authenticatorId,
      ipAddress: s.ipAddress,
      configTypes: JSON.stringify(s.configTypes),
      authQueries: JSON.stringify(s.authQueries ?? []),
      isMfaRequired: s.isMfaRequired ? 1 : 0,
      isMfaComplete: 0,
      lastActivityAt: now,
    })
    .execute();
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
  // Every authenticated request runs this: a template query skips the query builder's per-call compile (~4x cheaper).
  const { rows } = await sql<TokenRow>`select s.id as "sessionId", s."lastActivityAt", s."authQueries", i.id as "identityId", i.name,
      i."isAdmin", i."isDefaultAdmin", i."authPolicyId", i."disabledAt", i."disabledUntil"
    from api_sessions s join identities i on i.id = s."identityId" where s."tokenHash" = ${tokenHash(token)}`.execute(ctx.db);
  const row = rows[0];
  if (!row) return null;
  const now = ctx.now();
  if (isExpired(ctx, row.lastActivityAt, now)) {
    await deleteApiSessions(ctx, [row.sessionId]);
    return null;
  }
  if (isDisabled(row, now)) return null;
  if (now.getTime() - new Date(row.lastActivityAt).getTime() >= activityGranularityMs(ctx)) {
    await ctx.db.updateTable('api_sessions').set({ lastActivityAt: iso(now) }).where('id', '=', row.sessionId).execute();
  }
  return {
    apiSessionId: row.sessionId,
    token,
    identity: {
      id: row.identityId,
      name: row.name,
      isAdmin: row.isAdmin === 1,
      isDefaultAdmin: row.isDefaultAdmin === 1,
      authPolicyId: row.authPolicyId,
    },
    authQueries: JSON.parse(row.authQueries),
  };
}

/** Removes API sessions; what depends on them goes with them through the store's cascades. */
export async function deleteApiSessions(ctx: Ctx, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const res = await ctx.db.deleteFrom('api_sessions').where('id', 'in', ids).executeTakeFirst();
  return Number(res.numDeletedRows);
}

export async function deleteIdentityApiSessions(ctx: Ctx, identityId: string): Promise<number> {
  const res = await ctx.db.deleteFrom('api_sessions').where('identityId', '=', identityId).executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Removes every API session idle for longer than the timeout, in batches. */
export async function sweepExpiredApiSessions(ctx: Ctx): Promise<number> {
  const cutoff = iso(new Date(ctx.now().getTime() - ctx.settings.sessionTimeoutMs));
  let total = 0;
  for (;;) {
    const batch = await ctx.db.selectFrom('api_sessions').select('id').where('lastActivityAt', '<=', cutoff).limit(500).execute();
    if (batch.length === 0) return total;
    total += await deleteApiSessions(ctx, batch.map((b: { id: string }) => b.id));
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
