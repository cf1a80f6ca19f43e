/** Configs and config types as config and service writes check them (queries only; JSON parsed via values.ts). */
import type { TypedExecutor } from './executor.js';
import { jsonFromDb } from './values.js';

/** A config type by id, else by name, with its parsed JSON schema; undefined when neither matches. */
export async function configTypeByIdOrName(
  db: TypedExecutor,
  idOrName: string,
): Promise<{ id: string; schema: Record<string, unknown> } | undefined> {
  const row =
    (await db.selectFrom('config_types').select(['id', 'schema']).where('id', '=', idOrName).executeTakeFirst()) ??
    (await db.selectFrom('config_types').select(['id', 'schema']).where('name', '=', idOrName).executeTakeFirst());
  return row && { id: row.id, schema: jsonFromDb<Record<string, unknown>>(row.schema) };
}

/** Those of the configs that exist, with their config type's id and name. */
export function configsWithTypes(
  db: TypedExecutor,
  ids: readonly string[],
): Promise<{ id: string; typeId: string; typeName: string }[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('configs as c')
    .innerJoin('config_types as ct', 'ct.id', 'c.configTypeId')
    .select(['c.id as id', 'c.configTypeId as typeId', 'ct.name as typeName'])
    .where('c.id', 'in', ids)
    .execute();
}
