/**
 * The OIDC provider's protocol state (migration 0020): authorization requests and their codes, the refresh-token
 * lineage, revocations, and the API sessions OIDC logins make. Queries only; the rules are the model's
 * (model/services/oidc/).
 */
import type { Executor } from './executor.js';
import { boolFromDb, boolToDb, jsonFromDb, jsonToDb } from './values.js';

export interface AuthRequestRecord {
  idHash: string;
  createdAt: string;
  expiresAt: string;
  clientId: string;
  redirectUri: string;
  scopes: string[];
  state: string | null;
  nonce: string | null;
  codeChallenge: string;
  codeChallengeMethod: string;
  apiSessionId: string;
  remoteAddress: string;
  method: string | null;
  configTypes: string[];
  identityId: string | null;
  authenticatorId: string | null;
  amr: string[];
  authTime: string | null;
  authQueries: unknown[];
  sdkInfo: Record<string, string> | null;
  envInfo: Record<string, string> | null;
  codeHash: string | null;
  /** The client certificate a certificate login presented (lowercase hex SHA-1), which its tokens are bound to. */
  certFingerprint: string | null;
  /** The CSR the login submitted (`csrPem`), signed into an API-session certificate at the code exchange. */
  csrPem: string | null;
  /** Whether the certificate login's client sent an improper chain (its leaf without the intermediate). */
  certImproperChain: boolean;
}

type AuthRequestRow = Omit<
  AuthRequestRecord,
  'scopes' | 'configTypes' | 'amr' | 'authQueries' | 'sdkInfo' | 'envInfo' | 'certImproperChain'
> & {
  certImproperChain: number;
  scopes: string;
  configTypes: string;
  amr: string;
  authQueries: string;
  sdkInfo: string | null;
  envInfo: string | null;
};

const fromRow = (r: AuthRequestRow): AuthRequestRecord => ({
  ...r,
  scopes: jsonFromDb<string[]>(r.scopes),
  configTypes: jsonFromDb<string[]>(r.configTypes),
  amr: jsonFromDb<string[]>(r.amr),
  authQueries: jsonFromDb<unknown[]>(r.authQueries),
  sdkInfo: r.sdkInfo === null ? null : jsonFromDb<Record<string, string>>(r.sdkInfo),
  envInfo: r.envInfo === null ? null : jsonFromDb<Record<string, string>>(r.envInfo),
  certImproperChain: boolFromDb(r.certImproperChain),
});

export async function insertAuthRequest(db: Executor, r: AuthRequestRecord): Promise<void> {
  await db
    .insertInto('oidc_auth_requests')
    .values({
      ...r,
      scopes: jsonToDb(r.scopes)!,
      configTypes: jsonToDb(r.configTypes)!,
      amr: jsonToDb(r.amr)!,
      authQueries: jsonToDb(r.authQueries)!,
      sdkInfo: jsonToDb(r.sdkInfo),
      envInfo: jsonToDb(r.envInfo),
      certImproperChain: boolToDb(r.certImproperChain),
    })
    .execute();
}

/** The auth request with this id hash, expired or not (the model judges expiry). */
export async function authRequestByIdHash(db: Executor, idHash: string): Promise<AuthRequestRecord | undefined> {
  const row = await db.selectFrom('oidc_auth_requests').selectAll().where('idHash', '=', idHash).executeTakeFirst();
  return row ? fromRow(row as AuthRequestRow) : undefined;
}

export async function authRequestByCodeHash(db: Executor, codeHash: string): Promise<AuthRequestRecord | undefined> {
  const row = await db.selectFrom('oidc_auth_requests').selectAll().where('codeHash', '=', codeHash).executeTakeFirst();
  return row ? fromRow(row as AuthRequestRow) : undefined;
}

/** What a login step records on its auth request. */
export interface AuthRequestProgress {
  identityId?: string;
  authenticatorId?: string;
  amr?: string[];
  authTime?: string;
  authQueries?: unknown[];
  configTypes?: string[];
  sdkInfo?: Record<string, string> | null;
  envInfo?: Record<string, string> | null;
  codeHash?: string | null;
  certFingerprint?: string | null;
  csrPem?: string | null;
  certImproperChain?: boolean;
}

