/** What policy writes and renders ask of the entities their `@id` roles name (queries only). */
import type { TypedExecutor } from './executor.js';

/** The tables of the entity kinds a policy role can select. */
export type PolicyTargetTable = 'identities' | 'services' | 'edge_routers' | 'posture_checks';

/** Those of `ids` that exist in `table`. */
export async function existingIdsIn(
  db: TypedExecutor,
  table: PolicyTargetTable,
  ids: readonly string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom(table).select('id').where('id', 'in', ids).execute();
  return new Set(rows.map((r) => r.id));
}

/** The names of those of `ids` that exist in `table`, by id. */
export async function namesByIdIn(
  db: TypedExecutor,
  table: PolicyTargetTable,
  ids: readonly string[],
): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom(table).select(['id', 'name']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}
