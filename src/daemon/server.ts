/**
 * Builds the HTTPS server of both APIs. It never listens by itself: `serve` and the tests decide where.
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Ctx } from '../model/ctx.js';
import { DomainError } from '../model/errors.js';
import { newId } from '../model/ids.js';
import type { DaemonDeps } from './deps.js';
import { errorHandler, sendError } from './http/errors.js';
import { registerRoutes, API_PREFIX, type ApiName, type RouteDef } from './http/route.js';
import { buildOpenApi } from './openapi.js';
import { versionRecord } from './routes/info.js';
import { baseMeta } from './http/envelope.js';
import { allRoutes } from './routes/index.js';

export interface TlsMaterial {
  key: string;
  cert: string;
  /** CAs whose client certificates the listener asks for (requested, not required). */
  ca: string;
}

export interface ServerOptions {
  ctx: Ctx;
  deps: DaemonDeps;
  tls: TlsMaterial;
  logger: FastifyBaseLogger;
}

export const BODY_LIMIT = 1024 * 1024;

export function buildServer(opts: ServerOptions): { app: FastifyInstance; routes: RouteDef[] } {
  const app = Fastify({
    https: { key: opts.tls.key, cert: opts.tls.cert, ca: opts.tls.ca, requestCert: true, rejectUnauthorized: false },
    loggerInstance: opts.logger,
    bodyLimit: BODY_LIMIT,
    genReqId: () => newId(12),
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true },
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false } },
    return503OnClosing: true,
  });

  // JSON bodies: an empty body is an empty object (existing clients send it so); anything unparsable is 400.
  app.removeContentTypeParser(['application/json']);
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json/, { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, {});
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new DomainError('COULD_NOT_PARSE_BODY'), undefined);
    }
  });
  // PEM, CSR and certificate uploads arrive as text in several content types.
  app.addContentTypeParser(
    ['text/plain', 'application/x-pem-file', 'application/pkcs10', 'application/x-x509-user-cert', 'application/pkcs7', 'application/jwt'],
    { parseAs: 'string' },
    (_req, body, done) => done(null, String(body)),
  );

  app.setErrorHandler(errorHandler);

  const routes: RouteDef[] = [];
  const specs = new Map<ApiName, unknown>();
  const specFor = (api: ApiName) => {
    if (!specs.has(api)) specs.set(api, buildOpenApi(api, routes, opts.deps.version));
    return specs.get(api);
  };
  routes.push(...allRoutes(specFor));
  registerRoutes(app, opts.ctx, opts.deps, routes);

  // The version record is also served at the root, outside both API prefixes.
  app.get('/version', async (_req, reply) =>
    reply.type('application/json').send({ data: versionRecord({ deps: opts.deps }), meta: baseMeta() }),
  );

  // Unknown route: 404, or 405 when the path exists under another method (parity: §3.4).
  const patterns = routes.flatMap((r) =>
    r.apis.map((api) => ({
      method: r.method,
      re: new RegExp('^' + (API_PREFIX[api] + r.path).replace(/\/+$/, '').replace(/[.]/g, '\\.').replace(/\{\w+\}/g, '[^/]+') + '/?$'),
    })),
  );
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0]!.replace(/\/{2,}/g, '/');
    const other = patterns.some((p) => p.re.test(path) && p.method !== req.method);
    sendError(reply, other ? new DomainError('METHOD_NOT_ALLOWED') : new DomainError('NOT_FOUND'));
  });

  return { app, routes };
}
