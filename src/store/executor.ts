/**
 * The typed executor of the store's query modules: kysely checks every table, column and result type
 * against the generated `Database` interface (schema.ts). Callers may pass the store's untyped `Executor`
 * (db.ts); it is assignable, so the query modules are typed without a change elsewhere.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

export type TypedExecutor = Kysely<Database> | Transaction<Database>;
