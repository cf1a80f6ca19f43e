/**
 * `GET /edge/management/v1/events`: the recorded events (docs/events.md), admins only, with the filter language,
 * sort and paging of every list; `GET /edge/management/v1/events/stream`: the same events live, as server-sent
 * events (daemon/event-stream.ts). edgectl's own operations: the reference has no such routes.
 */
import { listEvents } from '../../model/events/list.js';
import { RAW } from '../http/envelope.js';
import { queryArray, queryString, route, type RouteDef } from '../http/route.js';
import { streamRequest } from '../event-stream.js';
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
  route({
    apis: ['management'],
    method: 'GET',
    path: '/events/stream',
    operationId: 'streamEvents',
    tag: 'Events',
    access: 'admin',
    success: 200,
    produces: ['text/event-stream'],
    summary:
      'Follows the recorded events live as server-sent events (`type` filters; `Last-Event-ID` resumes after an event)',
    async handler(rc) {
      const header = rc.req.headers['last-event-id'];
      const ask = streamRequest(
        (Array.isArray(header) ? header[0] : header) ?? queryString(rc.query, 'lastEventId'),
        queryArray(rc.query, 'type'),
      );
      await rc.deps.eventStreams.serve(rc.ctx, rc.req, rc.reply, ask);
      return RAW;
    },
  }),
];
