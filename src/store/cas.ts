/** Third-party CAs: existence, the verified ones as trust anchors, verification and what a CA's removal takes along (queries only). */
import type { TypedExecutor } from './executor.js';
import { boolFromDb, boolToDb, jsonFromDb } from './values.js';

/** The switches that enable one use of a verified CA. */
export type CaUseSwitch = 'isAuthEnabled' | 'isAutoCaEnrollmentEnabled' | 'isOttCaEnrollmentEnabled';

export async function caExists(db: TypedExecutor, id: string): Promise<boolean> {
  return (await db.selectFrom('cas').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

/** Whether a CA with this certificate fingerprint is registered. */
export async function caFingerprintUsed(db: TypedExecutor, fingerprint: string): Promise<boolean> {
  return (
    (await db.selectFrom('cas').select('id').where('fingerprint', '=', fingerprint).executeTakeFirst()) !== undefined
  );
}

export interface StoredVerifiedCa {
  id: string;
  name: string;
  certPem: string;
  isAuthEnabled: boolean;
  isAutoCaEnrollmentEnabled: boolean;
  isOttCaEnrollmentEnabled: boolean;
  identityRoles: string[];
  identityNameFormat: string;
  /** Parsed JSON (its shape is the model's), or null. */
  externalIdClaim: unknown;
}

/** Verified CAs (with `use` switched on; only `id`, if given), oldest first (then by id). */
export async function verifiedCaRecords(
  db: TypedExecutor,
  use?: CaUseSwitch,
  id?: string,
): Promise<StoredVerifiedCa[]> {
  const rows = await db
    .selectFrom('cas')
    .select([
      'id',
      'name',
      'certPem',
      'isAuthEnabled',
      'isAutoCaEnrollmentEnabled',
      'isOttCaEnrollmentEnabled',
      'identityNameFormat',
      'externalIdClaim',
    ])
    .where('isVerified', '=', boolToDb(true))
    .$if(use !== undefined, (q) => q.where(use!, '=', boolToDb(true)))
    .$if(id !== undefined, (q) => q.where('id', '=', id!))
    .orderBy('createdAt')
    .orderBy('id')
    .execute();
  if (rows.length === 0) return [];
  const roles = await db
    .selectFrom('cas_identityRoles')
    .select(['ownerId', 'value'])
    .where(
      'ownerId',
      'in',
      rows.map((r) => r.id),
    )
    .orderBy('ownerId')
    .orderBy('position')
    .execute();
  const rolesOf = new Map<string, string[]>();
  for (const r of roles) rolesOf.set(r.ownerId, [...(rolesOf.get(r.ownerId) ?? []), r.value]);
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    certPem: r.certPem,
    isAuthEnabled: boolFromDb(r.isAuthEnabled),
    isAutoCaEnrollmentEnabled: boolFromDb(r.isAutoCaEnrollmentEnabled),
    isOttCaEnrollmentEnabled: boolFromDb(r.isOttCaEnrollmentEnabled),
    identityRoles: rolesOf.get(r.id) ?? [],
    identityNameFormat: r.identityNameFormat,
    externalIdClaim: r.externalIdClaim === null ? null : jsonFromDb(r.externalIdClaim),
  }));
}

/** The certificate PEMs of every verified CA, oldest first. */
export async function verifiedCaPems(db: TypedExecutor): Promise<string[]> {
  const rows = await db
    .selectFrom('cas')
    .select('certPem')
    .where('isVerified', '=', boolToDb(true))
    .orderBy('createdAt')
    .execute();
  return rows.map((r) => r.certPem);
}

export async function markCaVerified(db: TypedExecutor, id: string, updatedAt: string): Promise<void> {
  await db
    .updateTable('cas')
    .set({ isVerified: boolToDb(true), updatedAt })
    .where('id', '=', id)
    .execute();
}

/** Deletes the authenticators and enrollments that name the CA (their trust anchor goes). */
export async function deleteCaDependants(db: TypedExecutor, caId: string): Promise<void> {
  await db.deleteFrom('authenticators').where('caId', '=', caId).execute();
  await db.deleteFrom('enrollments').where('caId', '=', caId).execute();
}
