/**
 * API sessions: creation, the per-request token lookup, activity, expiry and removal (queries only).
 * The token lookup and the activity touch run per request: fixed statements run straight on the connection
 * when it is free (direct.ts), not the query builder, whose per-call work costs more than the query.
 */
import { groupedRow, hotRows, hotWrite } from './direct.js';
import { storeKind } from './dialect.js';
import { defineCache, storeState } from './runtime.js';
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

/**
 * PostgreSQL: the touches of one turn in one statement (direct.ts, `groupedRow`), committed without waiting for
 * the server's log flush (`synchronous_commit` off for its transaction only). An activity time is the one write
 * whose loss in a crash of the database server is harmless: the session's idle clock then starts a fraction of
 * a second earlier than its last request. Waiting for the flush made every request of a new API session queue
 * behind the disk with the writes that matter.
 */
const TOUCH_API_SESSIONS = {
  text: `with c as (select set_config('synchronous_commit', 'off', true))
  update "api_sessions" set "lastActivityAt" = v.at from unnest($1::text[], $2::text[]) as v(id, at), c
  where "api_sessions".id = v.id returning "api_sessions".id`,
  inFlight: 2,
};

/**
 * The touches under way, by API session (state of the store's runtime, not a cache): concurrent requests of one
 * session that each found it due for a touch share the first one's write. Sixteen provisioning clients on one
 * admin session looked their session up again after every commit that changed identities (which drops the
 * API-session cache), all before the first touch could run (a group commit held the connection), and each
 * wrote its own: sixteen commits of the same row, more log than the creates' own.
 */
const TOUCHES = defineCache('api-session-touches-under-way', () => new Map<string, Promise<void>>());

/**
 * Records activity on an API session; the API-session cache records it itself. A touch of the same session
 * already under way records this one too: they are instants apart, well within the granularity at which
 * activity is recorded (api-session.ts, `activityGranularityMs`).
 */
export async function touchApiSession(db: TypedExecutor, id: string, at: string): Promise<void> {
  const underWay = db.isTransaction ? undefined : storeState(db, TOUCHES);
  const running = underWay?.get(id);
  if (running) return running;
  // PostgreSQL's concurrent touches share one statement (TOUCH_API_SESSIONS).
  // SQLite's are cheap on its one connection, and run there directly. Inside a transaction (an OIDC refresh's
  // grant) the plain update: the grouped statement's `synchronous_commit` off would hold for the whole
  // transaction, and on PostgreSQL for every writer sharing its group commit, answered before their log is flushed.
  const write = (
    storeKind(db) === 'postgres' && !db.isTransaction
      ? groupedRow(db, TOUCH_API_SESSIONS, [id, at])
      : hotWrite(db, TOUCH_API_SESSION_SQL, [at, id])
  ).then(() => undefined);
  if (!underWay) return write;
  underWay.set(id, write);
  try {
    await write;
  } finally {
    underWay.delete(id);
  }
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
): Promise<{ id: string; identityId: string; ipAddress: string; isOidc: boolean }[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('api_sessions')
    .select(['id', 'identityId', 'ipAddress', 'isOidc'])
    .where('id', 'in', ids)
    .execute();
  return rows.map((r) => ({ ...r, isOidc: boolFromDb(r.isOidc) }));
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
