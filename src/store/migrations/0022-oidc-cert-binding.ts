/**
 * Certificate-bound OIDC tokens (docs/decisions.md, "OIDC login"): a certificate login records the SHA-1
 * fingerprint of the client certificate it presented on its authorization request, and the tokens issued for it
 * carry it (`z_cfs`, `z_acf`), so they are used only beside that certificate.
 *
 * On PostgreSQL the table's change-counter trigger is made again so that it lists the new column (migration 0015).
 */
import type { Kysely } from 'kysely';
import { onPostgres } from './helpers.js';
import { traceTable } from './0015-change-log.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('oidc_auth_requests').addColumn('certFingerprint', 'text').execute();
  if (onPostgres(db)) await traceTable(db, 'oidc_auth_requests');
}
