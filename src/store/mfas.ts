/**
 * TOTP MFA enrollments (queries only; docs/design.md "Store"). One row per identity; secrets arrive sealed and
 * recovery codes hashed: this module never sees a clear secret.
 */
import { hotRows } from './direct.js';
import type { TypedExecutor } from './executor.js';
import type { MfasTable } from './schema.js';
import type { Selectable } from 'kysely';
import { boolFromDb, boolToDb, jsonFromDb, jsonToDb } from './values.js';

export interface MfaRecord {
  id: string;
  createdAt: string;
  updatedAt: string;
  tags: Record<string, unknown>;
  identityId: string;
  isVerified: boolean;
  secretSealed: string;
  recoverySalt: string;
  recoveryHashes: string[];
  recoveryCodesSealed: string | null;
  lastTimeStep: number | null;
  /** The API session that started an unverified enrollment; null once verified. */
  apiSessionId: string | null;
}

export interface NewMfaRecord {
  id: string;
  identityId: string;
  secretSealed: string;
  recoverySalt: string;
  recoveryHashes: string[];
  recoveryCodesSealed: string;
  apiSessionId: string;
  createdAt: string;
}

/** The identity's enrollment, verified or not; undefined when it has none. */
type MfaRow = Selectable<MfasTable>;

const MFA_OF_IDENTITY = 'select * from mfas where "identityId" = ?';

export async function mfaOfIdentity(db: TypedExecutor, identityId: string): Promise<MfaRecord | undefined> {
  // Every login asks: a fixed text (direct.ts).
  const [row] = await hotRows<MfaRow>(db, MFA_OF_IDENTITY, [identityId]);
  if (!row) return undefined;
  return {
    id: row.id,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    tags: jsonFromDb<Record<string, unknown>>(row.tags),
    identityId: row.identityId,
    isVerified: boolFromDb(row.isVerified),
    secretSealed: row.secretSealed,
    recoverySalt: row.recoverySalt,
    recoveryHashes: jsonFromDb<string[]>(row.recoveryHashes),
    recoveryCodesSealed: row.recoveryCodesSealed,
    lastTimeStep: row.lastTimeStep === null ? null : Number(row.lastTimeStep),
    apiSessionId: row.apiSessionId,
  };
}

/**
 * Inserts an unverified enrollment, bound to the API session that started it (it goes with that session); the
 * unique identityId makes a concurrent second one fail.
 */
export async function insertMfa(db: TypedExecutor, m: NewMfaRecord): Promise<void> {
  await db
    .insertInto('mfas')
    .values({
      id: m.id,
      createdAt: m.createdAt,
      updatedAt: m.createdAt,
      tags: '{}',
      isSystem: boolToDb(false),
      identityId: m.identityId,
      isVerified: boolToDb(false),
      secretSealed: m.secretSealed,
      recoverySalt: m.recoverySalt,
      recoveryHashes: jsonToDb(m.recoveryHashes)!,
      recoveryCodesSealed: m.recoveryCodesSealed,
      lastTimeStep: null,
      apiSessionId: m.apiSessionId,
    })
    .execute();
}

/**
 * Records `step` as the newest accepted TOTP time step, only if it is newer than the stored one (RFC 6238
 * §5.2): of two concurrent requests with the same code exactly one gets true.
 */
export async function acceptTimeStep(db: TypedExecutor, id: string, step: number, at: string): Promise<boolean> {
  const res = await db
    .updateTable('mfas')
    .set({ lastTimeStep: step, updatedAt: at })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('lastTimeStep', 'is', null), eb('lastTimeStep', '<', step)]))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/**
 * Marks the enrollment verified, forgets the clear recovery codes kept for the user until then and unbinds it
 * from the session that started it (a verified enrollment outlives every session).
 */
export async function markMfaVerified(db: TypedExecutor, id: string, at: string): Promise<void> {
  await db
    .updateTable('mfas')
    .set({ isVerified: boolToDb(true), recoveryCodesSealed: null, apiSessionId: null, updatedAt: at })
    .where('id', '=', id)
    .execute();
}

/** Replaces the recovery code hashes (and salt), e.g. after one was used or all were regenerated. */
export async function setRecoveryHashes(
  db: TypedExecutor,
  id: string,
  salt: string,
  hashes: string[],
  at: string,
): Promise<void> {
  await db
    .updateTable('mfas')
    .set({ recoverySalt: salt, recoveryHashes: jsonToDb(hashes)!, updatedAt: at })
    .where('id', '=', id)
    .execute();
}

/** Deletes the identity's enrollment; answers whether there was one. */
export async function deleteMfaOfIdentity(db: TypedExecutor, identityId: string): Promise<boolean> {
  const res = await db.deleteFrom('mfas').where('identityId', '=', identityId).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** Which of the identities have a verified enrollment (identity records' `isMfaEnabled`). */
export async function identitiesWithVerifiedMfa(
  db: TypedExecutor,
  identityIds: readonly string[],
): Promise<Set<string>> {
  if (identityIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('mfas')
    .select('identityId')
    .where('identityId', 'in', identityIds)
    .where('isVerified', '=', boolToDb(true))
    .execute();
  return new Set(rows.map((r) => r.identityId));
}

/**
 * An API session's secondary-factor state: `authQueries` replaced by what is still outstanding, and, when the
 * MFA factor was passed, `isMfaComplete` and the time (posture keeps its own record of the pass, which MFA
 * removal clears: posture-state.ts).
 */
export async function setApiSessionFactors(
  db: TypedExecutor,
  apiSessionId: string,
  change: { authQueries: unknown[]; mfaPassedAt?: string },
  at: string,
): Promise<void> {
  await db
    .updateTable('api_sessions')
    .set({
      authQueries: jsonToDb(change.authQueries)!,
      ...(change.mfaPassedAt ? { isMfaComplete: boolToDb(true), mfaPassedAt: change.mfaPassedAt } : {}),
      updatedAt: at,
    })
    .where('id', '=', apiSessionId)
    .execute();
}

/** An API session's outstanding auth queries; undefined when the session is gone. */
export async function apiSessionAuthQueries(db: TypedExecutor, apiSessionId: string): Promise<unknown[] | undefined> {
  const row = await db
    .selectFrom('api_sessions')
    .select('authQueries')
    .where('id', '=', apiSessionId)
    .executeTakeFirst();
  return row ? jsonFromDb<unknown[]>(row.authQueries) : undefined;
}
