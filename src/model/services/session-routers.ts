/**
 * The edge routers of a session (docs/reference-notes.md §2.3): routers that an edge router policy gives
 * the identity *and* a service edge router policy gives the service, connected ones first, at most 25
 * (the reference's `ListForIdentityAndService`). The service's routers are cached already in that order,
 * so a session walks them until it has 25 of the identity's; nothing is sorted per request.
 */
import type { Markers } from '../../store/access-markers.js';
import type { Ctx } from '../ctx.js';
import type { RouterInfo } from '../access/catalog.js';
import { accessEngine, type IdentityAccess, type ServiceRouters } from '../access/engine.js';

export const MAX_SESSION_ROUTERS = 25;

/** The identity's and the service's routers, and those common to both in session order (uncapped). */
export async function commonRouters(
  ctx: Ctx,
  m: Markers,
  identity: IdentityAccess,
  serviceId: string,
  max = Infinity,
): Promise<{ mine: Set<string>; serving: Set<string>; common: RouterInfo[] }> {
  const engine = accessEngine(ctx);
  const [mine, serving] = await Promise.all([
    engine.routersOfIdentity(ctx, m, identity),
    engine.routersOfService(ctx, m, serviceId),
  ]);
  const common: RouterInfo[] = [];
  for (const r of serving.ordered) {
    if (common.length >= max) break;
    if (mine.has(r.id)) common.push(r);
  }
  return { mine, serving: serving.ids, common };
}

/**
 * The session records of the routers common to a router set and a service's routers, kept per pair of the
 * access engine's entries: both are the same objects until a write reaches them, so a session create for the
 * same identity routers and service walks the service's routers once, and repeats get the same array.
 */
const sessionRouterLists = new WeakMap<Set<string>, WeakMap<ServiceRouters, Record<string, unknown>[]>>();

/** The `edgeRouters` of a session: at most 25 `sessionEdgeRouter` records (the same array while nothing changed). */
export async function sessionEdgeRouters(
  ctx: Ctx,
  m: Markers,
  identity: IdentityAccess,
  serviceId: string,
): Promise<Record<string, unknown>[]> {
  const engine = accessEngine(ctx);
  const [mine, serving] = await Promise.all([
    engine.routersOfIdentity(ctx, m, identity),
    engine.routersOfService(ctx, m, serviceId),
  ]);
  let byService = sessionRouterLists.get(mine);
  if (!byService) sessionRouterLists.set(mine, (byService = new WeakMap()));
  let records = byService.get(serving);
  if (!records) {
    records = [];
    for (const r of serving.ordered) {
      if (records.length >= MAX_SESSION_ROUTERS) break;
      if (mine.has(r.id)) records.push(r.sessionRecord);
    }
    byService.set(serving, records);
  }
  return records;
}
