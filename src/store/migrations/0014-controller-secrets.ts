/**
 * The controller's secrets in the store, for controllers that share a PostgreSQL database (docs/decisions.md,
 * "Shared controller secrets"): the PKI's keys and certificates and the token key, one row each, every value
 * sealed under the master key the replicas are given (src/pki/master-key.ts), which is never stored.
 *
 * `name` is the item (`pki/root-ca.key.pem`, …, `token.key`) and is bound into the sealed value, so a value
 * copied to another row does not open. On SQLite the table exists too and stays empty: a controller of its own
 * keeps these files in its data dir.
 */
import type { Kysely } from 'kysely';
import { keyedOnly } from './helpers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await keyedOnly(
    db,
    db.schema
      .createTable('controller_secrets')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('ciphertext', 'text', (c) => c.notNull())
      .addColumn('createdAt', 'text', (c) => c.notNull())
      .addColumn('updatedAt', 'text', (c) => c.notNull()),
  ).execute();
}
