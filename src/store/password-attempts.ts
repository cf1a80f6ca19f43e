/**
 * The failed-password counter of password authenticators and the identity lock it leads to (queries only).
 * The statements every login runs are fixed texts (direct.ts).
 */
import { hotRows, hotWrite } from './direct.js';
import type { TypedExecutor } from './executor.js';

export interface AttemptIdentity {
  authPolicyId: string;
  disabledAt: string | null;
  disabledUntil: string | null;
}

const ATTEMPT_IDENTITY = `select "authPolicyId", "disabledAt", "disabledUntil" from identities where id = ?`;
const ADD_FAILED_ATTEMPTS = `update authenticators set "failedAttempts" = coalesce("failedAttempts", 0) + ?
  where id = ? returning "failedAttempts"`;
const RESET_FAILED_ATTEMPTS = `update authenticators set "failedAttempts" = 0 where id = ?`;

/** The fields of an identity a password attempt is judged on. */
export async function attemptIdentity(db: TypedExecutor, identityId: string): Promise<AttemptIdentity | undefined> {
  const [row] = await hotRows<AttemptIdentity>(db, ATTEMPT_IDENTITY, [identityId]);
  return row;
}

/** Adds `delta` (0 or 1) to the counter and answers the new value, or undefined when the row is gone. */
export async function addFailedAttempts(
  db: TypedExecutor,
  authenticatorId: string,
  delta: 0 | 1,
): Promise<number | undefined> {
  const [row] = await hotRows<{ failedAttempts: number }>(db, ADD_FAILED_ATTEMPTS, [delta, authenticatorId]);
  return row === undefined ? undefined : Number(row.failedAttempts);
}

export async function resetFailedAttempts(db: TypedExecutor, authenticatorId: string): Promise<void> {
  await hotWrite(db, RESET_FAILED_ATTEMPTS, [authenticatorId]);
}

/** The oldest password authenticator, if any. */
export async function oldestPasswordAuthenticator(
  db: TypedExecutor,
): Promise<{ authenticatorId: string; identityId: string } | undefined> {
  const row = await db
    .selectFrom('authenticators')
    .select(['id', 'identityId'])
    .where('method', '=', 'updb')
    .orderBy('createdAt')
    .limit(1)
    .executeTakeFirst();
  return row && { authenticatorId: row.id, identityId: row.identityId };
}

/** Disables an identity from `at` until `until` (null: until an admin enables it). */
export async function disableIdentity(
  db: TypedExecutor,
  identityId: string,
  at: string,
  until: string | null,
): Promise<void> {
  await db
    .updateTable('identities')
    .set({ disabledAt: at, disabledUntil: until, updatedAt: at })
    .where('id', '=', identityId)
    .execute();
}
