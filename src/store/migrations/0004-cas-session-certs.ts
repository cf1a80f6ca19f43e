/**
 * Third-party certificate authorities, API-session certificates, the pending half of an identity certificate
 * extension, and router enrollments (docs/reference-notes.md §7.5, §4.7, §7.6).
 *
 * - `cas`: one row per registered CA; `fingerprint` unique (a CA certificate can be registered once);
 *   `externalIdClaim` is JSON or NULL; `identityRoles` lives in the usual set table.
 * - `api_session_certs`: short-lived client certificates bound to an API session. The foreign key cascades, so
 *   they vanish with their API session in the same statement (logout, expiry sweep, identity delete).
 * - `authenticators.unverifiedCertPem/unverifiedFingerprint`: the certificate issued by `extend`, waiting for
 *   `extend-verify`. `caId` (a column since 0001) cannot gain a foreign key in SQLite without a table rebuild;
 *   the CA model deletes dependent authenticators and enrollments itself, and an index keeps that cheap.
 * - `enrollments.edgeRouterId/transitRouterId`: router enrollments (erott, trott), cascading with their router.
 */
import type { Kysely } from 'kysely';
import { entityTable, setTable } from './helpers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await entityTable(db, 'cas')
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('certPem', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull().unique())
    .addColumn('isVerified', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('verificationToken', 'text', (c) => c.notNull())
    .addColumn('isAuthEnabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('isAutoCaEnrollmentEnabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('isOttCaEnrollmentEnabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('identityNameFormat', 'text', (c) => c.notNull().defaultTo('[caName]-[commonName]'))
    .addColumn('externalIdClaim', 'text')
    .execute();
  await setTable(db, 'cas', 'identityRoles');

  await entityTable(db, 'api_session_certs')
    .addColumn('apiSessionId', 'text', (c) => c.notNull().references('api_sessions.id').onDelete('cascade'))
    .addColumn('identityId', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull().unique())
    .addColumn('certificate', 'text', (c) => c.notNull())
    .addColumn('validFrom', 'text', (c) => c.notNull())
    .addColumn('validTo', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('api_session_certs_by_session')
    .on('api_session_certs')
    .columns(['apiSessionId', 'validTo'])
    .execute();

  await db.schema.alterTable('authenticators').addColumn('unverifiedCertPem', 'text').execute();
  await db.schema.alterTable('authenticators').addColumn('unverifiedFingerprint', 'text').execute();
  await db.schema.createIndex('authenticators_by_ca').on('authenticators').column('caId').execute();
  await db.schema.createIndex('enrollments_by_ca').on('enrollments').column('caId').execute();

  // Router enrollments (erott, trott) hang off their router and go with it.
  await db.schema
    .alterTable('enrollments')
    .addColumn('edgeRouterId', 'text', (c) => c.references('edge_routers.id').onDelete('cascade'))
    .execute();
  await db.schema
    .alterTable('enrollments')
    .addColumn('transitRouterId', 'text', (c) => c.references('transit_routers.id').onDelete('cascade'))
    .execute();
  await db.schema.createIndex('enrollments_by_edge_router').on('enrollments').column('edgeRouterId').execute();
  await db.schema.createIndex('enrollments_by_transit_router').on('enrollments').column('transitRouterId').execute();
}
