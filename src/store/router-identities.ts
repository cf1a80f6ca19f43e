/**
 * The records a tunneler-enabled edge router brings with it (docs/decisions.md, "Tunneler router
 * identity"): an identity of type Router and a system edge router policy, both with the router's id.
 */
import type { TypedExecutor } from './executor.js';
import { boolToDb } from './values.js';

/** Whether the router's system edge router policy (same id, `isSystem`) exists. */
export async function systemEdgeRouterPolicyExists(db: TypedExecutor, routerId: string): Promise<boolean> {
  const row = await db
    .selectFrom('edge_router_policies')
    .select('id')
    .where('id', '=', routerId)
    .where('isSystem', '=', boolToDb(true))
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether the router's identity (same id, type Router) exists. */
export async function routerIdentityExists(db: TypedExecutor, routerId: string): Promise<boolean> {
  const row = await db
    .selectFrom('identities')
    .select('id')
    .where('id', '=', routerId)
    .where('typeId', '=', 'Router')
    .executeTakeFirst();
  return row !== undefined;
}

/** Deletes the identity row itself, past the identity resource's own delete rules (its dependants cascade). */
export async function deleteRouterIdentity(db: TypedExecutor, routerId: string): Promise<void> {
  await db.deleteFrom('identities').where('id', '=', routerId).execute();
}

/** Gives the router's identity the router's new name. */
export async function renameRouterIdentity(
  db: TypedExecutor,
  routerId: string,
  name: string,
  updatedAt: string,
): Promise<void> {
  await db.updateTable('identities').set({ name, updatedAt }).where('id', '=', routerId).execute();
}
