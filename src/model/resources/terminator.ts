/**
 * Terminators: where a service is hosted (a router, a binding and an address). They are created by the
 * routers that host services, which do not connect to this controller yet, so they are only listed here
 * (`/terminators`, `/services/{id}/terminators`); the definition gives those lists their filterable fields
 * and rendering (api-schemas.md "Terminator").
 */
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../ctx.js';
import { attachRefs } from '../refs.js';
import type { ResourceDef, Row } from '../resource.js';

async function decorate(ctx: Ctx, rows: Row[]): Promise<void> {
  await attachRefs(ctx, rows, { idField: 'serviceId', as: 'service', table: 'services', collection: 'services' });
  // A terminator's router is an edge router or a transit router.
  await attachRefs(ctx, rows, { idField: 'routerId', as: 'router', table: 'transit_routers', collection: 'routers' });
  await attachRefs(ctx, rows.filter((r) => !(r.router as { name?: string } | undefined)?.name), { idField: 'routerId', as: 'router', table: 'edge_routers', collection: 'edge-routers' });
  for (const r of rows) r.dynamicCost = r.cost;
}

export const terminators: ResourceDef = {
  name: 'terminators',
  label: 'terminator',
  table: 'terminators',
  schemaName: 'terminator',
  props: {
    serviceId: { schema: Type.String(), storage: 'text' },
    routerId: { schema: Type.String(), storage: 'text' },
    binding: { schema: Type.String(), storage: 'text', filter: true },
    address: { schema: Type.String(), storage: 'text', filter: true },
    identity: { schema: Type.String(), storage: 'text', filter: true },
    cost: { schema: Type.Integer(), storage: 'int', filter: true },
    precedence: { schema: Type.String(), storage: 'text', filter: true },
  },
  extraFields: {
    service: { kind: 'scalar', type: 'string', column: 'serviceId' },
    router: { kind: 'scalar', type: 'string', column: 'routerId' },
  },
  hooks: { decorate },
  // Served by routes/terminators.ts: list and detail only.
  ops: {},
  envelopes: { list: 'listTerminatorsEnvelope', detail: 'detailTerminatorEnvelope' },
};

/** The Client API's terminator record (`terminatorClientDetail`): no binding, address or costs. */
export function clientTerminator(r: Record<string, unknown>): Record<string, unknown> {
  const { id, createdAt, updatedAt, tags, _links, serviceId, service, routerId, identity } = r;
  return { id, createdAt, updatedAt, tags, _links, serviceId, service, routerId, identity };
}
