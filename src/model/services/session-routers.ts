/**
 * The edge routers of a session (controller-behaviours.md §2.3): routers that an edge router policy gives
 * the identity *and* a service edge router policy gives the service, connected ones first, at most 25
 * (the reference's `ListForIdentityAndService`). Both sets and the router records come from the access
 * engine's caches; only the intersection is computed per request.
 */
import type { Markers } from '../../store/access-markers.js';
import type { Ctx } from '../ctx.js';
import type { RouterInfo } from '../access/catalog.js';
import { accessEngine, type IdentityAccess } from '../access/engine.js';

export const MAX_SESSION_ROUTERS = 25;

/** Every router common to the identity and the service (unordered, uncapped). */
export async function commonRouters(ctx: Ctx, m: Markers, identity: IdentityAccess, serviceId: string): Promise<{ mine: Set<string>; serving: Set<string>; common: RouterInfo[] }> {
  const engine = accessEngine(ctx);
  const [mine, serving, catalog] = await Promise.all([
    engine.routersOfIdentity(ctx, m, identity),
    engine.routersOfService(ctx, m, serviceId),
    engine.routerCatalog(ctx, m),
  ]);
  const [small, large] = mine.size <= serving.size ? [mine, serving] : [serving, mine];
  const common: RouterInfo[] = [];
  for (const id of small) {
    if (!large.has(id)) continue;
    const r = catalog.routers.get(id);
    if (r) common.push(r);
  }
  return { mine, serving, common };
}

/** Connected first, then by id (the store's default order) so the answer is stable. */
export const byConnectedThenId = (a: RouterInfo, b: RouterInfo): number =>
  Number(b.isOnline) - Number(a.isOnline) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** The `edgeRouters` of a session: at most 25 `sessionEdgeRouter` records. */
export async function sessionEdgeRouters(ctx: Ctx, m: Markers, identity: IdentityAccess, serviceId: string): Promise<Record<string, unknown>[]> {
  const { common } = await commonRouters(ctx, m, identity, serviceId);
  return common.sort(byConnectedThenId).slice(0, MAX_SESSION_ROUTERS).map((r) => ({ ...r.sessionRecord }));
}
