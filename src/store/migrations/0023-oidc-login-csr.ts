/**
 * What a certificate login keeps on its OIDC authorization request beyond the bound fingerprint (docs/decisions.md,
 * "OIDC login"): the CSR the login submitted (`csrPem`), signed into an API-session certificate at the code
 * exchange, and whether the client's certificate chain was improper (`certImproperChain`, the `z_iccc` claim).
 *
 * On PostgreSQL the table's change-counter trigger is made again so that it lists the new columns (migration 0015).
 */
import type { Kysely } from 'kysely';
import { onPostgres } from './helpers.js';
import { traceTable } from './0015-change-log.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('oidc_auth_requests').addColumn('csrPem', 'text').execute();
  await db.schema
    .alterTable('oidc_auth_requests')
    .addColumn('certImproperChain', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  if (onPostgres(db)) await traceTable(db, 'oidc_auth_requests');
}
