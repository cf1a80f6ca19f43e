/**
 * The failed-password counter of `updb` authenticators and the lockout it leads to (decisions.md, "Lockout" and
 * "Attempt counting").
 *
 * An attempt is reserved (the counter incremented, `RETURNING` the new value) in one short transaction BEFORE its
 * Argon2 verification, which itself runs outside any transaction. Concurrent guesses therefore each get their own
 * number: at most `maxAttempts` of them are ever verified; a reservation beyond that is refused unverified and
 * locks the identity (this also recovers a counter left high by an attempt interrupted mid-way). A success
 * resets the counter. Password logins and self-service password changes share the counter.
 *
 * An unknown username runs the same statements on a decoy (an existing password authenticator, whose counter it
 * adds 0 to), so both failure paths read and write the same rows' worth of data (decisions.md: constant-time
 * failure path); every refusal likewise adds 0 rather than skipping the write.
 */
import { withTx } from '../../../store/db.js';
import { defineCache, storeCache } from '../../../store/runtime.js';
import {
  addFailedAttempts,
  attemptIdentity,
  disableIdentity,
  oldestPasswordAuthenticator,
  resetFailedAttempts,
} from '../../../store/password-attempts.js';
import { iso, withDb, type Ctx } from '../../ctx.js';
import type { AuthPolicy } from '../../resources/auth-policy.js';
import { policyForIdentity } from '../hooks/auth-policy.js';
import { isDisabled } from '../../resources/identity.js';
import { deleteIdentityApiSessions } from '../api-session/api-session.js';
import { recordEvents } from '../../events/event.js';
import { authenticationEvent } from '../../events/auth-events.js';

/** An id no row has: the decoy when there is no password authenticator at all. */
const NO_SUCH_ID = '~none~';

export interface AttemptTarget {
  authenticatorId: string;
  identityId: string;
}

export type RefusalReason = 'unknown' | 'disabled' | 'method not allowed' | 'too many attempts';

export type Reservation =
  { ok: true; target: AttemptTarget; attempt: number; policy: AuthPolicy } | { ok: false; reason: RefusalReason };

type LockRules = AuthPolicy['primary']['updb'];

/**
 * Reserves one password attempt for `target` (undefined: an unknown username). Refused when the identity is
 * disabled or `maxAttempts` attempts are already counted; for a login also when its policy does not allow
 * passwords or asks for a second factor nobody can answer yet (a self-service change is not a login).
 */
export async function reserveAttempt(
  ctx: Ctx,
  target: AttemptTarget | undefined,
  purpose: 'login' | 'change' = 'login',
): Promise<Reservation> {
  const subject = target ?? (await decoyFor(ctx));
  const reservation = await withTx(ctx.db, async (trx): Promise<Reservation & { counted: boolean }> => {
    const now = ctx.now();
    const identity = await attemptIdentity(trx, subject.identityId);
    const policy = await policyForIdentity(trx, identity?.authPolicyId);
    const refusal: RefusalReason | undefined =
      !target || !identity
        ? 'unknown'
        : isDisabled(identity, now)
          ? 'disabled'
          : purpose === 'login' && !policy.primary.updb.allowed
            ? 'method not allowed'
            : undefined;
    // A refusal adds 0: the same statement writes the same row, so it costs what counting costs.
    const counted = await addFailedAttempts(trx, subject.authenticatorId, refusal ? 0 : 1);
    if (refusal) return { ok: false, reason: refusal, counted: counted !== undefined };
    const attempt = counted ?? 1;
    const rules = policy.primary.updb;
    if (rules.maxAttempts > 0 && attempt > rules.maxAttempts) {
      await lockIdentity(withDb(ctx, trx), target!, rules);
      return { ok: false, reason: 'too many attempts', counted: true };
    }
    return { ok: true, target: target!, attempt, policy, counted: true };
  });
  // The decoy is gone (its authenticator was replaced): look for another one next time.
  if (!target && !reservation.counted) forgetDecoy(ctx);
  const { counted: _counted, ...result } = reservation;
  return result as Reservation;
}

/** The stand-in target of unknown usernames: the oldest password authenticator, remembered per store. */
const DECOY = defineCache('password-decoy', (): { target?: Promise<AttemptTarget> } => ({}));

function decoyFor(ctx: Ctx): Promise<AttemptTarget> {
  const read = () =>
    oldestPasswordAuthenticator(ctx.db).then((row) => row ?? { authenticatorId: NO_SUCH_ID, identityId: NO_SUCH_ID });
  const slot = storeCache(ctx.db, DECOY);
  if (!slot) return read();
  if (!slot.target) {
    const target = read();
    slot.target = target;
    target.catch(() => {
      if (slot.target === target) slot.target = undefined;
    });
  }
  return slot.target;
}

function forgetDecoy(ctx: Ctx): void {
  const slot = storeCache(ctx.db, DECOY);
  if (slot) slot.target = undefined;
}

/**
 * After a wrong password: the attempt is already counted; the attempt that reaches `maxAttempts` locks the
 * identity for `lockoutDurationMinutes` (0: until enabled). The locking attempt still answers 401.
 */
export async function recordFailedAttempt(ctx: Ctx, r: Extract<Reservation, { ok: true }>): Promise<void> {
  const rules = r.policy.primary.updb;
  if (rules.maxAttempts <= 0 || r.attempt < rules.maxAttempts) return;
  await withTx(ctx.db, async (trx) => {
    const identity = await attemptIdentity(trx, r.target.identityId);
    // A concurrent attempt may have locked it already; the lock is not extended.
    if (identity && !isDisabled(identity, ctx.now())) await lockIdentity(withDb(ctx, trx), r.target, rules);
  });
}

/** After a right password: the counter starts again. Call inside the transaction that completes the success. */
export async function clearAttempts(ctx: Ctx, authenticatorId: string): Promise<void> {
  await resetFailedAttempts(ctx.db, authenticatorId);
}

async function lockIdentity(ctx: Ctx, target: AttemptTarget, rules: LockRules): Promise<void> {
  const now = ctx.now();
  const until =
    rules.lockoutDurationMinutes > 0 ? iso(new Date(now.getTime() + rules.lockoutDurationMinutes * 60_000)) : null;
  await disableIdentity(ctx.db, target.identityId, iso(now), until);
  await clearAttempts(ctx, target.authenticatorId);
  await recordEvents(ctx, [
    authenticationEvent({
      eventType: 'lockout',
      method: 'updb',
      identityId: target.identityId,
      authenticatorId: target.authenticatorId,
      reason: 'too many failed attempts',
      until,
    }),
  ]);
  await deleteIdentityApiSessions(ctx, target.identityId);
  ctx.log.warn({ identityId: target.identityId }, 'identity locked after too many failed password attempts');
}
