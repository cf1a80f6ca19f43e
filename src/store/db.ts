/**
 * Opening the store: the embedded SQLite file (better-sqlite3 under kysely, with the pragmas the controller
 * relies on) or, for a `postgres://` target, a PostgreSQL database (pg/open.ts).
 *
 * Domain code only sees `Executor` (a Kysely instance or a transaction); SQLite-specific settings stay in this
 * file and PostgreSQL's in `pg/`.
 */
import Database from 'better-sqlite3';
import type { Database as StoreSchema } from './schema.js';
import { Kysely, SqliteDialect, type SqliteDatabase, type SqliteStatement, type Transaction } from 'kysely';
import { knownMigrations, migrateToLatest } from './migrations/index.js';
import { ChangeFeed, SPLIT_COLUMNS } from './change-feed.js';
import type { SchemaObject } from './statement-tables.js';
import { startCheckpointer } from './checkpointer.js';
import { createRuntime, runTransaction, type DirectConnection, type StoreRuntime } from './runtime.js';
import { flushSearchQueue } from './search-queue.js';
import type { TxBatcher } from './tx-batch.js';
import type { Executor, Store } from './executor.js';
import { WriteGate } from './write-gate.js';
import { isPostgresTarget } from './dialect.js';
import { openPostgresStore } from './pg/open.js';
import type { OpenedStore, OpenOptions } from './opened-store.js';
import { SOLE_CLAIM } from './claims.js';
import { backupStore } from './snapshot.js';
export type { OpenedStore, OpenOptions } from './opened-store.js';
import {
  checkSchema,
  INTEGRITY_HINT,
  prepareStoreFile,
  quickCheck,
  restrictStoreFiles,
  StoreRefused,
} from './open-checks.js';

/** The store's tables as generated from the migrations (schema.ts). */
export type DB = StoreSchema;
export type { Executor, Store } from './executor.js';

/**
 * An executor for tables named at run time (the generic CRUD's resource and link tables, crud.ts), which the
 * typed `Database` interface cannot check. Only store modules that address tables by name use it.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type DynamicExecutor = Kysely<any> | Transaction<any>;
export const dynamic = (db: Executor): DynamicExecutor => db as DynamicExecutor;

/** Automatic checkpoints of a connection that has no background checkpointer (see openStore's pragmas). */
const AUTO_CHECKPOINT_PAGES = 10000;

/**
 * Opens (creating if needed) the SQLite file, applies pragmas and runs pending migrations. A writable file on
 * disk is kept at mode 0600 with its -wal/-shm files. With `verify` (the controller's start), an empty file, a
 * file SQLite cannot read, a failed `quick_check` or a schema that does not match the migrations is refused
 * with a `StoreRefused` error naming the file (open-checks.ts). A `postgres://` target opens PostgreSQL instead.
 */
