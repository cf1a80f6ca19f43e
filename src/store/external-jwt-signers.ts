/** External JWT signers: lookups for login and for policy references (queries only). */
import { sql, type SqlBool } from 'kysely';
import type { TypedExecutor } from './executor.js';
import type { Scope } from './scopes.js';
import { boolFromDb, boolToDb } from './values.js';
import { storeKind } from './dialect.js';

export interface StoredSigner {
  id: string;
  name: string;
  issuer: string;
  audience: string;
  enabled: boolean;
  kid: string | null;
  certPem: string | null;
  jwksEndpoint: string | null;
  claimsProperty: string;
  useExternalId: boolean;
  externalAuthUrl: string | null;
  fingerprint: string | null;
  enrollToCertEnabled: boolean;
  enrollToTokenEnabled: boolean;
  enrollNameClaimsSelector: string | null;
  enrollAttributeClaimsSelector: string | null;
  enrollAuthPolicyId: string | null;
}

const COLUMNS = [
  'id',
  'name',
  'issuer',
  'audience',
  'enabled',
  'kid',
  'certPem',
  'jwksEndpoint',
  'claimsProperty',
  'useExternalId',
  'externalAuthUrl',
  'fingerprint',
  'enrollToCertEnabled',
  'enrollToTokenEnabled',
  'enrollNameClaimsSelector',
  'enrollAttributeClaimsSelector',
  'enrollAuthPolicyId',
] as const;

type Flags = 'enabled' | 'useExternalId' | 'enrollToCertEnabled' | 'enrollToTokenEnabled';
type SignerRow = Omit<StoredSigner, Flags> & Record<Flags, number>;

const toSigner = (r: SignerRow): StoredSigner => ({
  ...r,
  enabled: boolFromDb(r.enabled),
  useExternalId: boolFromDb(r.useExternalId),
  enrollToCertEnabled: boolFromDb(r.enrollToCertEnabled),
  enrollToTokenEnabled: boolFromDb(r.enrollToTokenEnabled),
});

/** The signer whose `issuer` is `iss` (enabled or not); undefined when none. */
export async function signerByIssuer(db: TypedExecutor, iss: string): Promise<StoredSigner | undefined> {
  const row = await db.selectFrom('external_jwt_signers').select(COLUMNS).where('issuer', '=', iss).executeTakeFirst();
  return row && toSigner(row as SignerRow);
}

export async function signerById(db: TypedExecutor, id: string): Promise<StoredSigner | undefined> {
  const row = await db.selectFrom('external_jwt_signers').select(COLUMNS).where('id', '=', id).executeTakeFirst();
  return row && toSigner(row as SignerRow);
}

/** Whether at least one signer is enabled. */
export async function anySignerEnabled(db: TypedExecutor): Promise<boolean> {
  const row = await db
    .selectFrom('external_jwt_signers')
    .select('id')
    .where('enabled', '=', boolToDb(true))
    .executeTakeFirst();
  return row !== undefined;
}

/** The ids among `ids` that name a signer. */
export async function existingSignerIds(db: TypedExecutor, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('external_jwt_signers')
    .select('id')
    .where('id', 'in', [...ids])
    .execute();
  return rows.map((r) => r.id);
}

/** Auth policies naming the signer in `primary.extJwt.allowedSigners` or `secondary.requireExtJwtSigner`. */
export async function policiesNamingSigner(db: TypedExecutor, signerId: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('auth_policies')
    .select('id')
    .where(storeKind(db) === 'postgres' ? namesSignerPg(signerId) : namesSignerSqlite(signerId))
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

const namesSignerSqlite = (signerId: string) =>
  sql<SqlBool>`json_extract("secondary", '$.requireExtJwtSigner') = ${signerId}
    or exists (select 1 from json_each("primary", '$.extJwt.allowedSigners') s where s.value = ${signerId})`;

const namesSignerPg = (signerId: string) =>
  sql<SqlBool>`("secondary"::jsonb ->> 'requireExtJwtSigner') = ${signerId}
    or coalesce(("primary"::jsonb -> 'extJwt' -> 'allowedSigners') ? ${signerId}, false)`;

/** Listing scope: enabled signers only (the Client API's login-page listing). */
export const enabledSigners: Scope = sql<SqlBool>`${sql.ref('t.enabled')} = ${sql.lit(boolToDb(true))}`;
