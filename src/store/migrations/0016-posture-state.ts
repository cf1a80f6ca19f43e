/**
 * Clients' posture in the store (docs/design.md, "Several controllers"), so every replica judges a client by
 * what it reported to any of them, and a restart keeps it. Each table goes with its owner by cascade.
 *
 * - `posture_identities`: what an identity's clients reported, one JSON object of records by slot
 *   (src/model/posture/state.ts; at most 64 KiB by the model's count, kept.ts), and when the reported posture
 *   last changed what the identity may use (`changedAt`, for `service-updates`).
 * - `posture_api_sessions`: per API session, the MFA pass as posture sees it and the wake/unlock events. The
 *   MFA pass is kept here rather than read from `api_sessions.mfaPassedAt` (the session's factor, migration
 *   0008): removing the identity's MFA clears the posture pass while the session's factor stays complete, and
 *   posture reads then depend on this small table only, not on `api_sessions`, which every login writes.
 * - `posture_failed_requests`: the identity's last failed service requests (at most 100, the model trims),
 *   numbered per identity; a table of its own so that recording one does not reach the cached posture.
 *
 * On PostgreSQL each new table gets its change counter and trigger (migration 0015): posture written on one
 * replica reaches the others' caches before their next request.
 */
import type { Kysely } from 'kysely';
import { onPostgres } from './helpers.js';
import { traceTables } from './0015-change-log.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

const TABLES = ['posture_identities', 'posture_api_sessions', 'posture_failed_requests'];

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('posture_identities')
    .addColumn('identityId', 'text', (c) => c.primaryKey().references('identities.id').onDelete('cascade'))
    .addColumn('records', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('changedAt', 'text')
    .execute();
  await db.schema
    .createTable('posture_api_sessions')
    .addColumn('apiSessionId', 'text', (c) => c.primaryKey().references('api_sessions.id').onDelete('cascade'))
    .addColumn('identityId', 'text', (c) => c.notNull().references('identities.id').onDelete('cascade'))
    .addColumn('mfaPassedAt', 'text')
    .addColumn('wokenAt', 'text')
    .addColumn('unlockedAt', 'text')
    .addColumn('sdkNew', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // MFA removal and the posture-data listing go by identity; so do identity deletes' cascades.
  await db.schema
    .createIndex('posture_api_sessions_by_identity')
    .on('posture_api_sessions')
    .column('identityId')
    .execute();
  await db.schema
    .createTable('posture_failed_requests')
    .addColumn('identityId', 'text', (c) => c.notNull().references('identities.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('request', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('posture_failed_requests_pk', ['identityId', 'seq'])
    .execute();

  if (!onPostgres(db)) return;
  // Tables created after 0015 are traced like every table it found.
  await traceTables(db, TABLES);
}
