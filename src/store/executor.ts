/**
 * The store's executors, typed by the generated `Database` interface (schema.ts): kysely checks every table,
 * column and result type of the query modules against it. A leaf module, so that modules db.ts itself imports
 * can name them without importing db.ts back.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

export type TypedExecutor = Kysely<Database> | Transaction<Database>;

/** The store itself, and anything that runs its queries: the store or one of its transactions. */
export type Store = Kysely<Database>;
export type Executor = Kysely<Database> | Transaction<Database>;
