/**
 * Brings the stored token hashes in line with the token key, once at start (docs/decisions.md, "Token storage").
 *
 * A stored hash that is not the hash of the token derived from the current key means the record predates the
 * key: a store migrated from clear tokens (migration 0006), or a token key that was lost and replaced. Such a
 * token could no longer be shown correctly, so:
 * - enrollments are re-keyed: a new token (derived) and a new JWT with the same expiry; the old token and JWT
 *   stop working;
 * - API sessions and sessions are ended; clients authenticate again.
 * Everything runs in one transaction. Costs one HMAC per stored row, which is negligible next to a start.
 */
import { withTx } from '../../../store/db.js';
import {
  deleteByIds,
  enrollmentKeying,
  setEnrollmentSecrets,
  tokenHashesOf,
  type TokenTable,
} from '../../../store/token-records.js';
import { iso, withDb, type Ctx } from '../../ctx.js';
import { enrollmentSecrets } from '../../enrollments/credentials.js';
import { tokenHash, type TokenKind } from '../../tokens.js';
import { enrollmentSubject } from './enrollment.js';
import { recordSessionsEnding } from '../../events/session-events.js';
import { recordApiSessionsEnding } from '../api-session/api-session.js';

export interface TokenReconciliation {
  enrollmentsRekeyed: number;
  apiSessionsEnded: number;
  sessionsEnded: number;
}

async function staleIds(ctx: Ctx, table: TokenTable, kind: TokenKind): Promise<string[]> {
  const rows = await tokenHashesOf(ctx.db, table);
  return rows.filter((r) => r.tokenHash !== tokenHash(ctx.tokens.token(kind, r.id))).map((r) => r.id);
}

export async function reconcileTokens(ctx: Ctx): Promise<TokenReconciliation> {
  return withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    const out: TokenReconciliation = { enrollmentsRekeyed: 0, apiSessionsEnded: 0, sessionsEnded: 0 };

    const staleSessions = await staleIds(tctx, 'sessions', 'session');
    await recordSessionsEnding(tctx, 'id', staleSessions, 'token-key-changed');
    await deleteByIds(trx, 'sessions', staleSessions);
    out.sessionsEnded = staleSessions.length;
    // Their sessions and API-session certificates go with them (foreign-key cascades).
    const staleApiSessions = await staleIds(tctx, 'api_sessions', 'api-session');
    await recordApiSessionsEnding(tctx, staleApiSessions, 'deleted');
    await deleteByIds(trx, 'api_sessions', staleApiSessions);
    out.apiSessionsEnded = staleApiSessions.length;

    const staleEnrollments = await staleIds(tctx, 'enrollments', 'enrollment');
    if (staleEnrollments.length > 0 && !ctx.pki) {
      ctx.log.warn(
        { count: staleEnrollments.length },
        'enrollments need new tokens but this context cannot sign JWTs; left as they are',
      );
      return out;
    }
    for (const id of staleEnrollments) {
      const row = await enrollmentKeying(trx, id);
      const secrets = await enrollmentSecrets(tctx, {
        id,
        method: row.method,
        subject: enrollmentSubject(row),
        expiresAt: new Date(row.expiresAt),
      });
      await setEnrollmentSecrets(trx, id, secrets, iso(ctx.now()));
    }
    out.enrollmentsRekeyed = staleEnrollments.length;
    return out;
  });
}
