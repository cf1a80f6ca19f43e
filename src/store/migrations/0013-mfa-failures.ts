/**
 * Wrong MFA codes and pending enrollments bound to their API session (docs/decisions.md, "TOTP MFA and partial API
 * sessions").
 *
 * - `mfa_failures`: one row per wrong code presented against a verified enrollment, with the API session that
 *   sent it and the time. Rows outlive the session (no foreign key to it), so ending a session forgives nothing;
 *   they go with their enrollment.
 * - `mfas.apiSessionId`: the API session that started an unverified enrollment (null once verified). A pending
 *   enrollment goes with its session. Pending enrollments made before this migration have no session to belong
 *   to and were never in force: they are dropped, their owners start again.
 */
import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.deleteFrom('mfas').where('isVerified', '=', 0).execute();
  await db.schema
    .alterTable('mfas')
    .addColumn('apiSessionId', 'text', (c) => c.references('api_sessions.id').onDelete('cascade'))
    .execute();
  // Every API-session delete looks up the enrollments that reference it.
  await db.schema.createIndex('mfas_by_api_session').on('mfas').column('apiSessionId').execute();
  await db.schema
    .createTable('mfa_failures')
    .addColumn('mfaId', 'text', (c) => c.notNull().references('mfas.id').onDelete('cascade'))
    .addColumn('apiSessionId', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('mfa_failures_by_mfa').on('mfa_failures').columns(['mfaId', 'at']).execute();
}
