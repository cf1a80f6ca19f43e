/**
 * Hot statements without the query builder's round trip. Through kysely each query is compiled, queued on the
 * driver's connection lock and answered through several promises; for the few statements that run on every
 * request (token lookup, markers, session lookup and insert, activity touch) that costs more than SQLite
 * itself. better-sqlite3 is synchronous, so when no transaction holds the connection such a statement can run
 * on it directly, prepared once by its text (the statement cache of db.ts, which also counts write
 * generations). Inside a transaction, or while another flow's transaction is open on the connection, the
 * same text goes through kysely, so isolation is what it always was.
 *
 * The statement texts are fixed strings with `?` parameters, so both paths run exactly the same SQL.
 */
import { CompiledQuery } from 'kysely';
import type { Executor } from './db.js';

/** What db.ts registers for a store it opened: its statement cache and whether a transaction is open. */
export interface DirectConnection {
  prepare(text: string): DirectStatement;
  inTransaction(): boolean;
}

interface DirectStatement {
  all(params: readonly unknown[]): unknown[];
  run(params: readonly unknown[]): { changes: number };
}

const connections = new WeakMap<object, DirectConnection>();

export function registerDirect(db: object, connection: DirectConnection): void {
  connections.set(db, connection);
}

function usable(db: Executor): DirectConnection | undefined {
  if (db.isTransaction) return undefined;
  const c = connections.get(db);
  return c && !c.inTransaction() ? c : undefined;
}

/** The rows of a read. */
export async function hotRows<R>(db: Executor, text: string, params: readonly unknown[]): Promise<R[]> {
  const c = usable(db);
  if (c) return c.prepare(text).all(params) as R[];
  return (await db.executeQuery<R>(CompiledQuery.raw(text, [...params]))).rows as R[];
}

/** A write; answers the number of rows it changed. */
export async function hotWrite(db: Executor, text: string, params: readonly unknown[]): Promise<number> {
  const c = usable(db);
  if (c) return c.prepare(text).run(params).changes;
  return Number((await db.executeQuery(CompiledQuery.raw(text, [...params]))).numAffectedRows ?? 0);
}
