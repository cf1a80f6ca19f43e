/**
 * Terminators: where a service is hosted (a router, a binding and an address; docs/reference-notes.md §12 "Terminator").
 * Hosting routers create them through the router protocol, which this controller does not speak yet, so
 * today they come only from the Management API's CRUD; the listings (`/terminators`,
 * `/services/{id}/terminators` on both APIs) filter and page like any other. Requests name the service and
 * router by id (`service`, `router`); records show them as refs with `serviceId`/`routerId`.
 */
import { Type } from '../schema-type.js';
import { defineResource } from '../resource-record.js';
import { CostSchema, PrecedenceSchema } from '../schemas.js';

const IdSchema = Type.String({ minLength: 1 });

export const terminators = defineResource({
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
  ops: {
    list: 'listTerminators',
    create: 'createTerminator',
    detail: 'detailTerminator',
    update: 'updateTerminator',
    patch: 'patchTerminator',
    delete: 'deleteTerminator',
  },
  envelopes: { list: 'listTerminatorsEnvelope', detail: 'detailTerminatorEnvelope' },
});

/** The Client API's terminator record (`terminatorClientDetail`): no binding, address or costs. */
export function clientTerminator(r: Record<string, unknown>): Record<string, unknown> {
  const { id, createdAt, updatedAt, tags, _links, serviceId, service, routerId, identity } = r;
  return { id, createdAt, updatedAt, tags, _links, serviceId, service, routerId, identity };
}
