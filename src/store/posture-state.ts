/**
 * Clients' posture as stored (migration 0016; queries only, the rules are in src/model/posture): per identity
 * the reported records by slot (JSON text) and when its posture last changed what it may use; per API session
 * the MFA pass and wake/unlock events; per identity its last failed service requests. The reads a request's
 * posture evaluation misses its cache with are fixed texts run straight on the connection (direct.ts).
 */
import { sql } from 'kysely';
import { storeKind } from './dialect.js';
import { hotRows } from './direct.js';
import type { TypedExecutor } from './executor.js';
import { boolFromDb, boolToDb, jsonFromDb, jsonToDb } from './values.js';

/** An identity's stored posture: its records by slot, as plain JSON objects. */
export interface StoredIdentityPosture {
  records: Record<string, Record<string, unknown>>;
  changedAt: string | null;
}

/** An API session's stored posture (ISO times). */
export interface StoredSessionPosture {
  apiSessionId: string;
  mfaPassedAt: string | null;
  wokenAt: string | null;
  unlockedAt: string | null;
  sdkNew: boolean;
}

const IDENTITY_POSTURE = `select records, "changedAt" from posture_identities where "identityId" = ?`;

/** The identity's stored posture, with the length of its records' text; undefined when it has none stored. */
export async function identityPostureRow(
  db: TypedExecutor,
  identityId: string,
): Promise<(StoredIdentityPosture & { bytes: number }) | undefined> {
  const [row] = await hotRows<{ records: string; changedAt: string | null }>(db, IDENTITY_POSTURE, [identityId]);
  return row && { records: jsonFromDb(row.records), changedAt: row.changedAt, bytes: row.records.length };
}

const SESSION_COLUMNS = `"apiSessionId", "mfaPassedAt", "wokenAt", "unlockedAt", "sdkNew"`;
const SESSION_POSTURE = `select ${SESSION_COLUMNS} from posture_api_sessions where "apiSessionId" = ?`;

interface SessionRow {
  apiSessionId: string;
  mfaPassedAt: string | null;
  wokenAt: string | null;
  unlockedAt: string | null;
  sdkNew: number;
}
const sessionOf = (r: SessionRow): StoredSessionPosture => ({ ...r, sdkNew: boolFromDb(r.sdkNew) });

/** The API session's stored posture; undefined when it has none (or is gone). */
export async function sessionPostureRow(
  db: TypedExecutor,
  apiSessionId: string,
): Promise<StoredSessionPosture | undefined> {
  const [row] = await hotRows<SessionRow>(db, SESSION_POSTURE, [apiSessionId]);
  return row && sessionOf(row);
}

/** The stored posture of every API session of the identity that has some, by API session id. */
export async function sessionPosturesOfIdentity(
  db: TypedExecutor,
  identityId: string,
): Promise<StoredSessionPosture[]> {
  const rows = await db
    .selectFrom('posture_api_sessions')
    .select(['apiSessionId', 'mfaPassedAt', 'wokenAt', 'unlockedAt', 'sdkNew'])
    .where('identityId', '=', identityId)
    .orderBy('apiSessionId')
    .execute();
  return rows.map(sessionOf);
}

/**
 * Whether the owner row still exists, held (on PostgreSQL) until the caller's transaction ends, so posture
 * written for it next cannot meet a delete committed meanwhile (the foreign key would refuse it). On SQLite the
 * transaction holds the store's only connection already.
 */
export async function holdPostureOwner(
  db: TypedExecutor,
  owner: 'identities' | 'api_sessions',
  id: string,
): Promise<boolean> {
  const hold = storeKind(db) === 'postgres' ? sql` for key share` : sql``;
  const { rows } = await sql<{ id: string }>`select id from ${sql.table(owner)} where id = ${id}${hold}`.execute(db);
  return rows.length > 0;
}

/** Replaces the identity's stored records and `changedAt` (made when it has none). */
export async function putIdentityPosture(
  db: TypedExecutor,
  identityId: string,
  p: StoredIdentityPosture,
): Promise<void> {
  const records = jsonToDb(p.records)!;
  await db
    .insertInto('posture_identities')
    .values({ identityId, records, changedAt: p.changedAt })
    .onConflict((oc) => oc.column('identityId').doUpdateSet({ records, changedAt: p.changedAt }))
    .execute();
}

/** Sets when the identity's posture last changed what it may use (a row with no records when it has none). */
export async function setPostureChangedAt(db: TypedExecutor, identityId: string, at: string): Promise<void> {
  await db
    .insertInto('posture_identities')
    .values({ identityId, changedAt: at })
    .onConflict((oc) => oc.column('identityId').doUpdateSet({ changedAt: at }))
    .execute();
}

/** Replaces the API session's stored posture (made when it has none). */
export async function putSessionPosture(db: TypedExecutor, identityId: string, s: StoredSessionPosture): Promise<void> {
  const values = {
    mfaPassedAt: s.mfaPassedAt,
    wokenAt: s.wokenAt,
    unlockedAt: s.unlockedAt,
    sdkNew: boolToDb(s.sdkNew),
  };
  await db
    .insertInto('posture_api_sessions')
    .values({ apiSessionId: s.apiSessionId, identityId, ...values })
    .onConflict((oc) => oc.column('apiSessionId').doUpdateSet(values))
    .execute();
}

/** Records an MFA pass on the API session's posture (made when it has none); its other fields stay. */
export async function setSessionMfaPassed(
  db: TypedExecutor,
  apiSessionId: string,
  identityId: string,
  at: string,
): Promise<void> {
  await db
    .insertInto('posture_api_sessions')
    .values({ apiSessionId, identityId, mfaPassedAt: at })
    .onConflict((oc) => oc.column('apiSessionId').doUpdateSet({ mfaPassedAt: at }))
    .execute();
}

/**
 * No API session of the identity has passed MFA any more (its MFA was removed); `changedAt` moves to `at` when
 * the identity has stored posture.
 */
export async function clearMfaPasses(db: TypedExecutor, identityId: string, at: string): Promise<void> {
  await db
    .updateTable('posture_api_sessions')
    .set({ mfaPassedAt: null })
    .where('identityId', '=', identityId)
    .where('mfaPassedAt', 'is not', null)
    .execute();
  await db.updateTable('posture_identities').set({ changedAt: at }).where('identityId', '=', identityId).execute();
}

/**
 * Appends a failed service request to the identity's and keeps only the newest `keep`. Numbers each request
 * after the identity's last, so it needs the caller's transaction (writers run one at a time in it).
 */
export async function addFailedRequest(
  db: TypedExecutor,
  identityId: string,
  request: Record<string, unknown>,
  keep: number,
): Promise<void> {
  const last = await db
    .selectFrom('posture_failed_requests')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .where('identityId', '=', identityId)
    .executeTakeFirst();
  const seq = Number(last?.seq ?? 0) + 1;
  await db
    .insertInto('posture_failed_requests')
    .values({ identityId, seq, request: jsonToDb(request)! })
    .execute();
  await db
    .deleteFrom('posture_failed_requests')
    .where('identityId', '=', identityId)
    .where('seq', '<=', seq - keep)
    .execute();
}

/** The identity's stored failed service requests, oldest first. */
export async function failedRequests(db: TypedExecutor, identityId: string): Promise<Record<string, unknown>[]> {
  const rows = await db
    .selectFrom('posture_failed_requests')
    .select('request')
    .where('identityId', '=', identityId)
    .orderBy('seq')
    .execute();
  return rows.map((r) => jsonFromDb<Record<string, unknown>>(r.request));
}
