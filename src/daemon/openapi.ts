/**
 * The OpenAPI (Swagger 2.0) documents served by the spec endpoints, generated from the same route
 * declarations that register the routes, so the published contract cannot drift from what is served.
 */
import { API_PREFIX, type ApiName, type RouteDef } from './http/route.js';

/**
 * The spec version this controller advertises (`/version` → `apiVersions.*.v1.version`, the OpenAPI documents):
 * the current spec (0.29.0), every operation of which is served. `test/unit/daemon/route-coverage.test.ts`
 * lists any operation missing and fails when the two disagree.
 */
export const SPEC_VERSION: string = '0.29.0';

export const SPEC_IDS: Record<ApiName, string> = {
  client: 'edge-client',
  management: 'edge-management',
  fabric: 'fabric',
};

/** Strips TypeBox's symbol keys and Swagger-2-incompatible members from a schema. */
function plain(schema: unknown): unknown {
  return JSON.parse(JSON.stringify(schema ?? {}));
}

export function buildOpenApi(api: ApiName, routes: readonly RouteDef[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes.filter((x) => x.apis.includes(api))) {
    const params: unknown[] = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      type: 'string',
    }));
    if (r.body) params.push({ name: 'body', in: 'body', required: true, schema: plain(r.body) });
    const op: Record<string, unknown> = {
      operationId: r.operationId,
      tags: [r.tag],
      summary: r.summary ?? r.operationId,
      parameters: params,
      responses: {
        [String(r.success)]: { description: r.envelope ?? 'success' },
        default: { description: 'apiErrorEnvelope' },
      },
      security: r.access === 'anonymous' ? [] : [{ ztSession: [] }],
    };
    if (r.consumes) op.consumes = r.consumes;
    if (r.produces) op.produces = r.produces;
    if (r.access === 'admin') op.description = 'Requires admin access.';
    (paths[r.path] ??= {})[r.method.toLowerCase()] = op;
  }
  return {
    swagger: '2.0',
    info: { title: `edgectl ${api} API`, version: SPEC_VERSION, description: `Served by edgectl ${version}` },
    basePath: API_PREFIX[api],
    schemes: ['https'],
    consumes: ['application/json'],
    produces: ['application/json'],
    securityDefinitions: {
      ztSession: {
        type: 'apiKey',
        in: 'header',
        name: 'zt-session',
        description: 'API session token (svc-session is accepted too)',
      },
    },
    paths,
  };
}
