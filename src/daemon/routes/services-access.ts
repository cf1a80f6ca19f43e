/**
 * Services as identities see them, on both APIs (docs/reference-notes.md §2.3, §4.6, §4.7): the client's
 * service list and detail, the management listing's per-identity view (`asIdentity`), service updates, the
 * caller's edge routers, a service's edge routers and terminators, and the terminators' CRUD. The client's
 * service update/patch/delete are the management operations, for admins only.
 */
import { postureChangedAt } from '../../model/posture/posture-of.js';
import { getRow, listEntities } from '../../model/crud.js';
import { renderRecord } from '../../model/render.js';
import { edgeRouters } from '../../model/resources/edge-router.js';
import { services } from '../../model/resources/service.js';
import { clientTerminator, terminators } from '../../model/resources/terminator.js';
import { accessEngine } from '../../model/access/engine.js';
import {
  listServicesAs,
  listServicesOf,
  resolveIdentityRef,
  serviceAs,
  serviceOf,
  type PageAnswer,
  type ServiceListRequest,
  type ServicePage,
} from '../../model/services/service-access/service-listing.js';
import { listRoutersOfIdentity } from '../../model/services/service-access/identity-routers.js';
import { commonRouters } from '../../model/services/session/session-routers.js';
import { terminatorsOfService } from '../../model/listing-scopes.js';
import { fieldError } from '../../model/errors.js';
import { MAX_SET_ITEMS } from '../../model/schemas.js';
import { baseMeta, listOf, ok, RAW, type Envelope } from '../http/envelope.js';
import { route, queryArray, queryString, type RequestContext, type RouteDef } from '../http/route.js';
import { crudRoutes, listOptions } from './crud.js';

/** `configTypes` as repeated parameters or a comma list (client and management forms); absent: undefined. */
function configTypesParam(rc: RequestContext): string[] | undefined {
  if (rc.query.configTypes === undefined) return undefined;
  const types = queryArray(rc.query, 'configTypes')
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  if (types.length > MAX_SET_ITEMS) throw fieldError('configTypes', `at most ${MAX_SET_ITEMS} entries are accepted`);
  return types;
}

const DATA_OPEN = Buffer.from('{"data":');

/**
 * The default client page's answer: its records arrive already encoded (the access engine keeps each service's
 * JSON), so the list envelope around them is written as bytes, the same `{data, meta}` as `listOf`. The model
 * keeps the page with this answer, its one copy of the bytes (service-listing.ts).
 */
const pageAnswer: PageAnswer = (data, page) => {
  const meta = JSON.stringify({ ...baseMeta(), pagination: page.pagination, filterableFields: page.filterableFields });
  return Buffer.concat([DATA_OPEN, ...data, Buffer.from(`,"meta":${meta}}`)]);
};

/** A service page as the list envelope: the default client page's answer as it is, any other from its records. */
function servicePage(rc: RequestContext, p: ServicePage): Envelope | typeof RAW {
  if (!p.answer) return listOf(p.records ?? [], p.page);
  void rc.reply.code(200).type('application/json').send(p.answer);
  return RAW;
}

const listRequest = (rc: RequestContext): ServiceListRequest => ({
  list: listOptions(rc),
  roleFilter: queryArray(rc.query, 'roleFilter'),
  roleSemantic: queryString(rc.query, 'roleSemantic'),
  configTypes: configTypesParam(rc),
});

/** The generic management routes these replace (`GET /services`, `GET /services/{id}`). */
const REPLACED: ReadonlySet<string> = new Set(['GET /services', 'GET /services/{id}']);
export const isReplacedByAccessRoutes = (r: RouteDef): boolean =>
  r.apis.includes('management') && REPLACED.has(`${r.method} ${r.path}`);

