/** Informational endpoints: version, specs, resource counts and the CA bundle (parity: docs/reference-notes.md §0, §13). */
import type { Ctx } from '../../model/ctx.js';
import { countTables } from '../../model/counts.js';
import { notFound } from '../../model/errors.js';
import { postureCheckTypeCount } from '../../model/posture/check-types.js';
import * as R from '../../model/resources/index.js';
import { apiSessionCerts } from '../../model/resources/api-session-cert.js';
import { sessions } from '../../model/resources/session.js';
import { terminators } from '../../model/resources/terminator.js';
import { ok, listOf, RAW } from '../http/envelope.js';
import { route, API_PREFIX, type ApiName, type RequestContext, type RouteDef } from '../http/route.js';
import { SPEC_IDS, SPEC_VERSION } from '../openapi.js';
import { OIDC_PREFIX } from '../oidc/provider.js';
import { networkJwt } from '../../model/services/enrollment/network-jwt.js';

const BOTH = ['client', 'management'] as const;

/**
 * Whether `/version` advertises the OpenID provider: it is served (the controller has its PKI) and
 * `edge.oidc.advertise` is not off. Current SDKs and the console switch to OIDC as soon as they see it
 * (docs/reference-notes.md §14; docs/decisions.md, "OIDC login").
 */
export const oidcAdvertised = (ctx: Ctx): boolean => ctx.pki !== undefined && ctx.settings.oidc?.advertise !== false;

export function versionRecord(rc: Pick<RequestContext, 'deps' | 'ctx'>) {
  const urls = (api: ApiName) => [`${rc.deps.advertisedUrl}${API_PREFIX[api]}`];
  const v1 = (api: ApiName) => ({ v1: { path: API_PREFIX[api], version: SPEC_VERSION, apiBaseUrls: urls(api) } });
  const oidc = oidcAdvertised(rc.ctx);
  return {
    version: `v${rc.deps.version}`,
    revision: 'edgectl',
    buildDate: rc.deps.startedAt.toISOString(),
    runtimeVersion: process.version,
    // parity: the reference's `buildVersions` lists OIDC_AUTH and the `edge-oidc` binding (path, base URLs, no
    // version) when it serves OIDC; HA_CONTROLLER never (docs/decisions.md, "Version").
    capabilities: oidc ? ['OIDC_AUTH'] : [],
    apiVersions: {
      edge: v1('management'),
      'edge-client': v1('client'),
      'edge-management': v1('management'),
      ...(oidc
        ? { 'edge-oidc': { v1: { path: OIDC_PREFIX, apiBaseUrls: [`${rc.deps.advertisedUrl}${OIDC_PREFIX}`] } } }
        : {}),
    },
  };
}

function specRecord(rc: RequestContext) {
  const id = SPEC_IDS[rc.api];
  const at = rc.deps.startedAt.toISOString();
  return {
    id,
    name: id,
    createdAt: at,
    updatedAt: at,
    tags: {},
    _links: { self: { href: `./specs/${id}` }, spec: { href: `./specs/${id}/spec` } },
  };
}

/**
 * `/summary` keys, named as the reference names its stores (docs/reference-notes.md §13): `routers` counts
 * every router and `routers.edge` the edge ones; `services.edge` equals `services` (every service is an
 * edge service here). `mfas` counts TOTP enrollments, verified or not. Posture check types are constants in
 * code, not a table: their count is added below.
 */
const SUMMARY: Record<string, readonly string[]> = {
  apiSessionCertificates: [apiSessionCerts.table],
  apiSessions: [R.apiSessions.table],
  authPolicies: [R.authPolicies.table],
  authenticators: [R.authenticators.table],
  cas: [R.cas.table],
  configTypes: [R.configTypes.table],
  configs: [R.configs.table],
  edgeRouterPolicies: [R.edgeRouterPolicies.table],
  enrollments: [R.enrollments.table],
  externalJwtSigners: [R.externalJwtSigners.table],
  identities: [R.identities.table],
  identityTypes: [R.identityTypes.table],
  mfas: ['mfas'],
  postureCheckTypes: [],
  postureChecks: [R.postureChecks.table],
  routers: [R.transitRouters.table, R.edgeRouters.table],
  'routers.edge': [R.edgeRouters.table],
  serviceEdgeRouterPolicies: [R.serviceEdgeRouterPolicies.table],
  servicePolicies: [R.servicePolicies.table],
  services: [R.services.table],
  'services.edge': [R.services.table],
  sessions: [sessions.table],
  terminators: [terminators.table],
};

