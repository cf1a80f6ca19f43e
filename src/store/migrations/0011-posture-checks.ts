/**
 * Posture checks get what their types need (docs/reference-notes.md §9.1): a `version` that grows on every
 * update, and `details`, the fields of the check's own type as one JSON object. The type modules of
 * src/model/posture/types own those fields, so a new type adds no column.
 */
import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('posture_checks')
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema
    .alterTable('posture_checks')
    .addColumn('details', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute();
}
