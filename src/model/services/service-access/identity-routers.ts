/**
 * `GET /current-identity/edge-routers` (docs/reference-notes.md §2.3): the verified edge routers an edge
 * router policy gives the caller; an admin sees every verified router.
 */
import { allOf, idIn, verifiedRouters } from '../../../store/scopes.js';
import { accessEngine } from '../../access/engine.js';
import type { Ctx } from '../../ctx.js';
import { listEntities, type Page } from '../../crud.js';
import type { ListOptions } from '../../list-query.js';
import { edgeRouters } from '../../resources/edge-router.js';

export async function listRoutersOfIdentity(
  ctx: Ctx,
  identity: { id: string; isAdmin: boolean },
  opts: ListOptions,
): Promise<Page> {
  let scope = verifiedRouters;
  if (!identity.isAdmin) {
    const engine = accessEngine(ctx);
    const m = await engine.markers(ctx);
    const mine = await engine.routersOfIdentity(ctx, m, await engine.identity(ctx, m, identity.id));
    scope = allOf(scope, idIn([...mine]));
  }
  return listEntities(ctx, edgeRouters, opts, scope);
}
