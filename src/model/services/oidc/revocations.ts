/**
 * Revocations of controller-issued JWTs (docs/reference-notes.md §14.9): records keyed by the revoked thing's
 * id, `JTI` (a token), `API_SESSION` (the `z_asid` of every token of one login) or `IDENTITY` (every token of the
 * identity issued before the revocation's cutoff, at one-second granularity). They last as long as the longest
 * token lifetime, then the sweeper drops them. Legacy `zt-session` API sessions are not affected.
 */
import {
  deleteExpiredRevocations,
  putRevocation,
  revocationById,
  revocationsOf,
  type RevocationType,
} from '../../../store/oidc.js';
import { withTx } from '../../../store/db.js';
import { recordEntityChange } from '../../events/entity-change.js';
import { revocations } from '../../resources/revocation.js';
import { deleteExpiredAuthRequests, deleteExpiredRefreshTokens } from '../../../store/oidc.js';
import { iso, withDb, type Ctx } from '../../ctx.js';
import { DomainError, notFound } from '../../errors.js';
import { isUuid } from '../../ids.js';
import { identityExists } from '../../../store/identities.js';
import { oidcSettings } from './auth-requests.js';

export const REVOCATION_TYPES: readonly RevocationType[] = ['JTI', 'IDENTITY', 'API_SESSION'];

/** The ids of a token that revocations may name. */
export interface TokenIds {
  jti: string;
  identityId: string;
  apiSessionId: string;
  /** The token's `iat`, epoch seconds. */
  issuedAt: number;
}

/** How long a revocation is kept: the longest token lifetime (refresh, 24 h by default). */
export const revocationLifetimeMs = (ctx: Ctx): number => {
  const s = oidcSettings(ctx);
  return Math.max(s.accessTokenMs, s.refreshTokenMs, s.idTokenMs);
};

/** The type of the first revocation that refuses a token with these ids, or undefined when none does. */
export async function revocationOf(ctx: Ctx, ids: TokenIds): Promise<RevocationType | undefined> {
  const found = await revocationsOf(ctx.db, [ids.jti, ids.identityId, ids.apiSessionId], iso(ctx.now()));
  for (const r of found) {
    if (r.type === 'JTI' && r.id === ids.jti) return r.type;
    if (r.type === 'API_SESSION' && r.id === ids.apiSessionId) return r.type;
    // Tokens issued at or after the cutoff's second survive it.
    if (
      r.type === 'IDENTITY' &&
      r.id === ids.identityId &&
      ids.issuedAt < Math.floor(Date.parse(r.issuedBefore) / 1000)
    )
      return r.type;
  }
  return undefined;
}

/**
 * Creates or replaces a revocation with the cutoff now, and records it (an entityChange of `revocations`, created
 * or updated, in the same transaction); answers its id. A refresh's rotation revokes the replaced token without
 * this: the refresh is its session's event (token-grants.ts).
 */
export async function revoke(
  ctx: Ctx,
  r: { id: string; type: RevocationType; tags?: Record<string, unknown>; expiresAt?: Date },
): Promise<string> {
  const now = ctx.now();
  await withTx(ctx.db, async (trx) => {
    const before = await revocationById(trx, r.id);
    const after = {
      id: r.id,
      type: r.type,
      createdAt: before?.createdAt ?? iso(now),
      updatedAt: iso(now),
      tags: r.tags ?? {},
      expiresAt: iso(r.expiresAt ?? new Date(now.getTime() + revocationLifetimeMs(ctx))),
      issuedBefore: iso(now),
    };
    await putRevocation(trx, after);
    await recordEntityChange(
      withDb(ctx, trx),
      revocations,
      r.id,
      before ? 'updated' : 'created',
      before && { ...before },
      { ...after },
    );
  });
  return r.id;
}

/** The sweeper's part: expired revocations, refresh-token records and authorization requests go. */
export async function sweepOidcState(ctx: Ctx): Promise<number> {
  const now = iso(ctx.now());
  return (
    (await deleteExpiredRevocations(ctx.db, now)) +
    (await deleteExpiredRefreshTokens(ctx.db, now)) +
    (await deleteExpiredAuthRequests(ctx.db, now))
  );
}

/**
 * `POST /revocations` (docs/reference-notes.md §14.9): an `IDENTITY` must exist (404), a `JTI` or `API_SESSION`
 * id must be a UUID (400 INVALID_FIELD on `id`). Posting an id again replaces the revocation and moves its cutoff.
 */
export async function createRevocation(
  ctx: Ctx,
  body: { id: string; type: RevocationType; tags?: Record<string, unknown> },
): Promise<string> {
  if (body.type === 'IDENTITY') {
    if (!(await identityExists(ctx.db, body.id))) throw notFound(body.id, 'identity');
  } else if (!isUuid(body.id)) {
    throw new DomainError('INVALID_FIELD', {
      cause: { field: 'id', reason: `a ${body.type} revocation's id must be a UUID`, value: body.id },
      causeMessage: `id: a ${body.type} revocation's id must be a UUID`,
    });
  }
  return revoke(ctx, body);
}