export async function updateAuthRequest(db: Executor, idHash: string, p: AuthRequestProgress): Promise<void> {
  await db
    .updateTable('oidc_auth_requests')
    .set({
      ...(p.identityId !== undefined && { identityId: p.identityId }),
      ...(p.authenticatorId !== undefined && { authenticatorId: p.authenticatorId }),
      ...(p.amr !== undefined && { amr: jsonToDb(p.amr)! }),
      ...(p.authTime !== undefined && { authTime: p.authTime }),
      ...(p.authQueries !== undefined && { authQueries: jsonToDb(p.authQueries)! }),
      ...(p.configTypes !== undefined && { configTypes: jsonToDb(p.configTypes)! }),
      ...(p.sdkInfo !== undefined && { sdkInfo: jsonToDb(p.sdkInfo) }),
      ...(p.envInfo !== undefined && { envInfo: jsonToDb(p.envInfo) }),
      ...(p.codeHash !== undefined && { codeHash: p.codeHash }),
      ...(p.certFingerprint !== undefined && { certFingerprint: p.certFingerprint }),
      ...(p.csrPem !== undefined && { csrPem: p.csrPem }),
      ...(p.certImproperChain !== undefined && { certImproperChain: boolToDb(p.certImproperChain) }),
    })
    .where('idHash', '=', idHash)
    .execute();
}

