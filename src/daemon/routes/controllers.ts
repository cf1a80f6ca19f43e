/**
 * `GET /controllers` on both APIs (docs/decisions.md, "Controllers and controller settings"): the controllers
 * serving this store, from the registry every running controller keeps its row in. The Client API (any session)
 * shows the client view of `controllerDetail`: no `ctrlAddress`, and only the `edge-client` and `edge-oidc` API
 * addresses; the Management API (admin) shows every field.
 */
import { listControllers } from '../../model/services/controller/registry.js';
import { controllers } from '../../model/resources/controller.js';
import { renderRecord } from '../../model/render.js';
import { listOf, ok } from '../http/envelope.js';
import { effectiveSettingView } from '../../model/services/controller/settings.js';
import { route, type RouteDef } from '../http/route.js';
import { listOptions } from './crud.js';

const CLIENT_BINDINGS = ['edge-client', 'edge-oidc'];

function clientView(record: Record<string, unknown>): Record<string, unknown> {
  const { ctrlAddress: _c, apiAddresses, ...rest } = record;
  const kept = Object.fromEntries(
    Object.entries((apiAddresses as Record<string, unknown>) ?? {}).filter(([k]) => CLIENT_BINDINGS.includes(k)),
  );
  return { ...rest, apiAddresses: kept };
}

const listRoutes: RouteDef[] = (['client', 'management'] as const).map((api) =>
  route({
    apis: [api],
    method: 'GET',
    path: '/controllers',
    operationId: 'listControllers',
    tag: 'Controllers',
    access: api === 'client' ? 'session' : 'admin',
    success: 200,
    envelope: 'listControllersEnvelope',
    summary: 'The controllers serving this network, each with whether it is online (seen in the last 45 s)',
    async handler(rc) {
      const page = await listControllers(rc.ctx, listOptions(rc));
      const records = page.rows.map((r) => renderRecord(controllers, r));
      return listOf(api === 'client' ? records.map(clientView) : records, page);
    },
  }),
);

export const controllerRoutes: RouteDef[] = [
  ...listRoutes,
  // The generic CRUD serves the rest of /controller-settings (its update, patch and delete on this same path).
  route({
    apis: ['management'],
    method: 'GET',
    path: '/controller-settings/{id}/effective',
    operationId: 'detailControllerSettingEffective',
    tag: 'Controller Settings',
    access: 'admin',
    success: 200,
    envelope: 'detailControllerSettingEffectiveEnvelope',
    summary: "A controller setting's own lists (`instance`) and, merged with the global ones, those in force",
    handler: async (rc) => ok(await effectiveSettingView(rc.ctx, rc.params.id)),
  }),
];
