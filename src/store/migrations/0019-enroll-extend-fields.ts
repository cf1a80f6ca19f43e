/**
 * Fields of the current spec on two existing resources (docs/decisions.md, "Enrollment with an external JWT" and
 * "Certificate extension requests"):
 *
 * - external JWT signers: whether their tokens may enroll identities with a certificate (`enrollToCertEnabled`) or
 *   as ext-JWT identities (`enrollToTokenEnabled`), the claims giving the new identity's name and attributes, and
 *   its auth policy;
 * - authenticators: an administrator's request that a certificate be extended (and its key rolled), and whether
 *   the last extension rolled the key.
 *
 * On PostgreSQL the authenticators' change trigger lists its traced columns (0015): it is made again so the new
 * ones are traced.
 */
import type { Kysely } from 'kysely';
import { onPostgres } from './helpers.js';
import { traceTable } from './0015-change-log.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  const flag = (table: string, column: string) =>
    db.schema
      .alterTable(table)
      .addColumn(column, 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  const add = (table: string, column: string, type: 'text' | 'integer') =>
    db.schema.alterTable(table).addColumn(column, type).execute();
  await flag('external_jwt_signers', 'enrollToCertEnabled');
  await flag('external_jwt_signers', 'enrollToTokenEnabled');
  await add('external_jwt_signers', 'enrollNameClaimsSelector', 'text');
  await add('external_jwt_signers', 'enrollAttributeClaimsSelector', 'text');
  await add('external_jwt_signers', 'enrollAuthPolicyId', 'text');
  await flag('authenticators', 'isExtendRequested');
  await flag('authenticators', 'isKeyRollRequested');
  await add('authenticators', 'extendRequestedAt', 'text');
  await add('authenticators', 'lastExtendRolledKeys', 'integer');

  if (onPostgres(db)) await traceTable(db, 'authenticators');
}
