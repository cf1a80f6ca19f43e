/**
 * The edge routers of a session (docs/reference-notes.md §2.3): routers that an edge router policy gives
 * the identity *and* a service edge router policy gives the service, connected ones first, at most 25
 * (the reference's `ListForIdentityAndService`). The service's routers are cached already in that order,
 * so a session walks them until it has 25 of the identity's; nothing is sorted per request.
 */
import type { Markers } from '../../../store/access-markers.js';
import type { Ctx } from '../../ctx.js';
import type { RouterInfo } from '../../access/catalog.js';
import { accessEngine, type IdentityAccess, type ServiceRouters } from '../../access/engine.js';

export const MAX_SESSION_ROUTERS = 25;

/** The identity's router set and the service's routers, as the access engine keeps them. */
async function routerSets(
  ctx: Ctx,
  m: Markers,
  identity: IdentityAccess,
  serviceId: string,
): Promise<[Set<string>, ServiceRouters]> {
  const engine = accessEngine(ctx);
  return Promise.all([engine.routersOfIdentity(ctx, m, identity), engine.routersOfService(ctx, m, serviceId)]);
}

/** The service's routers that are also the identity's, in session order, at most `max`. */
function common(mine: Set<string>, serving: ServiceRouters, max: number): RouterInfo[] {
  const out: RouterInfo[] = [];
  for (const r of serving.ordered) {
    if (out.length >= max) break;
    if (mine.has(r.id)) out.push(r);
  }
  return out;
}

/** The identity's and the service's routers, and those common to both in session order (uncapped). */
export async function commonRouters(
  ctx: Ctx,
  m: Markers,
  identity: IdentityAccess,
  serviceId: string,
  max = Infinity,
): Promise<{ mine: Set<string>; serving: Set<string>; common: RouterInfo[] }> {
  const [mine, serving] = await routerSets(ctx, m, identity, serviceId);
  return { mine, serving: serving.ids, common: common(mine, serving, max) };
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
  return sessionRecords(...(await routerSets(ctx, m, identity, serviceId)));
}

/** `sessionEdgeRouters` when the engine's router entries are current and computed; undefined otherwise. */
export function sessionEdgeRoutersNow(
  ctx: Ctx,
  m: Markers,
  identity: IdentityAccess,
  serviceId: string,
): Record<string, unknown>[] | undefined {
  const sets = accessEngine(ctx).routerSetsNow(m, identity, serviceId);
  return sets && sessionRecords(...sets);
}

function sessionRecords(mine: Set<string>, serving: ServiceRouters): Record<string, unknown>[] {
  let byService = sessionRouterLists.get(mine);
  if (!byService) sessionRouterLists.set(mine, (byService = new WeakMap()));
  let records = byService.get(serving);
  if (!records)
    byService.set(serving, (records = common(mine, serving, MAX_SESSION_ROUTERS).map((r) => r.sessionRecord)));
  return records;
}
