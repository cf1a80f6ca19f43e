/**
 * Hot statements without the query builder's round trip. Through kysely each query is compiled, queued on the
 * driver's connection lock and answered through several promises; for the few statements that run on every
 * request (token lookup, markers, session lookup and insert, activity touch) that costs more than SQLite
 * itself. better-sqlite3 is synchronous, so when no transaction holds the connection such a statement can run
 * on it directly, prepared once by its text (the statement cache of db.ts, which also tells the change
 * feed). Inside a transaction begun by `withTx` the connection belongs to that transaction until it
 * ends (kysely's SQLite driver lends its one connection to one transaction at a time), so the transaction's own
 * statements run on it directly too. While another flow's transaction is open on the connection the same text
 * goes through kysely, which waits for it, so isolation is what it always was.
 *
 * The statement texts are fixed strings with `?` parameters, so both paths run exactly the same SQL.
 */
import { CompiledQuery } from 'kysely';
import { numberedPlaceholders, storeKind } from './dialect.js';
import type { Executor, Store } from './executor.js';
import {
  runTransaction,
  runtimeOf,
  type DirectConnection,
  type GroupedRow,
  type RowsQueue,
  type GroupedWrite,
  type StoreRuntime,
} from './runtime.js';

function usable(db: Executor): DirectConnection | undefined {
  const c = runtimeOf(db)?.connection;
  if (!c) return undefined;
  // A transaction holds the connection it was lent; the store itself only when no transaction is open on it.
  return db.isTransaction || !c.inTransaction() ? c : undefined;
}

/** The rows of a read. */
export async function hotRows<R>(db: Executor, text: string, params: readonly unknown[]): Promise<R[]> {
  const c = usable(db);
  if (c) return c.prepare(text).all(params) as R[];
  return (await db.executeQuery<R>(throughKysely(db, text, params))).rows as R[];
}

/** A write; answers the number of rows it changed. */
export async function hotWrite(db: Executor, text: string, params: readonly unknown[]): Promise<number> {
  // Outside a transaction a write waits while the checkpointer cuts the write-ahead log (write-gate.ts): it would
  // otherwise wait for the worker's write lock in SQLite's busy handler, which sleeps on the event loop.
  if (!db.isTransaction) {
    const wait = runtimeOf(db)?.gate.wait();
    if (wait) await wait;
  }
  const c = usable(db);
  if (c) return c.prepare(text).run(params).changes;
  return Number((await db.executeQuery(throughKysely(db, text, params))).numAffectedRows ?? 0);
}

/**
 * The mark a hot statement carries on PostgreSQL: the store runs it as a prepared statement (pg/open.ts), parsed
 * and planned once per pooled connection. A comment, so the text runs as written wherever it goes.
 */
export const HOT_STATEMENT = ' /* hot */';

/**
 * The statement as kysely runs it; PostgreSQL numbers its placeholders (a scan of a short text, no memo) and
 * is told the statement is hot.
 */
function throughKysely(db: Executor, text: string, params: readonly unknown[]): CompiledQuery {
  const sqlText = storeKind(db) === 'sqlite' ? text : numberedPlaceholders(text) + HOT_STATEMENT;
  return CompiledQuery.raw(sqlText, [...params]);
}

/** The batch's own transaction texts (the change feed sees them as any transaction's begin and end). */
const BATCH_BEGIN = 'begin /* grouped writes */';
const BATCH_COMMIT = 'commit /* grouped writes */';
const BATCH_ROLLBACK = 'rollback /* grouped writes */';

/** What a grouped write may carry besides its statement. */
export interface GroupedExtras {
  /** Run after the statement, in its transaction, when it changed a row (the change's event: store/events.ts). */
  then?: { text: string; params: readonly unknown[] } | undefined;
}

/**
 * SQLite: a write that may share its commit with the other grouped writes of the same event-loop turn (group commit):
 * concurrent requests' inserts run in one transaction instead of one each, which saves most of a commit's fixed
 * cost per statement (a new session's insert: ~115 → ~75 µs). Each answer still waits for the commit, so a
 * request is answered only once its row is durable as before. The change feed sees the batch's writes as
 * those of one transaction, so every cache reading their tables misses after it. Inside a transaction the
 * write runs there; a statement that fails rejects its own request only (SQLite keeps the transaction). A
 * follow-up (`extras.then`) commits with its statement or not at all.
 */
export function groupedWrite(
  db: Executor,
  text: string,
  params: readonly unknown[],
  extras: GroupedExtras = {},
): Promise<number> {
  const runtime = db.isTransaction ? undefined : runtimeOf(db);
  // A pooled store (PostgreSQL) groups rows with `groupedRow` instead: one statement, not a transaction of many.
  if (!runtime || !runtime.connection) return runUnit(db, { text, params, then: extras.then });
  let queue = runtime.grouped;
  if (!queue) {
    runtime.grouped = queue = [];
    setImmediate(() => flush(db, runtime));
  }
  return new Promise((resolve, reject) => queue.push({ text, params, then: extras.then, resolve, reject }));
}

type Unit = Pick<GroupedWrite, 'text' | 'params' | 'then'>;

/** One grouped write alone: its statement, and its follow-up in the same transaction. */
async function runUnit(db: Executor, p: Unit): Promise<number> {
  if (!p.then) return hotWrite(db, p.text, p.params);
  if (!db.isTransaction) return runTransaction(db as Store, (trx) => runUnit(trx, p));
  const n = await hotWrite(db, p.text, p.params);
  if (n > 0 && p.then) await hotWrite(db, p.then.text, p.then.params);
  return n;
}

