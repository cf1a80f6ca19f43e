/**
 * The data-integrity scan's view of the schema objects, whichever engine the store runs on: SQLite's
 * comparison (schema-objects.ts, against the migrations run in an empty in-memory database) or PostgreSQL's
 * (pg/schema-drift.ts, against the migrations run in a schema of their own that is rolled back). The scan and
 * its fix call only this module.
 */
import type { Kysely, Migration } from 'kysely';
import { storeKind } from './dialect.js';
import type { Executor } from './executor.js';
import {
  postgresSchemaDifferences,
  repairablePostgresDifference,
  repairPostgresSchemaObject,
} from './pg/schema-drift.js';
import {
  describeSchemaDifference,
  repairableSchemaDifference,
  repairOrder,
  repairSchemaObject,
  storeSchemaDifferences,
  type SchemaDifference,
} from './schema-objects.js';

export { describeSchemaDifference, repairOrder, type SchemaDifference };

/** Every difference of the store's objects from what its recorded migrations create. */
export function schemaDrift(
  db: Executor,
  migrations: Readonly<Record<string, Migration>>,
  between?: () => Promise<void>,
): Promise<SchemaDifference[]> {
  return storeKind(db) === 'postgres'
    ? postgresSchemaDifferences(db as Kysely<unknown>, migrations, between)
    : storeSchemaDifferences(db, migrations, between);
}

/**
 * Whether the fix repairs the difference, and if not, what to do instead: a missing or altered table is never
 * rebuilt (its rows cannot be made up); on PostgreSQL a foreign table is not dropped either, since the database
 * may hold other programs' tables beside the store's.
 */
export function schemaRepair(
  db: Executor,
  d: SchemaDifference,
): { repairable: true } | { repairable: false; why: string } {
  if (storeKind(db) === 'postgres') {
    if (repairablePostgresDifference(d)) return { repairable: true };
    return d.kind === 'foreign'
      ? {
          repairable: false,
          why: 'edgectl does not drop a table it did not create: drop it or move it to another schema',
        }
      : { repairable: false, why: 'edgectl does not rebuild a table: restore a snapshot' };
  }
  return repairableSchemaDifference(d)
    ? { repairable: true }
    : { repairable: false, why: 'edgectl does not rebuild a table: restore a snapshot' };
}

/** Makes the object of `d` what the migrations create (see {@link schemaRepair}). */
export function repairSchemaDrift(db: Executor, d: SchemaDifference): Promise<void> {
  return storeKind(db) === 'postgres' ? repairPostgresSchemaObject(db, d) : repairSchemaObject(db, d);
}
