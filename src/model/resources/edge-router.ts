/**
 * Edge routers (seed §2.11): routers that clients connect to, selected by edge router policies and service
 * edge router policies through their role attributes. A tunneler-enabled edge router also gets its own
 * identity and system edge router policy (§2.7, `services/router/edge-router-system.ts`).
 */
import { Type } from '../schema-type.js';
import { defineResource } from '../resource-record.js';
import { ROLE_ATTRIBUTES_PROP, ObjectSchema } from '../schemas.js';
import { routerProps } from './router-common.js';

export const edgeRouters = defineResource({
  name: 'edge-routers',
  label: 'edge router',
  table: 'edge_routers',
  schemaName: 'edgeRouter',
  props: {
    ...routerProps,
    name: { ...routerProps.name!, search: true },
    isTunnelerEnabled: {
      schema: Type.Boolean(),
      storage: 'bool',
      create: 'optional',
      update: 'optional',
      patch: true,
      default: false,
      filter: true,
    },
    roleAttributes: ROLE_ATTRIBUTES_PROP,
    appData: {
      schema: ObjectSchema,
      storage: 'json',
      create: 'optional',
      update: 'optional',
      patch: true,
      nullable: true,
      default: {},
    },
    certPem: { schema: Type.String(), storage: 'text', renderNull: true },
  },
  unique: ['name', 'fingerprint'],
  roleFilter: true,
  links: (id) => ({
    'edge-router-policies': `./edge-routers/${id}/edge-router-policies`,
    'service-edge-router-policies': `./edge-routers/${id}/service-edge-router-policies`,
    identities: `./edge-routers/${id}/identities`,
    services: `./edge-routers/${id}/services`,
  }),
  ops: {
    list: 'listEdgeRouters',
    create: 'createEdgeRouter',
    detail: 'detailEdgeRouter',
    update: 'updateEdgeRouter',
    patch: 'patchEdgeRouter',
    delete: 'deleteEdgeRouter',
  },
  envelopes: { list: 'listEdgeRoutersEnvelope', detail: 'detailedEdgeRouterEnvelope' },
});
