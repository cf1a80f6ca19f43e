/**
 * What one open store keeps beside its connection: the direct statements' access to it (direct.ts), the write
 * gate, the transaction batcher, the grouped writes waiting for their commit and the checkpointer. It is found
 * from the store's Kysely instance, or from a transaction while it is lent the connection, so the model keeps
 * passing only an executor. Made by `openStore` (db.ts); a Kysely instance made elsewhere (the migrations'
 * own) has none and runs plain transactions.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { ChangeFeed, Deps } from './change-feed.js';
import type { StoreKind } from './dialect.js';
import type { Checkpointer } from './checkpointer.js';
import type { Executor } from './executor.js';
import { TxBatcher } from './tx-batch.js';
import type { WriteGate } from './write-gate.js';

/** The store's connection as direct statements use it: its statement cache and whether a transaction is open. */
export interface DirectConnection {
  prepare(text: string): DirectStatement;
  inTransaction(): boolean;
}

interface DirectStatement {
  all(params: readonly unknown[]): unknown[];
  run(params: readonly unknown[]): { changes: number };
}

/** A row waiting for its turn's multi-row statement (direct.ts's `groupedRow`). */
export interface GroupedRow {
  values: readonly unknown[];
  resolve(written: boolean): void;
  reject(e: unknown): void;
}

/** The rows of one statement kind waiting for it, and how many of its statements are running. */
export interface RowsQueue {
  rows: GroupedRow[];
  running: number;
  scheduled: boolean;
}

/** A write waiting to share the commit of its event-loop turn (direct.ts's `groupedWrite`). */
export interface GroupedWrite {
  text: string;
  params: readonly unknown[];
  /** A statement run after it in the same transaction when it changed a row (its event: store/events.ts). */
  then?: { text: string; params: readonly unknown[] } | undefined;
  resolve(changes: number): void;
  reject(e: unknown): void;
}

/**
 * A cache kept per open store: declared once by the module that uses it (a constant), made for each store on
 * first use from the store's change feed, which decides its validity.
 */
export interface CacheSpec<T> {
  /** Its name in metrics and in the docs' list of caches. */
  readonly name: string;
  make(feed: ChangeFeed): T;
}

export const defineCache = <T>(name: string, make: (feed: ChangeFeed) => T): CacheSpec<T> =>
  Object.freeze({ name, make });

export interface StoreRuntime {
  readonly kind: StoreKind;
  /** SQLite's one connection, for direct statements; a pooled store (PostgreSQL) has none. */
  readonly connection: DirectConnection | undefined;
  /** Which tables each write touched (change-feed.ts): the one source of every cache's validity. */
  readonly feed: ChangeFeed;
  /** Every cache of this store, by its spec (see {@link storeCache}). */
  readonly caches: Map<CacheSpec<unknown>, unknown>;
  readonly gate: WriteGate;
  /** The group commit (tx-batch.ts): SQLite's on its one connection, PostgreSQL's on one pooled connection at a time. */
  readonly batcher: TxBatcher;
  checkpointer: Checkpointer | undefined;
  /** The grouped writes of the current turn, until their batch runs. */
  grouped: GroupedWrite[] | undefined;
  /** PostgreSQL's rows of the current turn, by statement, until it runs (direct.ts's `groupedRow`). */
  readonly groupedRows: Map<object, RowsQueue>;
  /** Other replicas' writes, and this one's reaching them (pg/replica-changes.ts); PostgreSQL stores only. */
  replicas:
    | {
        fresh(): Promise<void> | undefined;
        published(): Promise<void>;
        readonly reads: number;
        readonly failures: number;
        /** Whether its heartbeat runs (only while requests come). */
        readonly beating: boolean;
      }
    | undefined;
}

const runtimes = new WeakMap<object, StoreRuntime>();

export function createRuntime(
  db: Kysely<unknown>,
  parts: {
    kind: StoreKind;
    connection?: DirectConnection;
    gate: WriteGate;
    feed: ChangeFeed;
    /**
     * Run by the group commit in each batch's transaction before it commits (db.ts: the search indexes' queue;
     * pg/open.ts: which change counters the batch moved); what it answers runs once the batch has committed.
     */
    beforeCommit?: (trx: Executor) => Promise<(() => void) | void>;
  },
): StoreRuntime {
  const { connection, gate } = parts;
  const beforeCommit = parts.beforeCommit;
  const runtime: StoreRuntime = {
    kind: parts.kind,
    connection,
    feed: parts.feed,
    caches: new Map(),
    gate,
    checkpointer: undefined,
    grouped: undefined,
    groupedRows: new Map(),
    replicas: undefined,
    batcher: new TxBatcher(
      db,
      // A failed statement aborts PostgreSQL's transaction only back to the member's savepoint; whether the
      // transaction itself is gone shows when rolling back to it fails.
      connection ? () => connection.inTransaction() : () => true,
      (trx, fn) => lendToTransaction(db, trx, fn),
      () => (runtime.checkpointer ? runtime.checkpointer.admit() : gate.wait()),
      () => gate.isOpen,
      {
        ...(!connection && { begin: takeWriterLock, combinedStatements: true }),
        ...(beforeCommit && { beforeCommit: (trx) => beforeCommit(trx as unknown as Executor) }),
      },
    ),
  };
  runtimes.set(db, runtime);
  return runtime;
}

