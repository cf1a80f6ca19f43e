/**
 * Sessions (queries only). Creating a session runs per request, so its lookup and its insert are `sql`
 * templates, prepared once by their text (db.ts), rather than the query builder.
 */
import { sql } from 'kysely';
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

/** The session of an API session for a service and type (their unique index), if any. */
export async function sessionOf(
  db: TypedExecutor,
  apiSessionId: string,
  serviceId: string,
  type: string,
): Promise<StoredSession | undefined> {
  const { rows } =
    await sql<SessionRow>`select id, "createdAt", "updatedAt", tags, "isSystem", "tokenHash", type, "apiSessionId", "serviceId", "identityId"
    from sessions where "apiSessionId" = ${apiSessionId} and "serviceId" = ${serviceId} and type = ${type}`.execute(db);
  const row = rows[0];
  return row && { ...row, tags: jsonFromDb<Record<string, unknown>>(row.tags), isSystem: boolFromDb(row.isSystem) };
}

/**
 * Inserts a session unless one of the same API session, service and type exists (a concurrent create won the
 * unique index); answers whether this one was stored.
 */
export async function insertSessionIfAbsent(db: TypedExecutor, s: StoredSession): Promise<boolean> {
  const res =
    await sql`insert into sessions (id, "createdAt", "updatedAt", tags, "isSystem", "tokenHash", type, "apiSessionId", "serviceId", "identityId")
      values (${s.id}, ${s.createdAt}, ${s.updatedAt}, ${jsonToDb(s.tags)}, ${sql.lit(boolToDb(s.isSystem))}, ${s.tokenHash}, ${s.type}, ${s.apiSessionId}, ${s.serviceId}, ${s.identityId})
      on conflict ("apiSessionId", "serviceId", type) do nothing`.execute(db);
  return Number(res.numAffectedRows ?? 0) === 1;
}

export async function deleteSessionById(db: TypedExecutor, id: string): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', id).execute();
}
