/**
 * Hot statements without the query builder's round trip. Through kysely each query is compiled, queued on the
 * driver's connection lock and answered through several promises; for the few statements that run on every
 * request (token lookup, markers, session lookup and insert, activity touch) that costs more than SQLite
 * itself. better-sqlite3 is synchronous, so when no transaction holds the connection such a statement can run
 * on it directly, prepared once by its text (the statement cache of db.ts, which also counts write
 * generations). Inside a transaction begun by `withTx` the connection belongs to that transaction until it
 * ends (kysely's SQLite driver lends its one connection to one transaction at a time), so the transaction's own
 * statements run on it directly too. While another flow's transaction is open on the connection the same text
 * goes through kysely, which waits for it, so isolation is what it always was.
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

/**
 * Lends the store's connection to a transaction object for as long as `fn` runs (db.ts's `withTx`): only that
 * transaction's flow uses it meanwhile. A transaction object used after its end falls back to kysely.
 */
export async function lendToTransaction<T>(db: object, trx: object, fn: () => Promise<T>): Promise<T> {
  const c = connections.get(db);
  if (!c) return fn();
  connections.set(trx, c);
  try {
    return await fn();
  } finally {
    connections.delete(trx);
  }
}

function usable(db: Executor): DirectConnection | undefined {
  const c = connections.get(db);
  if (!c) return undefined;
  // A transaction holds the connection it was lent; the store itself only when no transaction is open on it.
  return db.isTransaction || !c.inTransaction() ? c : undefined;
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
