/**
 * Transit routers (seed §2.12): fabric routers without the edge extension. Served at both `/transit-routers`
 * and `/routers` (the reference has both paths over one store); the two definitions differ only in path
 * and operation names.
 */
import { defineResource } from '../resource-record.js';
import { routerProps } from './router-common.js';

export const transitRouters = defineResource({
  name: 'transit-routers',
  label: 'router',
  table: 'transit_routers',
  schemaName: 'router',
  props: routerProps,
  unique: ['name', 'fingerprint'],
  ops: {
    list: 'listTransitRouters',
    create: 'createTransitRouter',
    detail: 'detailTransitRouter',
    update: 'updateTransitRouter',
    patch: 'patchTransitRouter',
    delete: 'deleteTransitRouter',
  },
  envelopes: { list: 'listRoutersEnvelope', detail: 'detailRouterEnvelope' },
});

export const routers = defineResource({
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
});
