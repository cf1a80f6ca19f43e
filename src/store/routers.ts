/** Edge and transit routers: existence and the cross-kind name check (queries only). */
import type { TypedExecutor } from './executor.js';

export type RouterTable = 'edge_routers' | 'transit_routers';

export async function edgeRouterExists(db: TypedExecutor, id: string): Promise<boolean> {
  return (await db.selectFrom('edge_routers').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

/** Whether a router of the kind stored in `table` already has this name. */
export async function routerNameTaken(db: TypedExecutor, table: RouterTable, name: string): Promise<boolean> {
  return (await db.selectFrom(table).select('id').where('name', '=', name).executeTakeFirst()) !== undefined;
}
