/** Authenticators: lookups by owner and method, and the owner's failed-attempt reset (queries only). */
import type { TypedExecutor } from './executor.js';

/** The id of an identity's authenticator of one method; undefined when it has none. */
export async function authenticatorIdOf(db: TypedExecutor, identityId: string, method: string): Promise<string | undefined> {
  const row = await db.selectFrom('authenticators').select('id').where('identityId', '=', identityId).where('method', '=', method).executeTakeFirst();
  return row?.id;
}

/** An authenticator's owner and method; undefined when it does not exist. */
export function authenticatorOwner(db: TypedExecutor, id: string): Promise<{ identityId: string; method: string } | undefined> {
  return db.selectFrom('authenticators').select(['identityId', 'method']).where('id', '=', id).executeTakeFirst();
}

export interface AuthenticatorSummary {
  id: string;
  identityId: string;
  method: string;
  username: string | null;
  fingerprint: string | null;
}

/** The authenticators of some identities (a page of identity records). */
export function authenticatorsOfIdentities(db: TypedExecutor, identityIds: readonly string[]): Promise<AuthenticatorSummary[]> {
  if (identityIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('authenticators').select(['id', 'identityId', 'method', 'username', 'fingerprint']).where('identityId', 'in', identityIds).execute();
}

/** Clears the failed-password counters of an identity's authenticators. */
export async function resetIdentityFailedAttempts(db: TypedExecutor, identityId: string): Promise<void> {
  await db.updateTable('authenticators').set({ failedAttempts: 0 }).where('identityId', '=', identityId).execute();
}
