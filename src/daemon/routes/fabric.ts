/**
 * The read-only subset of the reference's fabric management API (`/fabric/v1`) that the reference's console reads
 * for its dashboard and network map: routers, links and circuits, list and detail, admin only with the same session
 * header and envelope as the edge APIs (docs/decisions.md, "The fabric API: a read-only subset"). Routers are the
 * edge routers with their online state; edgectl has no data plane, so there are no links and no circuits: their
 * lists are empty and a detail is NOT_FOUND.
 */
import { notFound } from '../../model/errors.js';
import { emptyFabricPage, getFabricRouter, listFabricRouters } from '../../model/services/router/fabric.js';
import { ok, listOf } from '../http/envelope.js';
import { route, type RouteDef } from '../http/route.js';
import { listOptions } from './crud.js';

const common = { apis: ['fabric'] as const, access: 'admin' as const, success: 200 };

/** A collection the fabric has only with a data plane: always empty here. */
function emptyCollection(name: 'links' | 'circuits', tag: string, label: string): RouteDef[] {
  const plural = tag + 's';
  return [
    route({
      ...common,
      tag,
      method: 'GET',
      path: `/${name}`,
      operationId: `list${plural}`,
      envelope: `list${plural}Envelope`,
      async handler(rc) {
        return listOf([], { pagination: emptyFabricPage(listOptions(rc)), filterableFields: [] });
      },
    }),
    route({
      ...common,
      tag,
      method: 'GET',
      path: `/${name}/{id}`,
      operationId: `detail${tag}`,
      envelope: `detail${tag}Envelope`,
      async handler(rc) {
        throw notFound(rc.params.id, label);
      },
    }),
  ];
}

export const fabricRoutes: RouteDef[] = [
  route({
    ...common,
    tag: 'Router',
    method: 'GET',
    path: '/routers',
    operationId: 'listRouters',
    envelope: 'listRoutersEnvelope',
    async handler(rc) {
      const page = await listFabricRouters(rc.ctx, listOptions(rc));
      return listOf(page.records, page);
    },
  }),
  route({
    ...common,
    tag: 'Router',
    method: 'GET',
    path: '/routers/{id}',
    operationId: 'detailRouter',
    envelope: 'detailRouterEnvelope',
    async handler(rc) {
      return ok(await getFabricRouter(rc.ctx, rc.params.id));
    },
  }),
  ...emptyCollection('links', 'Link', 'link'),
  ...emptyCollection('circuits', 'Circuit', 'circuit'),
];
