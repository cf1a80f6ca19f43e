/**
 * Sessions (queries only). Creating a session runs per request, so its lookup and its insert are fixed
 * statements run straight on the connection when it is free (direct.ts), rather than the query builder.
 */
import { groupedRow, groupedWrite, hotRows } from './direct.js';
import type { TypedExecutor } from './executor.js';
import { boolFromDb, boolToDb, jsonFromDb, jsonToDb } from './values.js';
import { storeKind } from './dialect.js';
import { INSERT_EVENT_COLUMNS } from './events.js';

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
 * A new session's `created` event (model/events/session-events.ts) as the store inserts it with the session: its
 * own values. The rest of its outbox row is the session's: its time the session's `createdAt`, its entity the
 * session (`sessions`, its id), its namespace and type `session` `created`, written as constants.
 */
export interface NewSessionEvent {
  id: string;
  actorId: string;
  /** The event as JSON text without its common fields, which its row's columns hold (events.ts, `wholeBody`). */
  body: string;
}

/** SQLite: the event's insert, the session insert's follow-up in its transaction (direct.ts, `groupedWrite`). */
const INSERT_SESSION_EVENT = `${INSERT_EVENT_COLUMNS} values (?, 'session', 'created', ?, ?, 'sessions', ?, ?)`;

/**
 * PostgreSQL: the sessions of one event-loop turn and their events in one statement (direct.ts, `groupedRow`),
 * which commits on its own. Only sessions that met no conflict get their event, and the statement answers their
 * ids. It takes no lock: statements of several replicas commit side by side, and their events' positions may
 * commit out of order, which the outbox's readers allow for (event-horizon.ts). Columns are named, never `*`,
 * so the statement is prepared (pg/open.ts).
 */
const V_COLUMNS = `id, "createdAt", "updatedAt", tags, "isSystem", "tokenHash", type, "apiSessionId", "serviceId",
  "identityId", e_id, e_actor, e_body`;
const INSERT_SESSIONS_AND_EVENTS = {
  text: `with v as (select ${V_COLUMNS} from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[],
    $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[]) as u(${V_COLUMNS})),
  s as (insert into sessions (${SESSION_COLUMNS})
    select id, "createdAt", "updatedAt", tags, "isSystem", "tokenHash", type, "apiSessionId", "serviceId", "identityId"
    from v on conflict ("apiSessionId", "serviceId", type) do nothing returning id),
  e as (${INSERT_EVENT_COLUMNS}
    select e_id, 'session', 'created', v."createdAt", e_actor, 'sessions', v.id, e_body
    from v join s on s.id = v.id)
  select id from s`,
};

/**
 * Inserts a session unless one of the same API session, service and type exists (a concurrent create won the
 * unique index), and its `created` event with it; answers whether this one was stored.
 */
export async function insertSessionIfAbsent(
  db: TypedExecutor,
  s: StoredSession,
  event: NewSessionEvent,
): Promise<boolean> {
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
  if (storeKind(db) === 'postgres')
    return groupedRow(db, INSERT_SESSIONS_AND_EVENTS, [...params, event.id, event.actorId, event.body]);
  const changed = await groupedWrite(db, INSERT_SESSION, params, {
    then: { text: INSERT_SESSION_EVENT, params: [event.id, s.createdAt, event.actorId, s.id, event.body] },
  });
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
