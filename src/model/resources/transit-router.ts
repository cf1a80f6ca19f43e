/**
 * Transit routers (seed §2.12): fabric routers without the edge extension. Served at both `/transit-routers`
 * and `/routers` (the reference has both paths over one store); the two definitions differ only in path
 * and operation names.
 */
import type { ResourceDef } from '../resource.js';
import { decorateRouter, prepareRouter, routerProps } from './router-common.js';
import { attachRouterEnrollments, createRouterEnrollment } from '../services/router-enrollment.js';

export const transitRouters: ResourceDef = {
  name: 'transit-routers',
  label: 'router',
  table: 'transit_routers',
  schemaName: 'router',
  props: routerProps,
  unique: ['name', 'fingerprint'],
  hooks: {
    prepare: (ctx, input) => prepareRouter(ctx, input, 'edge_routers'),
    // A new router gets its trott enrollment in the same transaction (§7.2).
    async afterWrite(ctx, id, mode) {
      if (mode === 'create') await createRouterEnrollment(ctx, 'transit', id);
    },
    async decorate(ctx, rows) {
      await attachRouterEnrollments(ctx, rows, 'transit');
      for (const r of rows) {
        decorateRouter(r);
        // Required (not nullable) in routerDetail: empty until the router enrolls.
        r.fingerprint ??= '';
      }
    },
  },
  ops: {
    list: 'listTransitRouters',
    create: 'createTransitRouter',
    detail: 'detailTransitRouter',
    update: 'updateTransitRouter',
    patch: 'patchTransitRouter',
    delete: 'deleteTransitRouter',
  },
  envelopes: { list: 'listRoutersEnvelope', detail: 'detailRouterEnvelope' },
};

export const routers: ResourceDef = {
  ...transitRouters,
  name: 'routers',
  ops: {
    list: 'listRouters',
    create: 'createRouter',
    detail: 'detailRouter',
    update: 'updateRouter',
    patch: 'patchRouter',
    delete: 'deleteRouter',
  },
};