/** A follow-up failed after its statement had changed rows: the batch is undone and its writes go one by one. */
class UnitFailed extends Error {}

function flush(db: Executor, runtime: StoreRuntime): void {
  const wait = runtime.gate.wait();
  if (wait) {
    // The batch goes once the log has been cut; writes arriving meanwhile join it.
    void wait.then(() => flush(db, runtime));
    return;
  }
  const queue = runtime.grouped ?? [];
  runtime.grouped = undefined;
  const c = usable(db);
  if (!c || (queue.length === 1 && !queue[0]!.then)) {
    // Another flow's transaction holds the connection (or there is nothing to share): one at a time, as before.
    oneByOne(db, queue);
    return;
  }
  const changes: (number | { error: unknown })[] = [];
  try {
    c.prepare(BATCH_BEGIN).run([]);
    for (const p of queue) {
      let n: number;
      try {
        n = c.prepare(p.text).run(p.params).changes;
      } catch (error) {
        changes.push({ error });
        continue;
      }
      if (n > 0 && p.then) {
        try {
          c.prepare(p.then.text).run(p.then.params);
        } catch {
          throw new UnitFailed();
        }
      }
      changes.push(n);
    }
    c.prepare(BATCH_COMMIT).run([]);
  } catch (e) {
    if (c.inTransaction()) c.prepare(BATCH_ROLLBACK).run([]);
    if (e instanceof UnitFailed) oneByOne(db, queue);
    else for (const p of queue) p.reject(e);
    return;
  }
  queue.forEach((p, i) => {
    const r = changes[i]!;
    if (typeof r === 'number') p.resolve(r);
    else p.reject(r.error);
  });
}

function oneByOne(db: Executor, queue: readonly GroupedWrite[]): void {
  for (const p of queue) runUnit(db, p).then(p.resolve, p.reject);
}

/**
 * A statement that writes many rows at once on PostgreSQL: its parameters are arrays, one per column (`unnest`),
 * and it answers the first column of each row it wrote (`returning`). Its text does not depend on the number of
 * rows, so it is prepared once per pooled connection like any hot statement.
 */
export interface RowsStatement {
  readonly text: string;
  /**
   * How many of its statements may run at once (default 1). While they run, new rows wait and go together in
   * the next one, so the rows per statement grow with the load instead of the statements queueing at the server
   * (at a lock the statement takes, or at the log flush of its commit).
   */
  readonly inFlight?: number;
}

/** At most this many rows go in one statement. */
const ROWS_PER_STATEMENT = 256;

/**
 * PostgreSQL's group commit for single-row writes: rows of one statement kind go to the server together, as one
 * statement, in one round trip and one commit (a statement outside a transaction block commits on its own).
 * Grouping them in a transaction instead costs a round trip per row, plus begin and commit, and a transaction
 * that takes the writer lock holds it across all of them (new sessions fell to a few hundred a second that way).
 * Answers whether the row was written (its key, the first value, came back). A failing statement is sent again
 * row by row, so only the failing row's request fails. Inside a transaction the row goes alone in it.
 * `values[0]` must be the row's key (text).
 */
export function groupedRow(db: Executor, statement: RowsStatement, values: readonly unknown[]): Promise<boolean> {
  const runtime = db.isTransaction ? undefined : runtimeOf(db);
  if (!runtime) return writeRows(db, statement, [values]).then((keys) => keys.has(String(values[0])));
  let q = runtime.groupedRows.get(statement);
  if (!q) runtime.groupedRows.set(statement, (q = { rows: [], running: 0, scheduled: false }));
  const queue = q;
  const promise = new Promise<boolean>((resolve, reject) => queue.rows.push({ values, resolve, reject }));
  if (!queue.scheduled && queue.running < (statement.inFlight ?? 1)) {
    // The rest of this event-loop turn's rows join it.
    queue.scheduled = true;
    setImmediate(() => {
      queue.scheduled = false;
      drainRows(db, statement, queue);
    });
  }
  return promise;
}

function drainRows(db: Executor, statement: RowsStatement, queue: RowsQueue): void {
  while (queue.rows.length > 0 && queue.running < (statement.inFlight ?? 1)) {
    const rows = queue.rows.splice(0, ROWS_PER_STATEMENT);
    queue.running++;
    void flushRows(db, statement, rows).finally(() => {
      queue.running--;
      drainRows(db, statement, queue);
    });
  }
}

async function flushRows(db: Executor, statement: RowsStatement, rows: readonly GroupedRow[]): Promise<void> {
  let keys: Set<string>;
  try {
    keys = await writeRows(
      db,
      statement,
      rows.map((r) => r.values),
    );
  } catch (e) {
    if (rows.length === 1) rows[0]!.reject(e);
    else await Promise.all(rows.map((r) => flushRows(db, statement, [r])));
    return;
  }
  for (const r of rows) r.resolve(keys.has(String(r.values[0])));
}

/** Runs the statement over `rows` (column arrays made from them); answers the keys it returned. */
async function writeRows(
  db: Executor,
  statement: RowsStatement,
  rows: readonly (readonly unknown[])[],
): Promise<Set<string>> {
  const columns = rows[0]!.map((_, i) => rows.map((r) => r[i]));
  const result = await db.executeQuery<Record<string, unknown>>(
    CompiledQuery.raw(statement.text + HOT_STATEMENT, columns),
  );
  return new Set(result.rows.map((r) => String(Object.values(r)[0])));
}
