/** Authenticators: lookups by owner and method, and the owner's failed-attempt reset (queries only). */
import { hotRows } from './direct.js';
import type { TypedExecutor } from './executor.js';
import { boolFromDb, boolToDb } from './values.js';

/** The id of an identity's authenticator of one method; undefined when it has none. */
export async function authenticatorIdOf(
  db: TypedExecutor,
  identityId: string,
  method: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('authenticators')
    .select('id')
    .where('identityId', '=', identityId)
    .where('method', '=', method)
    .executeTakeFirst();
  return row?.id;
}

/** An authenticator's owner and method; undefined when it does not exist. */
export function authenticatorOwner(
  db: TypedExecutor,
  id: string,
): Promise<{ identityId: string; method: string } | undefined> {
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
export function authenticatorsOfIdentities(
  db: TypedExecutor,
  identityIds: readonly string[],
): Promise<AuthenticatorSummary[]> {
  if (identityIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('authenticators')
    .select(['id', 'identityId', 'method', 'username', 'fingerprint'])
    .where('identityId', 'in', identityIds)
    .execute();
}

/** Clears the failed-password counters of an identity's authenticators. */
export async function resetIdentityFailedAttempts(db: TypedExecutor, identityId: string): Promise<void> {
  await db.updateTable('authenticators').set({ failedAttempts: 0 }).where('identityId', '=', identityId).execute();
}

const PASSWORD_BY_USERNAME = `select id, "identityId", "passwordHash" from authenticators
  where method = 'updb' and username = ?`;

/** The password authenticator with this username, with its hash; undefined when there is none (every login). */
export async function passwordAuthenticatorByUsername(
  db: TypedExecutor,
  username: string,
): Promise<{ id: string; identityId: string; passwordHash: string | null } | undefined> {
  const [row] = await hotRows<{ id: string; identityId: string; passwordHash: string | null }>(
    db,
    PASSWORD_BY_USERNAME,
    [username],
  );
  return row;
}

/** The certificate authenticator with this fingerprint; undefined when there is none. */
export function certAuthenticatorByFingerprint(
  db: TypedExecutor,
  fingerprint: string,
): Promise<{ id: string; identityId: string } | undefined> {
  return db
    .selectFrom('authenticators')
    .select(['id', 'identityId'])
    .where('method', '=', 'cert')
    .where('fingerprint', '=', fingerprint)
    .executeTakeFirst();
}

/** Whether any authenticator has this username. */
export async function authenticatorHasUsername(db: TypedExecutor, username: string): Promise<boolean> {
  return (
    (await db.selectFrom('authenticators').select('id').where('username', '=', username).executeTakeFirst()) !==
    undefined
  );
}

/** Deletes an authenticator row (what refers to it is the caller's concern). */
export async function deleteAuthenticatorRow(db: TypedExecutor, id: string): Promise<void> {
  await db.deleteFrom('authenticators').where('id', '=', id).execute();
}

/** Whether any authenticator has this certificate fingerprint, current or waiting for `extend-verify`. */
export async function certFingerprintInUse(db: TypedExecutor, fingerprint: string): Promise<boolean> {
  const row = await db
    .selectFrom('authenticators')
    .select('id')
    .where((eb) => eb.or([eb('fingerprint', '=', fingerprint), eb('unverifiedFingerprint', '=', fingerprint)]))
    .executeTakeFirst();
  return row !== undefined;
}

export interface CertAuthenticatorState {
  id: string;
  identityId: string;
  method: string;
  fingerprint: string | null;
  caId: string | null;
  unverifiedFingerprint: string | null;
  certPem: string | null;
}

/** What certificate extension needs of an authenticator; undefined when it does not exist. */
export function certAuthenticatorState(db: TypedExecutor, id: string): Promise<CertAuthenticatorState | undefined> {
  return db
    .selectFrom('authenticators')
    .select(['id', 'identityId', 'method', 'fingerprint', 'caId', 'unverifiedFingerprint', 'certPem'])
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Stores the certificate `extend` issued, waiting for `extend-verify`. */
export async function setUnverifiedCert(
  db: TypedExecutor,
  id: string,
  cert: { pem: string; fingerprint: string },
  updatedAt: string,
): Promise<void> {
  await db
    .updateTable('authenticators')
    .set({ unverifiedCertPem: cert.pem, unverifiedFingerprint: cert.fingerprint, updatedAt })
    .where('id', '=', id)
    .execute();
}

/** Makes a verified certificate the authenticator's own and clears the waiting one. */
export async function promoteCert(
  db: TypedExecutor,
  id: string,
  cert: { pem: string; fingerprint: string },
  updatedAt: string,
  rolledKeys: boolean,
): Promise<void> {
  await db
    .updateTable('authenticators')
    .set({
      certPem: cert.pem,
      fingerprint: cert.fingerprint,
      unverifiedCertPem: null,
      unverifiedFingerprint: null,
      isExtendRequested: 0,
      isKeyRollRequested: 0,
      lastExtendRolledKeys: boolToDb(rolledKeys),
      updatedAt,
    })
    .where('id', '=', id)
    .execute();
}

/** An administrator's request that the certificate be extended, its key rolled too when `rollKeys`. */
export async function requestCertExtend(db: TypedExecutor, id: string, rollKeys: boolean, at: string): Promise<void> {
  await db
    .updateTable('authenticators')
    .set({ isExtendRequested: 1, isKeyRollRequested: boolToDb(rollKeys), extendRequestedAt: at, updatedAt: at })
    .where('id', '=', id)
    .execute();
}

/** Whether an extension (and a key roll) is requested of this authenticator; both false when it is gone. */
export async function certExtendRequest(
  db: TypedExecutor,
  id: string,
): Promise<{ extend: boolean; rollKeys: boolean }> {
  const row = await db
    .selectFrom('authenticators')
    .select(['isExtendRequested', 'isKeyRollRequested'])
    .where('id', '=', id)
    .executeTakeFirst();
  return { extend: boolFromDb(row?.isExtendRequested), rollKeys: boolFromDb(row?.isKeyRollRequested) };
}
