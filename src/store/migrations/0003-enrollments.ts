/**
 * Outstanding enrollments (docs/reference-notes.md §7.2).
 *
 * `identityId` is nullable because router enrollments (erott/trott, migration 0004) hang off a router instead of
 * an identity; for identity enrollments the model always sets it. One enrollment per method per identity is
 * enforced by the model (409 ENROLLMENT_EXISTS) and backed here by a unique constraint. `caId` names a CA; its
 * table comes with migration 0004, so there is no foreign key here and the model checks it.
 */
import type { Kysely } from 'kysely';
import { entityTable } from './helpers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await entityTable(db, 'enrollments')
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull().unique())
    .addColumn('identityId', 'text', (c) => c.references('identities.id').onDelete('cascade'))
    .addColumn('expiresAt', 'text', (c) => c.notNull())
    .addColumn('caId', 'text')
    .addColumn('username', 'text')
    .addColumn('jwt', 'text', (c) => c.notNull())
    .addUniqueConstraint('enrollments_one_per_method', ['identityId', 'method'])
    .execute();
  await db.schema.createIndex('enrollments_by_expiry').on('enrollments').column('expiresAt').execute();
}