/** The capabilities of the current spec's enumeration (`/version` lists the ones this controller has). */
const KNOWN_CAPABILITIES: readonly string[] = ['OIDC_AUTH', 'HA_CONTROLLER'];

export function infoRoutes(specFor: (api: ApiName) => unknown): RouteDef[] {
  const common = { apis: BOTH, access: 'anonymous' as const, success: 200 };
  return [
    route({
      ...common,
      method: 'GET',
      path: '/',
      operationId: 'listRoot',
      tag: 'Informational',
      envelope: 'listVersionEnvelope',
      handler: async (rc) => ok(versionRecord(rc)),
    }),
    route({
      ...common,
      method: 'GET',
      path: '/version',
      operationId: 'listVersion',
      tag: 'Informational',
      envelope: 'listVersionEnvelope',
      handler: async (rc) => ok(versionRecord(rc)),
    }),
    route({
      ...common,
      method: 'GET',
      path: '/specs',
      operationId: 'listSpecs',
      tag: 'Informational',
      envelope: 'listSpecsEnvelope',
      handler: async (rc) =>
        listOf([specRecord(rc)], { pagination: { limit: 10, offset: 0, totalCount: 1 }, filterableFields: [] }),
    }),
    route({
      ...common,
      method: 'GET',
      path: '/specs/{id}',
      operationId: 'detailSpec',
      tag: 'Informational',
      envelope: 'detailSpecEnvelope',
      async handler(rc) {
        if (rc.params.id !== SPEC_IDS[rc.api]) throw notFound(rc.params.id, 'spec');
        return ok(specRecord(rc));
      },
    }),
    route({
      ...common,
      method: 'GET',
      path: '/specs/{id}/spec',
      operationId: 'detailSpecBody',
      tag: 'Informational',
      envelope: 'detailSpecBodyEnvelope',
      produces: ['application/json'],
      async handler(rc) {
        if (rc.params.id !== SPEC_IDS[rc.api]) throw notFound(rc.params.id, 'spec');
        return ok(specFor(rc.api));
      },
    }),
    route({
      ...common,
      apis: ['client', 'management'],
      method: 'GET',
      path: '/.well-known/est/cacerts',
      operationId: 'listWellKnownCas',
      tag: 'Well Known',
      produces: ['application/pkcs7-mime'],
      async handler(rc) {
        await rc.reply
          .code(200)
          .type('application/pkcs7-mime')
          .header('content-transfer-encoding', 'base64')
          .send(rc.deps.caBundlePkcs7);
        return RAW;
      },
    }),
    route({
      ...common,
      method: 'GET',
      path: '/network-jwts',
      operationId: 'listNetworkJWTs',
      tag: 'Enrollment',
      envelope: 'listNetworkJWTsEnvelope',
      summary: 'One JWT, `default`, naming this controller and signed by its server key, for bootstrapping trust',
      handler: async (rc) => ok([{ name: 'default', token: await networkJwt(rc.ctx) }]),
    }),
    route({
      ...common,
      method: 'GET',
      path: '/enumerated-capabilities',
      operationId: 'listEnumeratedCapabilities',
      tag: 'Informational',
      envelope: 'listEnumeratedCapabilitiesEnvelope',
      summary: 'Every capability a controller may have (those this one has are in /version)',
      handler: async () => ok(KNOWN_CAPABILITIES),
    }),
    route({
      ...common,
      apis: ['client'],
      method: 'GET',
      path: '/protocols',
      operationId: 'listProtocols',
      tag: 'Informational',
      envelope: 'listProtocolsEnvelope',
      summary: 'The listeners this controller serves: its HTTPS API address',
      async handler(rc) {
        return ok({ https: { address: rc.deps.advertisedUrl.replace(/^https:\/\//, '') } });
      },
    }),
    route({
      apis: ['management'],
      method: 'GET',
      path: '/summary',
      operationId: 'listSummary',
      tag: 'Informational',
      access: 'admin',
      success: 200,
      envelope: 'listSummaryCountsEnvelope',
      async handler(rc) {
        const counts: Record<string, number> = {};
        for (const [key, tables] of Object.entries(SUMMARY)) {
          counts[key] = await countTables(rc.ctx, tables);
        }
        counts.postureCheckTypes = postureCheckTypeCount();
        return ok(counts);
      },
    }),
  ];
}
