/**
 * Edge routers (seed §2.11): routers that clients connect to, selected by edge router policies and service
 * edge router policies through their role attributes. A tunneler-enabled edge router also gets its own
 * identity and system edge router policy (§2.7, `services/edge-router-system.ts`).
 */
import { Type } from '../schema-type.js';
import { policyTargetHooks } from '../policy/target-hooks.js';
import type { ResourceDef } from '../resource.js';
import { ROLE_ATTRIBUTES_PROP, checkRoleAttributes, ObjectSchema } from '../schemas.js';
import { removeTunnelerRecords, syncTunnelerRecords } from '../services/edge-router-system.js';
import { attachRouterEnrollments, createRouterEnrollment } from '../services/router-enrollment.js';
import { decorateRouter, prepareRouter, routerProps } from './router-common.js';

const targetHooks = policyTargetHooks('edgeRouter');

export const edgeRouters: ResourceDef = {
  name: 'edge-routers',
  label: 'edge router',
  table: 'edge_routers',
  schemaName: 'edgeRouter',
  props: {
    ...routerProps,
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
  hooks: {
    async prepare(ctx, input) {
      const out = await prepareRouter(ctx, input, 'transit_routers');
      if (out.roleAttributes === null) out.roleAttributes = [];
      if (out.roleAttributes !== undefined) checkRoleAttributes('roleAttributes', out.roleAttributes);
      if (out.appData === null) out.appData = {};
      return out;
    },
    async afterWrite(ctx, id, mode, input, existing) {
      await targetHooks.afterWrite(ctx, id, mode, input, existing);
      await syncTunnelerRecords(ctx, id, input, existing);
      // A new router gets its erott enrollment in the same transaction (§7.2).
      if (mode === 'create') await createRouterEnrollment(ctx, 'edge', id);
    },
    async beforeDelete(ctx, row) {
      await removeTunnelerRecords(ctx, row.id as string);
      await targetHooks.beforeDelete(ctx, row);
    },
    async decorate(ctx, rows) {
      await attachRouterEnrollments(ctx, rows, 'edge');
      for (const r of rows) {
        decorateRouter(r);
        r.hostname ??= '';
        r.supportedProtocols ??= {};
        r.syncStatus ??= 'SYNC_UNKNOWN';
      }
    },
  },
  ops: {
    list: 'listEdgeRouters',
    create: 'createEdgeRouter',
    detail: 'detailEdgeRouter',
    update: 'updateEdgeRouter',
    patch: 'patchEdgeRouter',
    delete: 'deleteEdgeRouter',
  },
  envelopes: { list: 'listEdgeRoutersEnvelope', detail: 'detailedEdgeRouterEnvelope' },
};
