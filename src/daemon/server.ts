/**
 * Builds the HTTPS server of both APIs. It never listens by itself: `serve` and the tests decide where.
 */
import type { Duplex } from 'node:stream';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyRequest,
  type onSendHookHandler,
} from 'fastify';
import type { Ctx } from '../model/ctx.js';
import { replicatedWrites, storePublished } from '../model/store.js';
import { DomainError } from '../model/errors.js';
import { newId } from '../model/ids.js';
import type { DaemonDeps } from './deps.js';
import { parseJsonBody, utf8Body } from './http/body-limits.js';
import { errorBody, errorHandler, sendError } from './http/errors.js';
import { registerRoutes, API_PREFIX, type ApiName, type RouteDef } from './http/route.js';
import { buildOpenApi } from './openapi.js';
import { versionRecord } from './routes/info.js';
import { baseMeta } from './http/envelope.js';
import { allRoutes } from './routes/index.js';
import { DEFAULTS, type ConnectionLimits } from './config.js';
import { parseDuration } from './duration.js';
import { applyConnectionLimits } from './http/connection-limits.js';
import { drainUnreadBodies } from './http/body-drain.js';
import { listenerSecureContext } from './http/tls.js';
import { lazyChildLogger, safeUrl } from './log.js';
import { BodyValidators } from './http/validators.js';
import type { Logger } from 'pino';
import { registerHealthRoute, registerMetricsRoute, type DaemonMetrics } from './metrics.js';
import { registerOidcProvider } from './oidc/provider.js';

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
  /** Connection bounds (defaults: config.ts DEFAULTS). */
  limits?: ConnectionLimits;
  /** Exact origins allowed cross-origin access; none by default. */
  corsAllowedOrigins?: readonly string[];
  /** Counts requests when given; `/metrics` is served on this listener only with `serveMetrics`. */
  metrics?: DaemonMetrics;
  serveMetrics?: boolean;
  /** What events name as the source of the changes this app makes (`offline`: the offline CLI). */
  eventSource?: 'rest' | 'offline';
  /** A last look at every response before it is sent (the test harness checks each against the response schemas). */
  onSend?: onSendHookHandler;
  /** The compiled body validators to use and add to (http/validators.ts); the server's own when absent. */
  bodyValidators?: BodyValidators;
}

export const BODY_LIMIT = 1024 * 1024;
/**
 * How much of an unread body is read and discarded after an early answer (body-drain.ts): far more than any
 * client sends by mistake, so its upload ends and it reads the 413; time bounds the draining too.
 */
export const DRAIN_LIMIT = 1024 * BODY_LIMIT;

export const DEFAULT_LIMITS: ConnectionLimits = {
  maxConnections: DEFAULTS.maxConnections,
  maxConnectionsPerAddress: DEFAULTS.maxConnectionsPerAddress,
  headersTimeoutMs: parseDuration(DEFAULTS.headersTimeout),
  requestTimeoutMs: parseDuration(DEFAULTS.requestTimeout),
};

/** Request bodies are validated as sent: no coercion, no defaults filled in, nothing removed, the first error only. */
export const AJV_OPTIONS = {
  customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false },
} as const;

/**
 * With replicas (PostgreSQL): a request that wrote the model is answered only once every other replica has
 * learnt of the write (docs/decisions.md, "Replicas"), so what it revoked is refused everywhere by then. Reads
 * and writes the other replicas do not follow (new sessions, activity) are answered at once.
 */
function answerAfterReplicas(app: FastifyInstance, db: Ctx['db']): void {
  if (replicatedWrites(db) === undefined) return;
  /** What each writing request saw of the store's replicated writes when it arrived. */
  const writesAtArrival = new WeakMap<FastifyRequest, number>();
  app.addHook('onRequest', (req, _reply, done) => {
    if (req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'OPTIONS')
      writesAtArrival.set(req, replicatedWrites(db) ?? 0);
    done();
  });
  // Not async: a promise per request for the rare write that must wait.
  app.addHook('onSend', (req, _reply, payload, done) => {
    const before = writesAtArrival.get(req);
    const published = before !== undefined && replicatedWrites(db) !== before ? storePublished(db) : undefined;
    if (!published) done(null, payload);
    else void published.then(() => done(null, payload));
  });
}

