/**
 * `GET /edge/management/v1/events`: the recorded events (docs/design.md, "Events"), admins only, with the
 * filter language, sort and paging of every list. edgectl's own operation: the reference has no such route.
 */
import { listEvents } from '../../model/events/list.js';
import { route, type RouteDef } from '../http/route.js';
import { listOptions } from './crud.js';

export const eventRoutes: RouteDef[] = [
  route({
    apis: ['management'],
    method: 'GET',
    path: '/events',
    operationId: 'listEvents',
    tag: 'Events',
    access: 'admin',
    success: 200,
    summary: 'Lists the recorded events: entity changes, authentications, API sessions',
    async handler(rc) {
      const page = await listEvents(rc.ctx, listOptions(rc));
      return { data: page.events, meta: { pagination: page.pagination, filterableFields: page.filterableFields } };
    },
  }),
];
