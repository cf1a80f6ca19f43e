/**
 * API sessions: creation, the per-request token lookup, activity, expiry and removal (queries only).
 * The token lookup and the activity touch run per request: fixed statements run straight on the connection
 * when it is free (direct.ts), not the query builder, whose per-call work costs more than the query.
 */
import { groupedWrite, hotRows, hotWrite } from './direct.js';
import { storeKind } from './dialect.js';
import type { TypedExecutor } from './executor.js';
import { boolFromDb, boolToDb, jsonFromDb, jsonToDb } from './values.js';

export interface NewApiSessionRecord {
  id: string;
  tokenHash: string;
  identityId: string;
  authenticatorId: string;
  ipAddress: string;
  configTypes: string[];
  authQueries: unknown[];
  isMfaRequired: boolean;
  /** An OIDC login's session (migration 0020): its MFA is complete when made, and its legacy token is refused. */
  isOidc?: boolean;
  createdAt: string;
}

const INSERT_API_SESSION = `insert into api_sessions (id, "createdAt", "updatedAt", tags, "isSystem", "tokenHash",
    "identityId", "authenticatorId", "ipAddress", "configTypes", "authQueries", "isMfaRequired", "isMfaComplete",
    "lastActivityAt", "isOidc") values (?, ?, ?, '{}', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** Every login inserts one: a fixed text (direct.ts). */
export async function insertApiSession(db: TypedExecutor, s: NewApiSessionRecord): Promise<void> {
  await hotWrite(db, INSERT_API_SESSION, [
    s.id,
    s.createdAt,
    s.createdAt,
    boolToDb(false),
    s.tokenHash,
    s.identityId,
    s.authenticatorId,
    s.ipAddress,
    jsonToDb(s.configTypes)!,
    jsonToDb(s.authQueries)!,
    boolToDb(s.isMfaRequired),
    // An OIDC session is made once every factor is done (docs/reference-notes.md §14.10).
    boolToDb(s.isOidc === true && s.isMfaRequired),
    s.createdAt,
    boolToDb(s.isOidc),
  ]);
}

/** An API session found by its token hash, with what a request needs of its identity. */
export interface ApiSessionPrincipal {
  sessionId: string;
  lastActivityAt: string;
  authQueries: unknown[];
  identityId: string;
  name: string;
  isAdmin: boolean;
  isDefaultAdmin: boolean;
  authPolicyId: string;
  disabledAt: string | null;
  disabledUntil: string | null;
  /** The identity's auth policy's second-factor rules, read in the same statement (null: no such policy). */
  policySecondary: unknown;
}

interface PrincipalRow {
  sessionId: string;
  lastActivityAt: string;
  authQueries: string;
  identityId: string;
  name: string;
  isAdmin: number;
  isDefaultAdmin: number;
  authPolicyId: string;
  disabledAt: string | null;
  disabledUntil: string | null;
  policySecondary: string | null;
}

// The auth policy comes in the same statement: one round trip per lookup (a PostgreSQL store pays for each).
const BY_TOKEN_HASH = `select s.id as "sessionId", s."lastActivityAt", s."authQueries", i.id as "identityId", i.name,
    i."isAdmin", i."isDefaultAdmin", i."authPolicyId", i."disabledAt", i."disabledUntil",
    p.secondary as "policySecondary"
  from api_sessions s join identities i on i.id = s."identityId"
    left join auth_policies p on p.id = coalesce(i."authPolicyId", 'default')
  where s."tokenHash" = ? and s."isOidc" = 0`;

/** The API session with this token hash and its identity; undefined when there is none. */
export async function apiSessionByTokenHash(
  db: TypedExecutor,
  tokenHash: string,
): Promise<ApiSessionPrincipal | undefined> {
  const [row] = await hotRows<PrincipalRow>(db, BY_TOKEN_HASH, [tokenHash]);
  if (!row) return undefined;
  return {
    ...row,
    authQueries: jsonFromDb<unknown[]>(row.authQueries),
    policySecondary: row.policySecondary === null ? null : jsonFromDb(row.policySecondary),
    isAdmin: boolFromDb(row.isAdmin),
    isDefaultAdmin: boolFromDb(row.isDefaultAdmin),
  };
}

/** The activity touch: it sets only a split column, so only what lists API sessions sees it (db.ts). */
export const TOUCH_API_SESSION_SQL = 'update "api_sessions" set "lastActivityAt" = ? where "id" = ?';

/** Records activity on an API session; the API-session cache records it itself. */
export async function touchApiSession(db: TypedExecutor, id: string, at: string): Promise<void> {
  // PostgreSQL's commits wait for its log flush: concurrent touches share one (direct.ts, `groupedWrite`).
  // SQLite's are cheap on its one connection, and run there directly.
  if (storeKind(db) === 'postgres') await groupedWrite(db, TOUCH_API_SESSION_SQL, [at, id]);
  else await hotWrite(db, TOUCH_API_SESSION_SQL, [at, id]);
}

/** Whether the API session exists (still). */
export async function apiSessionExists(db: TypedExecutor, id: string): Promise<boolean> {
  return (await db.selectFrom('api_sessions').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

/** Deletes API sessions by id; answers how many there were. */
export async function deleteApiSessionsByIds(db: TypedExecutor, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const res = await db.deleteFrom('api_sessions').where('id', 'in', ids).executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Who each of the API sessions belongs to and where it came from (their events: model/events/auth-events.ts). */
export async function apiSessionOwners(
  db: TypedExecutor,
  ids: readonly string[],
): Promise<{ id: string; identityId: string; ipAddress: string }[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('api_sessions').select(['id', 'identityId', 'ipAddress']).where('id', 'in', ids).execute();
}

/** Deletes an identity's API sessions; answers how many there were. */
export async function deleteApiSessionsOfIdentity(db: TypedExecutor, identityId: string): Promise<number> {
  const res = await db.deleteFrom('api_sessions').where('identityId', '=', identityId).executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** The ids of an identity's API sessions. */
export async function apiSessionIdsOfIdentity(db: TypedExecutor, identityId: string): Promise<string[]> {
  const rows = await db.selectFrom('api_sessions').select('id').where('identityId', '=', identityId).execute();
  return rows.map((r) => r.id);
}

/** Up to `limit` ids of API sessions whose last activity is at or before `cutoff`. */
export async function idleApiSessionIds(db: TypedExecutor, cutoff: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('api_sessions')
    .select('id')
    .where('lastActivityAt', '<=', cutoff)
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** Which of the identities have at least one API session. */
export async function identitiesWithApiSession(
  db: TypedExecutor,
  identityIds: readonly string[],
): Promise<Set<string>> {
  if (identityIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('api_sessions')
    .select('identityId')
    .distinct()
    .where('identityId', 'in', identityIds)
    .execute();
  return new Set(rows.map((r) => r.identityId));
}
