/**
 * The records a tunneler-enabled edge router brings with it (parity: docs/reference-notes.md §2.7): an
 * identity with the router's id and name, of type Router, and the system edge router policy
 * `edge-router-<id>-system` (id = router id, AnyOf, `@<id>` on both sides) that lets that identity use its
 * own router. Enabling creates them, disabling or deleting the router removes them, a rename renames the
 * identity. They are written in the router's transaction.
 */
import {
  deleteRouterIdentity,
  renameRouterIdentity,
  routerIdentityExists,
  systemEdgeRouterPolicyExists,
} from '../../../store/router-identities.js';
import { iso, type Ctx } from '../../ctx.js';
import { createEntity, deleteEntity } from '../../crud.js';
import { removeIdReferences } from '../../policy/matches.js';
import type { Input, Row } from '../../resource.js';
import { edgeRouterPolicies } from '../../resources/edge-router-policy.js';
import { identities } from '../../resources/identity.js';
import { textOr } from '../../row.js';

export const systemPolicyName = (routerId: string) => `edge-router-${routerId}-system`;

/** The router's identity (same id and name, type Router). Also used by the integrity fix (model/integrity). */
export async function createRouterIdentity(ctx: Ctx, id: string, name: string): Promise<void> {
  await createEntity(ctx, identities, { name, type: 'Router', isAdmin: false }, { id });
}

/** The router's system edge router policy. Also used by the integrity fix (model/integrity). */
export async function createSystemPolicy(ctx: Ctx, id: string): Promise<void> {
  await createEntity(
    ctx,
    edgeRouterPolicies,
    { name: systemPolicyName(id), semantic: 'AnyOf', identityRoles: [`@${id}`], edgeRouterRoles: [`@${id}`] },
    { id, isSystem: true },
  );
}

async function createTunnelerRecords(ctx: Ctx, id: string, name: string): Promise<void> {
  await createRouterIdentity(ctx, id, name);
  await createSystemPolicy(ctx, id);
}

/**
 * Removes the system policy and the router identity. The identity is removed directly: the identity
 * resource refuses deleting a Router identity while its router exists, which is the case here.
 */
export async function removeTunnelerRecords(ctx: Ctx, id: string): Promise<void> {
  if (await systemEdgeRouterPolicyExists(ctx.db, id))
    await deleteEntity(ctx, edgeRouterPolicies, id, { allowSystem: true });
  if (await routerIdentityExists(ctx.db, id)) {
    await removeIdReferences(ctx, 'identity', id);
    await deleteRouterIdentity(ctx.db, id);
  }
}

/** Brings the system records in line with the router after a create, update or patch. */
export async function syncTunnelerRecords(ctx: Ctx, id: string, input: Input, existing?: Row): Promise<void> {
  const was = Boolean(existing?.isTunnelerEnabled);
  const now = input.isTunnelerEnabled === undefined ? was : Boolean(input.isTunnelerEnabled);
  const name = textOr(input.name ?? existing?.name, '');
  if (!was && now) await createTunnelerRecords(ctx, id, name);
  else if (was && !now) await removeTunnelerRecords(ctx, id);
  else if (now && name !== existing?.name) {
    await renameRouterIdentity(ctx.db, id, name, iso(ctx.now()));
  }
}