/**
 * The key of the advisory lock every PostgreSQL write transaction takes first: transactions that change the
 * model run one at a time across every replica, as they do on SQLite's one connection, so a check made inside
 * one (a name still free, a code not yet used) still holds when it commits. The group commit takes it once per
 * batch (tx-batch.ts): the members run in turn under it and share its commit. Single statements outside a
 * transaction (a new session, an activity touch, a failed-attempt count) do not take it.
 */
const WRITER_LOCK = 0x65646765; // 'edge'

const takeWriterLock = async (trx: Transaction<unknown>): Promise<void> => {
  await sql`select pg_advisory_xact_lock(${WRITER_LOCK})`.execute(trx);
};

/** The runtime of the store `db` is, or of the store whose connection the transaction `db` holds now. */
export const runtimeOf = (db: object): StoreRuntime | undefined => runtimes.get(db);

/**
 * Lends the store's connection to a transaction object for as long as `fn` runs (the batcher's transaction):
 * only that transaction's flow uses it meanwhile. A transaction object used after its end falls back to kysely.
 */
async function lendToTransaction<T>(db: object, trx: object, fn: () => Promise<T>): Promise<T> {
  const runtime = runtimes.get(db);
  if (!runtime) return fn();
  runtimes.set(trx, runtime);
  try {
    return await fn();
  } finally {
    runtimes.delete(trx);
  }
}

/**
 * Runs `fn` in a transaction of the store `db`: in a batch that shares its commit when the store has a runtime
 * (tx-batch.ts), in a transaction of its own otherwise. `db` is not a transaction (callers check).
 */
export function runTransaction<D, T>(db: Kysely<D>, fn: (trx: Transaction<D>) => Promise<T>): Promise<T> {
  const runtime = runtimes.get(db);
  if (!runtime) return db.transaction().execute(fn);
  return runtime.batcher.run(fn as unknown as (trx: Transaction<unknown>) => Promise<T>);
}

/** The store's write gate (write-gate.ts), for tests of back-pressure. */
export const writeGateOf = (db: object): WriteGate | undefined => runtimes.get(db)?.gate;

/**
 * The store's instance of the cache `spec`, made on first use. Undefined inside a transaction (what it has not
 * committed must never reach what other requests share) and for a store opened without a runtime.
 */
export function storeCache<T>(db: Executor, spec: CacheSpec<T>): T | undefined {
  return db.isTransaction ? undefined : storeState(db, spec);
}

/**
 * The store's instance of `spec` for state that is not a cache (a journal of what transactions changed): found
 * from a transaction too, while it holds the store's connection.
 */
export function storeState<T>(db: Executor, spec: CacheSpec<T>): T | undefined {
  const runtime = runtimes.get(db);
  if (!runtime) return undefined;
  let c = runtime.caches.get(spec as CacheSpec<unknown>) as T | undefined;
  if (c === undefined) {
    c = spec.make(runtime.feed);
    runtime.caches.set(spec as CacheSpec<unknown>, c);
  }
  return c;
}

/** The store's change feed, outside a transaction (see {@link storeCache}). */
export const feedOf = (db: Executor): ChangeFeed | undefined => (db.isTransaction ? undefined : runtimes.get(db)?.feed);

/**
 * Calls `fn` after each committed write that touched one of `tables` (or whose reach is unknown) in the store
 * `db`: what must follow the stored state outside any cache (the TLS listener's trusted CAs).
 */
export function onTablesChanged(db: Executor, tables: readonly string[], fn: () => void): () => void {
  const feed = runtimes.get(db)?.feed;
  if (!feed) return () => {};
  return feed.onChange((changed) => {
    if (changed.some((t) => t === '*' || tables.includes(t))) fn();
  });
}

/**
 * Settles once the store's caches have learnt of every write other replicas committed before this call
 * (pg/replica-changes.ts); undefined, at no cost, for a store no other process writes (SQLite).
 */
export const storeFresh = (db: object): Promise<void> | undefined => runtimes.get(db)?.replicas?.fresh();

/**
 * What a request that may have written compares before it is answered: the count of this store's writes that
 * move the change counters other replicas follow (every table but the untraced ones: migration 0015's
 * triggers, which write `store_changes`); undefined for a store no other process follows (SQLite).
 */
export function replicatedWrites(db: object): number | undefined {
  const runtime = runtimes.get(db);
  if (!runtime?.replicas) return undefined;
  return runtime.feed.version(storeState(db as Executor, REPLICATED_WRITES)!);
}

/** The feed's dependency on the change counters' table, made once per store. */
const REPLICATED_WRITES = defineCache('replicated-writes', (feed): Deps => feed.deps(['store_changes']));

/**
 * Settles once every other replica has learnt of this store's committed writes, or stopped counting as live
 * (pg/replica-changes.ts, `published`); undefined for SQLite.
 */
export const storePublished = (db: object): Promise<void> | undefined => runtimes.get(db)?.replicas?.published();

/** How often the store has read other replicas' change counters, and failed to; undefined for SQLite. */
export function replicaFeedStats(db: object): { reads: number; failures: number } | undefined {
  const r = runtimes.get(db)?.replicas;
  return r && { reads: r.reads, failures: r.failures };
}
