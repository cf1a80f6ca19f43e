/**
 * Builds the HTTPS server of both APIs. It never listens by itself: `serve` and the tests decide where.
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Ctx } from '../model/ctx.js';
import { DomainError } from '../model/errors.js';
import { newId } from '../model/ids.js';
import type { DaemonDeps } from './deps.js';
import { parseJsonBody } from './http/body-limits.js';
import { errorBody, errorHandler, sendError } from './http/errors.js';
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
    // Shutdown does not wait for idle or silent connections; a connection idle this long is closed.
    forceCloseConnections: true,
    connectionTimeout: 120_000,
    // Malformed URLs and the like still answer the error envelope.
    frameworkErrors: (err, req, reply) => {
      req.log.debug({ err }, 'request refused by the router');
      sendError(reply, new DomainError(err.code === 'FST_ERR_BAD_URL' ? 'NOT_FOUND' : 'COULD_NOT_VALIDATE', { message: undefined }));
    },
    // Requests too broken to reach the router (bad framing, headers too large) get the envelope too.
    clientErrorHandler: (err, socket) => {
      if (!socket.writable) return socket.destroy();
      const code = (err as NodeJS.ErrnoException).code;
      const status = code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
      const body = JSON.stringify(errorBody(new DomainError('COULD_NOT_VALIDATE', { status, message: status === 431 ? 'The request headers are too large' : 'The request could not be parsed' }), newId(12)));
      socket.end(`HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
    },
  });

  // JSON bodies: an empty body is an empty object (existing clients send it so); anything unparsable is 400.
  app.removeContentTypeParser(['application/json']);
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json/, { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, {});
    try {
      done(null, parseJsonBody(text));
    } catch (e) {
      done(e as DomainError, undefined);
    }
  });
  // PEM, CSR and certificate uploads arrive as text in several content types.
  app.addContentTypeParser(
    ['text/plain', 'application/x-pem-file', 'application/pkcs10', 'application/x-x509-user-cert', 'application/pkcs7', 'application/jwt'],
    { parseAs: 'string' },
    (_req, body, done) => done(null, String(body)),
  );

  app.setErrorHandler(errorHandler);

  // CORS as the reference answers it: any origin, the session and content headers (parity: §0 "CORS").
  app.addHook('onRequest', async (req, reply) => {
    const origin = req.headers.origin;
    if (!origin) return;
    reply
      .header('access-control-allow-origin', origin)
      .header('vary', 'origin')
      .header('access-control-allow-credentials', 'true')
      .header('access-control-expose-headers', 'zt-session, svc-session, expiration-seconds, expires-at');
  });
  app.options('/*', async (_req, reply) =>
    reply
      .code(200)
      .header('access-control-allow-methods', 'GET, POST, PUT, PATCH, DELETE, OPTIONS')
      .header('access-control-allow-headers', 'content-type, accept, authorization, zt-session, svc-session, mfa-validation-code')
      .header('access-control-max-age', '600')
      .send(),
  );

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