export async function openStore(file: string, opts: OpenOptions = {}): Promise<OpenedStore> {
  if (isPostgresTarget(file)) return openPostgresStore(file, opts);
  const onDisk = file !== '' && file !== ':memory:' && !opts.readonly;
  if (onDisk) prepareStoreFile(file);
  let raw: Database.Database | undefined;
  let db: Kysely<DB> | undefined;
  const gate = new WriteGate();
  let runtime: StoreRuntime | undefined;
  let applied: string[] = [];
  try {
    const opened = new Database(file, { readonly: opts.readonly ?? false });
    const feed = new ChangeFeed(() => schemaObjects(opened), SPLIT_COLUMNS);
    raw = countWrites(opened, feed);
    if (!opts.readonly) raw.pragma('journal_mode = WAL');
    raw.pragma('foreign_keys = ON');
    raw.pragma('synchronous = NORMAL');
    raw.pragma('busy_timeout = 5000');
    // Checkpoints run inside the commit that crosses this many WAL pages (with an fsync of the database file),
    // blocking the event loop: every 10,000 pages (~40 MiB) rather than SQLite's 1,000 copies hot pages once
    // instead of ten times and halves a session insert's wall time on the large model. The WAL file
    // is cut back to 64 MiB after each. The controller's store checkpoints from a worker thread instead
    // (`backgroundCheckpoints`, checkpointer.ts) and keeps this only while that worker is not running.
    raw.pragma(`wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
    raw.pragma(`journal_size_limit = ${64 * 1024 * 1024}`);
    if (opts.verify) quickCheck(raw, file);
    const statements = withStatementCache(raw, feed);
    db = new Kysely<DB>({ dialect: new SqliteDialect({ database: statements }) });
    const connection = raw;
    const direct: DirectConnection = {
      prepare: (text) => statements.prepare(text) as unknown as ReturnType<DirectConnection['prepare']>,
      inTransaction: () => connection.inTransaction,
    };
    runtime = createRuntime(db as Kysely<unknown>, {
      kind: 'sqlite',
      connection: direct,
      gate,
      feed,
      beforeCommit: flushSearchQueue,
    });
    if (opts.migrate ?? !opts.readonly) applied = await migrateToLatest(db);
    if (opts.verify) await checkSchema(raw, file, knownMigrations);
    // The -wal and -shm files exist only now; SQLite created them with the database's mode, checked again here.
    if (onDisk) restrictStoreFiles(file);
  } catch (e) {
    if (db) await db.destroy().catch(() => {});
    else raw?.close();
    if (!opts.verify || e instanceof StoreRefused) throw e;
    throw new StoreRefused(`cannot open the store ${file}: ${(e as Error).message}; ${INTEGRITY_HINT}`);
  }
  const opened = db;
  const batcher = (runtime as StoreRuntime).batcher as TxBatcher;
  // The controller's store: checkpoints from a worker thread, off the event loop (checkpointer.ts).
  const checkpointer =
    onDisk && opts.backgroundCheckpoints
      ? startCheckpointer(file, raw, gate, () => batcher.settled(), AUTO_CHECKPOINT_PAGES, opts.checkpointLimits)
      : undefined;
  (runtime as StoreRuntime).checkpointer = checkpointer;
  let closed = false;
  const connection = raw;
  return {
    kind: 'sqlite',
    db: opened,
    raw,
    location: file,
    applied,
    wal: () => checkpointer?.status(),
    commits: () => ({ batches: batcher.batches, members: batcher.members }),
    claim: async () => SOLE_CLAIM,
    snapshot: (dest) => backupStore(connection, dest),
    async close() {
      if (closed) return;
      closed = true;
      await checkpointer?.stop();
      await opened.destroy();
    },
  };
}

/**
 * Counts the change feed (change-feed.ts) of statements prepared or executed on the connection directly,
 * not through kysely (maintenance, tests): every statement is prepared right before it runs.
 */
function countWrites(raw: Database.Database, feed: ChangeFeed): Database.Database {
  const prepare = raw.prepare.bind(raw);
  const exec = raw.exec.bind(raw);
  raw.prepare = ((sql: string) => {
    const stmt = prepare(sql);
    feed.note(sql, stmt.reader);
    return stmt;
  }) as typeof raw.prepare;
  raw.exec = (sql: string) => {
    feed.noteUnknown();
    return exec(sql);
  };
  return raw;
}

/** The schema as the change feed reads it: tables, views and triggers, with each table's foreign keys. */
function schemaObjects(raw: Database.Database): SchemaObject[] {
  const objects = raw
    .prepare(
      `select type, name, tbl_name as "table", sql from sqlite_master where type in ('table', 'view', 'trigger')`,
    )
    .all() as SchemaObject[];
  const keys = raw
    .prepare(
      `select m.name as child, f."table" as parent, f.on_delete as "onDelete", f.on_update as "onUpdate"
       from sqlite_master m join pragma_foreign_key_list(m.name) f where m.type = 'table'`,
    )
    .all() as { child: string; parent: string; onDelete: string; onUpdate: string }[];
  const byChild = new Map<string, typeof keys>();
  for (const k of keys) byChild.set(k.child, [...(byChild.get(k.child) ?? []), k]);
  return objects.map((o) => (o.type === 'table' ? { ...o, foreignKeys: byChild.get(o.name) ?? [] } : o));
}

/**
 * kysely prepares a statement for every query it runs, and preparing is the largest single cost of a small
 * query (more than running it). better-sqlite3 statements are reusable, so they are kept by SQL text (the
 * parameters are bound per run), least recently used first out. A statement that is still iterating is
 * never handed out twice: a fresh one is prepared instead. kysely prepares each statement right before running
 * it, so this is also where the change feed learns of every write (change-feed.ts).
 */
function withStatementCache(raw: Database.Database, feed: ChangeFeed, max = 2000): SqliteDatabase {
  const statements = new Map<string, Database.Statement>();
  return {
    prepare(sql: string): SqliteStatement {
      let stmt = statements.get(sql);
      if (stmt && !stmt.busy) {
        statements.delete(sql);
        statements.set(sql, stmt);
        feed.note(sql, stmt.reader);
        return stmt as unknown as SqliteStatement;
      }
      stmt = raw.prepare(sql); // counted by countWrites
      statements.set(sql, stmt);
      if (statements.size > max) statements.delete(statements.keys().next().value as string);
      return stmt as unknown as SqliteStatement;
    },
    close() {
      statements.clear();
      raw.close();
    },
  };
}

/**
 * Runs `fn` in one transaction, or inside the caller's transaction when already in one. The transaction may
 * share its commit with concurrent ones (tx-batch.ts); `fn`'s writes are undone alone if it throws.
 */
export async function withTx<T>(db: Executor, fn: (trx: Executor) => Promise<T>): Promise<T> {
  if (db.isTransaction) return fn(db);
  return runTransaction(db as Store, fn);
}
