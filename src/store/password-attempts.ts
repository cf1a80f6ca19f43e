/** The failed-password counter of password authenticators and the identity lock it leads to (queries only). */
import type { TypedExecutor } from './executor.js';

export interface AttemptIdentity {
  authPolicyId: string;
  disabledAt: string | null;
  disabledUntil: string | null;
}

/** The fields of an identity a password attempt is judged on. */
export function attemptIdentity(db: TypedExecutor, identityId: string): Promise<AttemptIdentity | undefined> {
  return db
    .selectFrom('identities')
    .select(['authPolicyId', 'disabledAt', 'disabledUntil'])
    .where('id', '=', identityId)
    .executeTakeFirst();
}

/** Adds `delta` (0 or 1) to the counter and answers the new value, or undefined when the row is gone. */
export async function addFailedAttempts(
  db: TypedExecutor,
  authenticatorId: string,
  delta: 0 | 1,
): Promise<number | undefined> {
  const row = await db
    .updateTable('authenticators')
    .set((eb) => ({ failedAttempts: eb(eb.fn.coalesce('failedAttempts', eb.lit(0)), '+', delta) }))
    .where('id', '=', authenticatorId)
    .returning('failedAttempts')
    .executeTakeFirst();
  return row === undefined ? undefined : Number(row.failedAttempts);
}

export async function resetFailedAttempts(db: TypedExecutor, authenticatorId: string): Promise<void> {
  await db.updateTable('authenticators').set({ failedAttempts: 0 }).where('id', '=', authenticatorId).execute();
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
