/**
 * The events listing (`GET /edge/management/v1/events`, `edgectl events list`): the filter language, sort and
 * paging of every list, over the outbox's listing columns; newest first unless the request sorts.
 */
import { compileListQuery, type ListOptions } from '../list-query.js';
import type { FieldTable } from '../filter/fields.js';
import { pageEvents } from '../../store/events.js';
import { filterDialectOf } from '../../store/filter-sql.js';
import type { Ctx } from '../ctx.js';
import { JsonText } from '../json-text.js';

/** What an events filter may name. */
export const EVENT_FIELDS: FieldTable = {
  id: { kind: 'scalar', type: 'string', column: 'id' },
  namespace: { kind: 'scalar', type: 'string', column: 'namespace' },
  eventType: { kind: 'scalar', type: 'string', column: 'eventType' },
  timestamp: { kind: 'scalar', type: 'datetime', column: 'timestamp' },
  actorId: { kind: 'scalar', type: 'string', column: 'actorId' },
  entityType: { kind: 'scalar', type: 'string', column: 'entityType' },
  entityId: { kind: 'scalar', type: 'string', column: 'entityId' },
};

export interface EventPage {
  /** The events as stored (JSON text each, sent as they are). */
  events: JsonText;
  pagination: { limit: number; offset: number; totalCount: number };
  filterableFields: string[];
}

export async function listEvents(ctx: Ctx, opts: ListOptions): Promise<EventPage> {
  const q = compileListQuery({ ...opts, sort: opts.sort ?? 'timestamp desc' }, EVENT_FIELDS, filterDialectOf(ctx.db));
  const { bodies, total } = await pageEvents(ctx.db, q);
  return {
    events: new JsonText(`[${bodies.join(',')}]`),
    pagination: { limit: q.limit, offset: q.offset, totalCount: total },
    filterableFields: Object.keys(EVENT_FIELDS),
  };
}
