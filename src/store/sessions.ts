/**
 * Sessions (queries only). Creating a session runs per request, so its lookup and its insert are fixed
 * statements run straight on the connection when it is free (direct.ts), rather than the query builder.
 */
import { groupedWrite, hotRows } from './direct.js';
import type { TypedExecutor } from './executor.js';
import { boolFromDb, boolToDb, jsonFromDb, jsonToDb } from './values.js';

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

const INSERT_SESSION = `insert into sessions (id, "createdAt", "updatedAt", tags, "isSystem", "tokenHash", type, "apiSessionId", "serviceId", "identityId")
  values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  on conflict ("apiSessionId", "serviceId", type) do nothing`;

/**
 * Inserts a session unless one of the same API session, service and type exists (a concurrent create won the
 * unique index); answers whether this one was stored.
 */
export async function insertSessionIfAbsent(db: TypedExecutor, s: StoredSession): Promise<boolean> {
  // Concurrent creates share one commit (direct.ts, `groupedWrite`).
  const changed = await groupedWrite(db, INSERT_SESSION, [
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
  ]);
  return changed === 1;
}

export async function deleteSessionById(db: TypedExecutor, id: string): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', id).execute();
}
