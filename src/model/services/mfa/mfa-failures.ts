/**
 * Wrong second-factor codes (docs/decisions.md "TOTP MFA and partial API sessions", "Guessing bound").
 *
 * Every wrong code presented against a verified enrollment is stored with the API session that sent it
 * (store/mfa-failures.ts), so the count holds across sessions, restarts and replicas. Counted over the last
 * 24 hours, per enrollment:
 * - at {@link TOTP_LOCK_AT} TOTP codes are refused unchecked, right or wrong; recovery codes still work;
 * - at {@link RECOVERY_LOCK_AT} recovery codes are refused too (only an admin's removal is left);
 * - the {@link SESSION_FAILURE_LIMIT}th from one API session ends that session, so every few guesses cost a
 *   password login.
 * The locks lift as the failures age out of the window. A correct code clears the wrong codes of its own
 * session (the user's typos), not those of other sessions: if it cleared everything, an attacker who paces
 * his guesses between the real user's sign-ins would get a fresh budget at each of them. So over any 24 hours
 * at most 100 TOTP codes and 200 codes in all are checked, whoever signs in meanwhile.
 */
import type { Executor } from '../../../store/db.js';
import { addMfaFailure, clearSessionMfaFailures, mfaFailureCounts } from '../../../store/mfa-failures.js';
import { iso, withDb, type Ctx } from '../../ctx.js';
import { DomainError } from '../../errors.js';
import { deleteApiSessions } from '../api-session/api-session.js';

export const FAILURE_WINDOW_MS = 24 * 60 * 60 * 1000;
export const TOTP_LOCK_AT = 100;
export const RECOVERY_LOCK_AT = 200;
export const SESSION_FAILURE_LIMIT = 5;

export type CodeKind = 'totp' | 'recovery';

/** Who presents a code: the API session and its identity. */
export interface MfaCaller {
  apiSessionId: string;
  identityId: string;
}

/** Whether a code of `kind` is refused unchecked while `failures` wrong codes are in the window. */
export const isLocked = (kind: CodeKind, failures: number): boolean =>
  failures >= (kind === 'totp' ? TOTP_LOCK_AT : RECOVERY_LOCK_AT);

export function lockedError(kind: CodeKind): DomainError {
  return new DomainError('MFA_INVALID_TOKEN', {
    causeMessage:
      kind === 'totp'
        ? `TOTP codes are refused after ${TOTP_LOCK_AT} wrong codes within 24 hours: use a recovery code, or ` +
          'try again later'
        : `MFA codes are refused after ${RECOVERY_LOCK_AT} wrong codes within 24 hours: try again later, or ` +
          'ask an administrator to remove the MFA enrollment',
  });
}

const windowStart = (ctx: Ctx) => iso(new Date(ctx.now().getTime() - FAILURE_WINDOW_MS));

/** The wrong codes of the last 24 hours against the enrollment: in all, and those of the caller's session. */
export const recentFailures = (ctx: Ctx, db: Executor, mfaId: string, caller: MfaCaller) =>
  mfaFailureCounts(db, mfaId, caller.apiSessionId, windowStart(ctx));

export interface FailureOutcome {
  /** Wrong codes in the window, this one included. */
  failures: number;
  sessionEnded: boolean;
}

/** Records a wrong code (inside the caller's transaction, which commits it); the session's 5th ends it. */
export async function recordFailure(
  ctx: Ctx,
  trx: Executor,
  mfaId: string,
  caller: MfaCaller,
): Promise<FailureOutcome> {
  const since = windowStart(ctx);
  await addMfaFailure(trx, mfaId, caller.apiSessionId, iso(ctx.now()), since);
  const counts = await mfaFailureCounts(trx, mfaId, caller.apiSessionId, since);
  const sessionEnded = counts.session >= SESSION_FAILURE_LIMIT;
  if (sessionEnded) await deleteApiSessions(withDb(ctx, trx), [caller.apiSessionId]);
  return { failures: counts.total, sessionEnded };
}

/** After the commit: an ended session and a lock reached go to the log at warn (ids only, never a code). */
export function logFailure(ctx: Ctx, caller: MfaCaller, o: FailureOutcome): void {
  const { identityId, apiSessionId } = caller;
  if (o.sessionEnded)
    ctx.log.warn({ identityId, apiSessionId }, `API session ended after ${SESSION_FAILURE_LIMIT} wrong MFA codes`);
  if (o.failures === TOTP_LOCK_AT)
    ctx.log.warn({ identityId }, `TOTP codes locked after ${TOTP_LOCK_AT} wrong MFA codes within 24 hours`);
  if (o.failures === RECOVERY_LOCK_AT)
    ctx.log.warn({ identityId }, `MFA recovery codes locked after ${RECOVERY_LOCK_AT} wrong codes within 24 hours`);
}

/** A correct code forgives its own session's wrong codes (inside the transaction that consumes it). */
export const clearOwnFailures = (trx: Executor, mfaId: string, caller: MfaCaller): Promise<void> =>
  clearSessionMfaFailures(trx, mfaId, caller.apiSessionId);
