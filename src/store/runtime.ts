/**
 * What one open store keeps beside its connection: the write gate, the transaction batcher and the
 * checkpointer. It is found from the store's Kysely instance (or a transaction lent its connection), so the
 * model keeps passing only an executor. Made by `openStore` (db.ts); a Kysely instance made elsewhere (the
 * migrations' own) has none and runs plain transactions.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Checkpointer, WalStatus } from './checkpointer.js';
import { TxBatcher } from './tx-batch.js';
import type { WriteGate } from './write-gate.js';

export interface StoreRuntime {
  readonly gate: WriteGate;
  readonly batcher: TxBatcher;
  checkpointer: Checkpointer | undefined;
}

const runtimes = new WeakMap<object, StoreRuntime>();

export function createRuntime(db: Kysely<unknown>, inTransaction: () => boolean, gate: WriteGate): StoreRuntime {
  const runtime: StoreRuntime = {
    gate,
    checkpointer: undefined,
    batcher: new TxBatcher(
      db,
      inTransaction,
      () => (runtime.checkpointer ? runtime.checkpointer.admit() : gate.wait()),
      () => gate.isOpen,
    ),
  };
  runtimes.set(db, runtime);
  return runtime;
}

export function setCheckpointer(db: object, checkpointer: Checkpointer | undefined): void {
  const runtime = runtimes.get(db);
  if (runtime) runtime.checkpointer = checkpointer;
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

/** The write-ahead log's state, for `/metrics` and the bench; undefined for a store without a checkpointer. */
export function walStatus(db: object): WalStatus | undefined {
  return runtimes.get(db)?.checkpointer?.status();
}

/** Settles once no transaction of the store's batcher is open. */
export const settled = async (db: object): Promise<void> => runtimes.get(db)?.batcher.settled();

/** Committed batches and the transactions they held, since the store opened (tx-batch.ts). */
export function batchStats(db: object): { batches: number; members: number } | undefined {
  const batcher = runtimes.get(db)?.batcher;
  return batcher && { batches: batcher.batches, members: batcher.members };
}

/** The store's write gate (write-gate.ts), for tests of back-pressure. */
export const writeGateOf = (db: object): WriteGate | undefined => runtimes.get(db)?.gate;
