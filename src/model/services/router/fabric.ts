/**
 * Routers as the reference's fabric management API (`/fabric/v1/routers`) shows them, for clients that count and
 * map routers from it (the reference's console). edgectl keeps its edge routers and no fabric of its own, so the
 * fabric view is derived from the edge routers: the same ids, names, cost, traversal and fingerprint, with
 * `connected` the router's online state (docs/decisions.md, "The fabric API: a read-only subset").
 */
import type { Ctx } from '../../ctx.js';
import { getEntity, listEntities, type Page } from '../../crud.js';
import type { ListOptions } from '../../list-query.js';
import { DomainError, notFound } from '../../errors.js';
import { clampLimit, clampOffset, parsePagingParams } from '../../paging.js';
import type { Row } from '../../resource.js';
import { edgeRouters } from '../../resources/edge-router.js';
import { selfHref } from '../../render.js';
import { textOf } from '../../row.js';

/** The fabric `routerDetail` of an edge router row (decorated: `isOnline` set). */
function fabricRouter(row: Row): Record<string, unknown> {
  const id = textOf(row, 'id');
  return {
    id,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    tags: row.tags ?? {},
    _links: {
      self: { href: selfHref('routers', id) },
      terminators: { href: `./routers/${id}/terminators` },
    },
    name: row.name,
    // Required (not nullable) in the fabric's routerDetail: empty until the router enrolls.
    fingerprint: row.fingerprint ?? '',
    connected: Boolean(row.isOnline),
    cost: row.cost ?? 0,
    noTraversal: Boolean(row.noTraversal),
    // edgectl has no router disabling: no router is disabled.
    disabled: false,
  };
}

/** One page of routers, filtered, sorted and paged by the edge routers' rules (their fields filter here too). */
export async function listFabricRouters(
  ctx: Ctx,
  opts: ListOptions,
): Promise<Omit<Page, 'rows'> & { records: Record<string, unknown>[] }> {
  const page = await listEntities(ctx, edgeRouters, opts);
  return { records: page.rows.map(fabricRouter), pagination: page.pagination, filterableFields: page.filterableFields };
}

/** One router by id; NOT_FOUND (of a router) when no edge router has it. */
export async function getFabricRouter(ctx: Ctx, id: string): Promise<Record<string, unknown>> {
  try {
    return fabricRouter(await getEntity(ctx, edgeRouters, id));
  } catch (e) {
    if (e instanceof DomainError && e.code === 'NOT_FOUND') throw notFound(id, 'router');
    throw e;
  }
}

/**
 * The pagination of a list that is empty by nature: links and circuits, which only a data plane (routers
 * connected to the controller, carrying traffic) has. The limit and offset are read and clamped as for any list.
 */
export function emptyFabricPage(opts: ListOptions): Page['pagination'] {
  const paging = parsePagingParams(opts.limit, opts.offset);
  return { limit: clampLimit(paging.limit), offset: clampOffset(paging.offset), totalCount: 0 };
}