export function buildServer(opts: ServerOptions): { app: FastifyInstance; routes: RouteDef[] } {
  const limits = opts.limits ?? DEFAULT_LIMITS;
  const reqIdPrefix = `${newId(8)}-`;
  let reqSeq = 0;
  // Sockets whose answer is sent while the rest of their body is discarded (body-drain.ts).
  const draining = new WeakSet<Duplex>();
  const app = Fastify({
    https: {
      ...listenerSecureContext(opts.tls),
      requestCert: true,
      rejectUnauthorized: false,
      // Slow or silent clients lose their connection quickly: the TLS handshake and the headers each get
      // `headersTimeout`, the whole request `requestTimeout`; deadlines are checked at least once a second.
      handshakeTimeout: limits.headersTimeoutMs,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, Math.ceil(limits.headersTimeoutMs / 2)),
    },
    requestTimeout: limits.requestTimeoutMs,
    loggerInstance: opts.logger,
    // Request children are made when a request first logs, not for every request (log.ts).
    childLoggerFactory: (logger, bindings, childOpts) => lazyChildLogger(logger as Logger, bindings, childOpts),
    bodyLimit: BODY_LIMIT,
    // A per-server random prefix and a counter: unique, and no random bytes per request.
    genReqId: () => `${reqIdPrefix}${(++reqSeq).toString(36)}`,
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true },
    ajv: AJV_OPTIONS,
    // Fastify's compiler with the options above, compiling each body schema on first use, once per set.
    schemaController: {
      compilersFactory: { buildValidator: (opts.bodyValidators ?? new BodyValidators()).buildValidator },
    },
    return503OnClosing: true,
    // Shutdown does not wait for idle or silent connections; a connection idle this long is closed.
    forceCloseConnections: true,
    connectionTimeout: 120_000,
    // Malformed URLs and the like still answer the error envelope.
    frameworkErrors: (err, req, reply) => {
      // The error message quotes the raw URL, tokens included: log the masked URL and the code only.
      req.log.debug({ code: err.code, url: safeUrl(req.url) }, 'request refused by the router');
      sendError(
        reply,
        new DomainError(err.code === 'FST_ERR_BAD_URL' ? 'NOT_FOUND' : 'COULD_NOT_VALIDATE', { message: undefined }),
      );
    },
    // Requests too broken to reach the router (bad framing, headers too large) get the envelope too.
    clientErrorHandler: (err, socket) => {
      const code = (err as NodeJS.ErrnoException).code ?? '';
      // A TLS failure (handshake timeout, no shared cipher…) leaves no channel to answer on, and a connection
      // whose body is being drained has its answer already: just close.
      if (!socket.writable || draining.has(socket) || code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL'))
        return socket.destroy();
      const answer = clientErrorAnswer(code);
      const body = JSON.stringify(errorBody(answer.error, newId(12)));
      socket.end(
        `HTTP/1.1 ${answer.error.status} ${answer.reason}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
    },
  });

  // Bodies are parsed from their bytes, so that bytes which are not UTF-8 are refused rather than decoded to U+FFFD.
  // JSON: an empty body is an empty object (existing clients send it so); anything unparsable is 400.
  app.removeContentTypeParser(['application/json']);
  app.addContentTypeParser(
    /^application\/([\w.+-]+\+)?json/,
    { parseAs: 'buffer' },
    bodyParser((bytes) => {
      const text = utf8Body(bytes);
      return text.trim() === '' ? {} : parseJsonBody(text);
    }),
  );
  // PEM, CSR and certificate uploads arrive as text in several content types.
  app.addContentTypeParser(
    [
      'text/plain',
      'application/x-pem-file',
      'application/pkcs10',
      'application/x-x509-user-cert',
      'application/pkcs7',
      'application/jwt',
    ],
    { parseAs: 'buffer' },
    bodyParser(utf8Body),
  );

  app.setErrorHandler(errorHandler);
  opts.metrics?.instrument(app);
  if (opts.onSend) app.addHook('onSend', opts.onSend);
  answerAfterReplicas(app, opts.ctx.db);

  const connections = applyConnectionLimits(app.server, limits);
  // Shutdown already cuts open requests (forceCloseConnections); sockets still in their handshake go too.
  app.addHook('preClose', async () => connections.destroyAll());
  drainUnreadBodies(
    app,
    { maxBytes: DRAIN_LIMIT, requestTimeoutMs: limits.requestTimeoutMs, idleMs: limits.headersTimeoutMs },
    draining,
  );

  // CORS only for the configured origins (docs/decisions.md, "CORS"): with credentials allowed, echoing any
  // origin would let any web page drive a browser's client certificate or session.
  const allowedOrigins = new Set(opts.corsAllowedOrigins ?? []);
  const corsAllowed = (origin: string | undefined): origin is string =>
    origin !== undefined && allowedOrigins.has(origin);
  // No origins configured (the default): no hook at all on the request path.
  if (allowedOrigins.size > 0) {
    app.addHook('onRequest', (req, reply, done) => {
      if (req.headers.origin !== undefined) {
        reply.header('vary', 'origin');
        if (corsAllowed(req.headers.origin))
          reply
            .header('access-control-allow-origin', req.headers.origin)
            .header('access-control-allow-credentials', 'true')
            .header(
              'access-control-expose-headers',
              'zt-session, svc-session, expiration-seconds, expires-at, auth-request-id, totp-required, www-authenticate',
            );
      }
      done();
    });
  }
  app.options('/*', async (req, reply) => {
    if (corsAllowed(req.headers.origin)) {
      reply
        .header('access-control-allow-methods', 'GET, POST, PUT, PATCH, DELETE, OPTIONS')
        .header(
          'access-control-allow-headers',
          'content-type, accept, authorization, zt-session, svc-session, mfa-validation-code',
        )
        .header('access-control-max-age', '600');
    }
    return reply.code(200).send();
  });

  const routes: RouteDef[] = [];
  const specs = new Map<ApiName, unknown>();
  const specFor = (api: ApiName) => {
    if (!specs.has(api)) specs.set(api, buildOpenApi(api, routes, opts.deps.version));
    return specs.get(api);
  };
  routes.push(...allRoutes(specFor));
  registerRoutes(app, opts.ctx, opts.deps, routes, opts.eventSource);

  // The version record is also served at the root, outside both API prefixes.
  app.get('/version', async (_req, reply) =>
    reply.type('application/json').send({ data: versionRecord({ deps: opts.deps, ctx: opts.ctx }), meta: baseMeta() }),
  );

  // The OpenID provider (issue 23), in a scope of its own; `/version` advertises it (routes/info.ts).
  if (opts.ctx.pki) registerOidcProvider(app, opts.ctx, opts.deps);

  // Load balancers and orchestrators ask here, anonymously (docs/decisions.md, "Metrics and health").
  registerHealthRoute(app, opts.ctx);
  if (opts.metrics && opts.serveMetrics) registerMetricsRoute(app, opts.metrics);

  // Unknown route: 404, or 405 when the path exists under another method (parity: §3.4).
  const patterns = routes.flatMap((r) =>
    r.apis.map((api) => ({
      method: r.method,
      re: new RegExp(
        '^' +
          (API_PREFIX[api] + r.path)
            .replace(/\/+$/, '')
            .replace(/[.]/g, '\\.')
            .replace(/\{\w+\}/g, '[^/]+') +
          '/?$',
      ),
    })),
  );
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0]!.replace(/\/{2,}/g, '/');
    const other = patterns.some((p) => p.re.test(path) && p.method !== req.method);
    sendError(reply, other ? new DomainError('METHOD_NOT_ALLOWED') : new DomainError('NOT_FOUND'));
  });

  return { app, routes };
}

/** A content-type parser from a function of the body's bytes; what it throws is the request's error. */
function bodyParser(parse: (bytes: Buffer) => unknown) {
  return (_req: unknown, body: string | Buffer, done: (err: Error | null, body?: unknown) => void): void => {
    let parsed: unknown;
    try {
      parsed = parse(body as Buffer);
    } catch (e) {
      return done(e as Error, undefined);
    }
    done(null, parsed);
  };
}

/** The answer to a request too broken (or too slow) to reach the router. */
function clientErrorAnswer(code: string | undefined): { error: DomainError; reason: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        error: new DomainError('COULD_NOT_VALIDATE', { status: 431, message: 'The request headers are too large' }),
        reason: 'Request Header Fields Too Large',
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        error: new DomainError('TIMEOUT', { status: 408, message: 'The request was not received in time' }),
        reason: 'Request Timeout',
      };
    default:
      return {
        error: new DomainError('COULD_NOT_VALIDATE', { status: 400, message: 'The request could not be parsed' }),
        reason: 'Bad Request',
      };
  }
}