/** Deletes the auth request; answers whether it was still there (a code is exchanged at most once). */
export async function deleteAuthRequest(db: Executor, idHash: string): Promise<boolean> {
  const res = await db.deleteFrom('oidc_auth_requests').where('idHash', '=', idHash).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

export async function deleteExpiredAuthRequests(db: Executor, now: string): Promise<number> {
  const res = await db.deleteFrom('oidc_auth_requests').where('expiresAt', '<=', now).executeTakeFirst();
  return Number(res.numDeletedRows);
}

export interface RefreshTokenRecord {
  jti: string;
  apiSessionId: string;
  parentJti: string | null;
  clientId: string;
  createdAt: string;
  expiresAt: string;
  rotatedAt: string | null;
}

export async function insertRefreshToken(db: Executor, r: RefreshTokenRecord): Promise<void> {
  await db.insertInto('oidc_refresh_tokens').values(r).execute();
}

export async function refreshTokenByJti(db: Executor, jti: string): Promise<RefreshTokenRecord | undefined> {
  return db.selectFrom('oidc_refresh_tokens').selectAll().where('jti', '=', jti).executeTakeFirst();
}

/** Marks a refresh token rotated unless it was already; answers whether this call did it. */
export async function markRefreshTokenRotated(db: Executor, jti: string, at: string): Promise<boolean> {
  const res = await db
    .updateTable('oidc_refresh_tokens')
    .set({ rotatedAt: at })
    .where('jti', '=', jti)
    .where('rotatedAt', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function deleteExpiredRefreshTokens(db: Executor, now: string): Promise<number> {
  const res = await db.deleteFrom('oidc_refresh_tokens').where('expiresAt', '<=', now).executeTakeFirst();
  return Number(res.numDeletedRows);
}

export type RevocationType = 'JTI' | 'IDENTITY' | 'API_SESSION';

export interface RevocationRecord {
  id: string;
  type: RevocationType;
  createdAt: string;
  updatedAt: string;
  tags: Record<string, unknown>;
  expiresAt: string;
  issuedBefore: string;
}

/** Creates or replaces the revocation of `id` (the cutoff and expiry move; `createdAt` stays). */
export async function putRevocation(
  db: Executor,
  r: Omit<RevocationRecord, 'createdAt'> & { createdAt?: string },
): Promise<void> {
  const tags = jsonToDb(r.tags)!;
  await db
    .insertInto('revocations')
    .values({
      id: r.id,
      type: r.type,
      createdAt: r.createdAt ?? r.updatedAt,
      updatedAt: r.updatedAt,
      tags,
      expiresAt: r.expiresAt,
      issuedBefore: r.issuedBefore,
    })
    .onConflict((oc) =>
      oc.column('id').doUpdateSet({
        type: r.type,
        updatedAt: r.updatedAt,
        tags,
        expiresAt: r.expiresAt,
        issuedBefore: r.issuedBefore,
      }),
    )
    .execute();
}

/** The stored revocation of `id`, expired or not (what an event shows it replaced). */
export async function revocationById(db: Executor, id: string): Promise<RevocationRecord | undefined> {
  const row = await db.selectFrom('revocations').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) return undefined;
  return { ...row, type: row.type as RevocationType, tags: (jsonFromDb(row.tags) ?? {}) as Record<string, unknown> };
}

/** The unexpired revocations among `ids` (a token's `jti`, `sub` and `z_asid`). */
export async function revocationsOf(
  db: Executor,
  ids: readonly string[],
  now: string,
): Promise<Pick<RevocationRecord, 'id' | 'type' | 'issuedBefore'>[]> {
  if (ids.length === 0) return [];
  return (await db
    .selectFrom('revocations')
    .select(['id', 'type', 'issuedBefore'])
    .where('id', 'in', ids)
    .where('expiresAt', '>', now)
    .execute()) as Pick<RevocationRecord, 'id' | 'type' | 'issuedBefore'>[];
}

export async function deleteExpiredRevocations(db: Executor, now: string): Promise<number> {
  const res = await db.deleteFrom('revocations').where('expiresAt', '<=', now).executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** An OIDC API session with what a bearer request needs of its identity (null: gone). */
export interface OidcSessionPrincipal {
  sessionId: string;
  lastActivityAt: string;
  identityId: string;
  name: string;
  isAdmin: boolean;
  isDefaultAdmin: boolean;
  authPolicyId: string;
  externalId: string | null;
  disabledAt: string | null;
  disabledUntil: string | null;
}

export async function oidcSessionById(db: Executor, id: string): Promise<OidcSessionPrincipal | undefined> {
  const row = await db
    .selectFrom('api_sessions as s')
    .innerJoin('identities as i', 'i.id', 's.identityId')
    .select([
      's.id as sessionId',
      's.lastActivityAt',
      'i.id as identityId',
      'i.name',
      'i.isAdmin',
      'i.isDefaultAdmin',
      'i.authPolicyId',
      'i.externalId',
      'i.disabledAt',
      'i.disabledUntil',
    ])
    .where('s.id', '=', id)
    .where('s.isOidc', '=', 1)
    .executeTakeFirst();
  if (!row) return undefined;
  return { ...row, isAdmin: boolFromDb(row.isAdmin), isDefaultAdmin: boolFromDb(row.isDefaultAdmin) };
}

/** Ends the OIDC API sessions that logged in with this authenticator; answers how many. */
export async function deleteOidcSessionsOfAuthenticator(db: Executor, authenticatorId: string): Promise<number> {
  const res = await db
    .deleteFrom('api_sessions')
    .where('authenticatorId', '=', authenticatorId)
    .where('isOidc', '=', 1)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Completes an OIDC API session made earlier in its login (a TOTP enrollment): its MFA state and activity. */
export async function completeOidcSession(
  db: Executor,
  id: string,
  s: { isMfaRequired: boolean; configTypes: string[]; at: string },
): Promise<boolean> {
  const res = await db
    .updateTable('api_sessions')
    .set({
      isMfaRequired: s.isMfaRequired ? 1 : 0,
      ...(s.isMfaRequired && { isMfaComplete: 1 }),
      configTypes: jsonToDb(s.configTypes)!,
      authQueries: '[]',
      updatedAt: s.at,
      lastActivityAt: s.at,
    })
    .where('id', '=', id)
    .where('isOidc', '=', 1)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}