export const servicesAccessRoutes: RouteDef[] = [
  route({
    apis: ['client'],
    method: 'GET',
    path: '/services',
    operationId: 'listServices',
    tag: 'Service',
    access: 'session',
    success: 200,
    envelope: 'listServicesEnvelope',
    async handler(rc) {
      const p = rc.principal;
      return servicePage(rc, await listServicesOf(rc.ctx, p.identity.id, p.apiSessionId, listRequest(rc), pageAnswer));
    },
  }),
  route({
    apis: ['client'],
    method: 'GET',
    path: '/services/{id}',
    operationId: 'detailService',
    tag: 'Service',
    access: 'session',
    success: 200,
    envelope: 'detailServiceEnvelope',
    async handler(rc) {
      const p = rc.principal;
      return ok(await serviceOf(rc.ctx, p.identity.id, p.apiSessionId, rc.params.id));
    },
  }),
  // The Client API's service update, patch and delete are the management operations (admins only).
  ...crudRoutes(services, ['client']).filter(
    (r) => r.method === 'PUT' || r.method === 'PATCH' || r.method === 'DELETE',
  ),
  route({
    apis: ['management'],
    method: 'GET',
    path: '/services',
    operationId: 'listServices',
    tag: 'Service',
    access: 'admin',
    success: 200,
    envelope: 'listServicesEnvelope',
    async handler(rc) {
      const p = rc.principal;
      const as = queryString(rc.query, 'asIdentity');
      const viewer = as ? await resolveIdentityRef(rc.ctx, as) : p.identity.id;
      return servicePage(rc, await listServicesAs(rc.ctx, viewer, p.apiSessionId, listRequest(rc)));
    },
  }),
  route({
    apis: ['management'],
    method: 'GET',
    path: '/services/{id}',
    operationId: 'detailService',
    tag: 'Service',
    access: 'admin',
    success: 200,
    envelope: 'detailServiceEnvelope',
    async handler(rc) {
      const p = rc.principal;
      return ok(await serviceAs(rc.ctx, p.identity.id, p.apiSessionId, rc.params.id));
    },
  }),
  route({
    apis: ['client'],
    method: 'GET',
    path: '/services/{id}/terminators',
    operationId: 'listServiceTerminators',
    tag: 'Service',
    access: 'session',
    success: 200,
    envelope: 'listClientTerminatorsEnvelope',
    async handler(rc) {
      const p = rc.principal;
      // Only for a service the caller may use (404 otherwise, as the detail).
      await serviceOf(rc.ctx, p.identity.id, p.apiSessionId, rc.params.id);
      const page = await listEntities(rc.ctx, terminators, listOptions(rc), terminatorsOfService(rc.params.id));
      return listOf(
        page.rows.map((r) => clientTerminator(renderRecord(terminators, r))),
        page,
      );
    },
  }),
  route({
    // Newer spec (docs/decisions.md, client `GET /services/{id}/edge-routers`): the routers a client may use for one service, connected first.
    apis: ['client'],
    method: 'GET',
    path: '/services/{id}/edge-routers',
    operationId: 'listServiceEdgeRouters',
    tag: 'Service',
    access: 'session',
    success: 200,
    envelope: 'listServiceEdgeRoutersEnvelope',
    async handler(rc) {
      const p = rc.principal;
      await serviceOf(rc.ctx, p.identity.id, p.apiSessionId, rc.params.id);
      const engine = accessEngine(rc.ctx);
      const m = await engine.markers(rc.ctx);
      const { common } = await commonRouters(rc.ctx, m, await engine.identity(rc.ctx, m, p.identity.id), rc.params.id);
      return ok({ edgeRouters: common.map((r) => r.sessionRecord) });
    },
  }),
  route({
    apis: ['management'],
    method: 'GET',
    path: '/services/{id}/terminators',
    operationId: 'listServiceTerminators',
    tag: 'Service',
    access: 'admin',
    success: 200,
    envelope: 'listTerminatorsEnvelope',
    async handler(rc) {
      await getRow(rc.ctx, services, rc.params.id);
      const page = await listEntities(rc.ctx, terminators, listOptions(rc), terminatorsOfService(rc.params.id));
      return listOf(
        page.rows.map((r) => renderRecord(terminators, r)),
        page,
      );
    },
  }),
  // Terminators: the generic CRUD (admins), see resources/terminator.ts.
  ...crudRoutes(terminators),
  route({
    apis: ['client'],
    method: 'GET',
    path: '/current-api-session/service-updates',
    operationId: 'listServiceUpdates',
    tag: 'Current API Session',
    access: 'session',
    success: 200,
    envelope: 'listCurrentApiSessionServiceUpdatesEnvelope',
    async handler(rc) {
      // Global markers: they move on any access-relevant write, which includes every change to this
      // identity's access (§4.6); never earlier than this API session or the controller's start.
      const engine = accessEngine(rc.ctx);
      const m = await engine.markers(rc.ctx);
      const session = await engine.apiSession(rc.ctx, rc.principal.apiSessionId);
      const times = [
        m.catalog.changedAt,
        m.serviceAccess.changedAt,
        m.identity.changedAt,
        // A posture response or MFA change that altered what this identity may use.
        await postureChangedAt(rc.ctx.db, rc.principal.identity.id),
        session?.createdAt ?? '',
        rc.deps.startedAt.toISOString(),
      ];
      return ok({ lastChangeAt: times.reduce((a, b) => (b > a ? b : a)) });
    },
  }),
  route({
    apis: ['client'],
    method: 'GET',
    path: '/current-identity/edge-routers',
    operationId: 'getCurrentIdentityEdgeRouters',
    tag: 'Current Identity',
    access: 'session',
    success: 200,
    envelope: 'listCurrentIdentityEdgeRoutersEnvelope',
    async handler(rc) {
      // Verified routers an edge router policy gives the caller; admins: every verified router (§2.3).
      const page = await listRoutersOfIdentity(rc.ctx, rc.principal.identity, listOptions(rc));
      return listOf(
        page.rows.map((r) => currentIdentityRouter(renderRecord(edgeRouters, r))),
        page,
      );
    },
  }),
];

/** `currentIdentityEdgeRouterDetail`: the base fields and the router's common properties only. */
const CURRENT_IDENTITY_ROUTER_FIELDS = [
  'id',
  'createdAt',
  'updatedAt',
  'tags',
  '_links',
  'name',
  'hostname',
  'isOnline',
  'disabled',
  'cost',
  'noTraversal',
  'supportedProtocols',
  'syncStatus',
  'appData',
] as const;

function currentIdentityRouter(r: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(CURRENT_IDENTITY_ROUTER_FIELDS.map((k) => [k, r[k]]));
}
