/**
 * Sessions (queries only). Creating a session runs per request, so its lookup and its insert are fixed
 * statements run straight on the connection when it is free (direct.ts), rather than the query builder.
 */
import { groupedWrite, hotRows } from './direct.js';
import type { TypedExecutor } from './executor.js';
import { boolFromDb, boolToDb, jsonFromDb, jsonToDb } from './values.js';
import { storeKind } from './dialect.js';
import { eventParams, INSERT_EVENT, INSERT_EVENT_COLUMNS, type StoredEvent } from './events.js';

export interface StoredSession {
  id: string;
  createdAt: string;
  updatedAt: string;
  tags: Record<string, unknown>;
  isSystem: boolean;
  tokenHash: string;
  type: string;
  apiSessionId: string;
  serviceId: string;
  identityId: string;
}

interface SessionRow {
  id: string;
  createdAt: string;
  updatedAt: string;
  tags: string;
  isSystem: number;
  tokenHash: string;
  type: string;
  apiSessionId: string;
  serviceId: string;
  identityId: string;
}

const SESSION_OF = `select id, "createdAt", "updatedAt", tags, "isSystem", "tokenHash", type, "apiSessionId", "serviceId", "identityId"
  from sessions where "apiSessionId" = ? and "serviceId" = ? and type = ?`;

/** The session of an API session for a service and type (their unique index), if any. */
export async function sessionOf(
  db: TypedExecutor,
  apiSessionId: string,
  serviceId: string,
  type: string,
): Promise<StoredSession | undefined> {
  const [row] = await hotRows<SessionRow>(db, SESSION_OF, [apiSessionId, serviceId, type]);
  return row && { ...row, tags: jsonFromDb<Record<string, unknown>>(row.tags), isSystem: boolFromDb(row.isSystem) };
}

const SESSION_COLUMNS = `id, "createdAt", "updatedAt", tags, "isSystem", "tokenHash", type, "apiSessionId", "serviceId", "identityId"`;

const INSERT_SESSION = `insert into sessions (${SESSION_COLUMNS})
  values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  on conflict ("apiSessionId", "serviceId", type) do nothing`;

/**
 * PostgreSQL: the session and its event in one statement (one round trip); the event's row exists only when
 * the session's insert did not meet a conflict, and the statement answers the events it inserted, so 1 still
 * means "stored". SQLite has no writing CTE: there the event is the session insert's follow-up (direct.ts).
 */
const INSERT_SESSION_AND_EVENT = `with s as (${INSERT_SESSION} returning id)
  ${INSERT_EVENT_COLUMNS} select ?, ?, ?, ?, ?, ?, ?, ? from s`;

/**
 * Inserts a session unless one of the same API session, service and type exists (a concurrent create won the
 * unique index), and its event with it; answers whether this one was stored.
 */
export async function insertSessionIfAbsent(db: TypedExecutor, s: StoredSession, event: StoredEvent): Promise<boolean> {
  const params = [
    s.id,
    s.createdAt,
    s.updatedAt,
    jsonToDb(s.tags),
    boolToDb(s.isSystem),
    s.tokenHash,
    s.type,
    s.apiSessionId,
    s.serviceId,
    s.identityId,
  ];
  // Concurrent creates share one commit (direct.ts, `groupedWrite`), their events too.
  const changed =
    storeKind(db) === 'postgres'
      ? await groupedWrite(db, INSERT_SESSION_AND_EVENT, [...params, ...eventParams(event)], { outbox: true })
      : await groupedWrite(db, INSERT_SESSION, params, { then: { text: INSERT_EVENT, params: eventParams(event) } });
  return changed === 1;
}

/** The sessions some deletion is about to take with it (their events: model/events/session-events.ts). */
export async function sessionsWhere(
  db: TypedExecutor,
  column: 'id' | 'apiSessionId' | 'identityId' | 'serviceId',
  values: readonly string[],
): Promise<EndingSession[]> {
  if (values.length === 0) return [];
  return db
    .selectFrom('sessions')
    .select(['id', 'type', 'apiSessionId', 'serviceId', 'identityId'])
    .where(column, 'in', values)
    .execute();
}

export type EndingSession = Pick<StoredSession, 'id' | 'type' | 'apiSessionId' | 'serviceId' | 'identityId'>;

export async function deleteSessionById(db: TypedExecutor, id: string): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', id).execute();
}
