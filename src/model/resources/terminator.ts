/**
 * Terminators: where a service is hosted (a router, a binding and an address; docs/reference-notes.md §12 "Terminator").
 * Hosting routers create them through the router protocol, which this controller does not speak yet, so
 * today they come only from the Management API's CRUD; the listings (`/terminators`,
 * `/services/{id}/terminators` on both APIs) filter and page like any other. Requests name the service and
 * router by id (`service`, `router`); records show them as refs with `serviceId`/`routerId`.
 */
import { Type } from '../schema-type.js';
import { serviceExists } from '../../store/service-configs.js';
import { routerExists } from '../../store/routers.js';
import type { Ctx } from '../ctx.js';
import { fieldError } from '../errors.js';
import { attachRefs } from '../refs.js';
import type { Input, ResourceDef, Row } from '../resource.js';
import { CostSchema, PrecedenceSchema } from '../schemas.js';

/** `service` and `router` are ids on the wire and stored as `serviceId`/`routerId`; a router is an edge or a transit router. */
async function prepare(ctx: Ctx, input: Input): Promise<Input> {
  const out = { ...input };
  if (out.service !== undefined) {
    if (typeof out.service !== 'string' || !(await serviceExists(ctx.db, out.service)))
      throw fieldError('service', 'no service found with the given id', out.service);
    out.serviceId = out.service;
    delete out.service;
  }
  if (out.router !== undefined) {
    const id = out.router as string;
    if (!(await routerExists(ctx.db, id))) throw fieldError('router', 'no router found with the given id', id);
    out.routerId = id;
    delete out.router;
  }
  // Accepted for the reference's shape; the secret is only meaningful to the router protocol.
  delete out.identitySecret;
  return out;
}

async function decorate(ctx: Ctx, rows: Row[]): Promise<void> {
  await attachRefs(ctx, rows, { idField: 'serviceId', as: 'service', table: 'services', collection: 'services' });
  await attachRefs(ctx, rows, { idField: 'routerId', as: 'router', table: 'transit_routers', collection: 'routers' });
  await attachRefs(
    ctx,
    rows.filter((r) => !(r.router as { name?: string } | undefined)?.name),
    { idField: 'routerId', as: 'router', table: 'edge_routers', collection: 'edge-routers' },
  );
  for (const r of rows) r.dynamicCost = r.cost;
}

const IdSchema = Type.String({ minLength: 1 });

export const terminators: ResourceDef = {
  name: 'terminators',
  label: 'terminator',
  table: 'terminators',
  schemaName: 'terminator',
  props: {
    service: { schema: IdSchema, storage: 'text', virtual: true, create: 'required', update: 'required', patch: true },
    router: { schema: IdSchema, storage: 'text', virtual: true, create: 'required', update: 'required', patch: true },
    identitySecret: { schema: Type.String(), storage: 'text', virtual: true, create: 'optional' },
    serviceId: { schema: Type.String(), storage: 'text' },
    routerId: { schema: Type.String(), storage: 'text' },
    binding: {
      schema: Type.String(),
      storage: 'text',
      create: 'required',
      update: 'required',
      patch: true,
      filter: true,
    },
    address: {
      schema: Type.String(),
      storage: 'text',
      create: 'required',
      update: 'required',
      patch: true,
      filter: true,
    },
    identity: { schema: Type.String(), storage: 'text', create: 'optional', default: '', filter: true },
    cost: {
      schema: CostSchema,
      storage: 'int',
      create: 'optional',
      update: 'optional',
      patch: true,
      default: 0,
      filter: true,
    },
    precedence: {
      schema: PrecedenceSchema,
      storage: 'text',
      create: 'optional',
      update: 'optional',
      patch: true,
      default: 'default',
      filter: true,
    },
  },
  extraFields: {
    service: { kind: 'scalar', type: 'string', column: 'serviceId' },
    router: { kind: 'scalar', type: 'string', column: 'routerId' },
  },
  hooks: { prepare, decorate },
  ops: {
    list: 'listTerminators',
    create: 'createTerminator',
    detail: 'detailTerminator',
    update: 'updateTerminator',
    patch: 'patchTerminator',
    delete: 'deleteTerminator',
  },
  envelopes: { list: 'listTerminatorsEnvelope', detail: 'detailTerminatorEnvelope' },
};

/** The Client API's terminator record (`terminatorClientDetail`): no binding, address or costs. */
export function clientTerminator(r: Record<string, unknown>): Record<string, unknown> {
  const { id, createdAt, updatedAt, tags, _links, serviceId, service, routerId, identity } = r;
  return { id, createdAt, updatedAt, tags, _links, serviceId, service, routerId, identity };
}
