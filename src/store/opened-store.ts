/**
 * What opening a store answers, whichever engine it runs on (db.ts for SQLite, pg/open.ts for PostgreSQL).
 * A leaf module, so that both openers can name it.
 */
import type Database from 'better-sqlite3';
import type { CheckpointLimits, WalStatus } from './checkpointer.js';
import type { StoreKind } from './dialect.js';
import type { Store } from './executor.js';

export interface OpenedStore {
  readonly kind: StoreKind;
  db: Store;
  /**
   * SQLite's connection, for file-level operations (snapshot, integrity pragma); a PostgreSQL store throws
   * (callers of file-level operations check `kind` first).
   */
  readonly raw: Database.Database;
  /** Where the store is, for messages: the file, or the database URL without its password. */
  readonly location: string;
  /** The write-ahead log's state (checkpointer.ts); undefined without the background checkpointer. */
  wal(): WalStatus | undefined;
  /** Commits of shared transactions and the transactions they held, since the store opened (tx-batch.ts). */
  commits(): { batches: number; members: number };
  close(): Promise<void>;
}

export interface OpenOptions {
  readonly?: boolean;
  migrate?: boolean;
  verify?: boolean;
  backgroundCheckpoints?: boolean;
  /** The background checkpointer's bounds (checkpointer.ts); its defaults otherwise. */
  checkpointLimits?: CheckpointLimits;
}
