/**
 * Route declarations. Every operation is declared once, with `route()`, with its API, method, path,
 * operationId, access and body schema; the same declarations register the Fastify routes and generate the
 * OpenAPI documents, so the published specs always match what is served.
 */
import type { TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { userInfo } from 'node:os';
import { withActor, type Ctx, type EventActor } from '../../model/ctx.js';
import { DomainError } from '../../model/errors.js';
import type { Principal } from '../../model/services/api-session/api-session.js';
import { resolveToken, resolveTokenNow } from '../../model/services/api-session/api-session.js';
import { withSecondaryExtJwt } from '../../model/services/ext-jwt/ext-jwt-secondary.js';
import { BearerRefusal, wwwAuthenticate } from '../../model/services/ext-jwt/ext-jwt-verify.js';
import { baseMeta, encodedEnvelope, RAW, type Envelope } from './envelope.js';
import { checkQueryEncoding } from './query-encoding.js';
import { JsonText } from '../../model/json-text.js';
import type { DaemonDeps } from '../deps.js';
import { API_PREFIX, type ApiName } from '../../model/api-prefixes.js';
import { storeFresh } from '../../model/store.js';
import { bearerTokens, looksLikeAccessToken, resolveBearer } from '../../model/services/oidc/bearer.js';
import { peerFingerprint } from './tls.js';

// The prefixes are the model's, shared with the CLI (one list).
export { API_PREFIX, type ApiName };

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * anonymous: no session needed; session: a fully authenticated API session; partial: also a session
 * with outstanding secondary-factor queries (parity: §4.4); admin: a full session of an admin identity.
 */
export type RouteAccess = 'anonymous' | 'session' | 'partial' | 'admin';

/** The principal a route's handler sees: every access but `anonymous` admits authenticated requests only. */
export type PrincipalOf<A extends RouteAccess> = A extends 'anonymous' ? Principal | undefined : Principal;

/** The parameter names of a path template: `/identities/{id}/policy-advice/{serviceId}` → `id` | `serviceId`. */
export type PathParamNames<P extends string> = P extends `${string}{${infer N}}${infer Rest}`
  ? N | PathParamNames<Rest>
  : never;

/** The path parameters of a template, each present; a path known only as `string` gives no names. */
export type PathParams<P extends string> = string extends P
  ? Record<string, string>
  : { readonly [K in PathParamNames<P>]: string };

/**
 * What a handler gets. `Who` and `Params` are what the route's declaration guarantees (see `route`); helpers
 * that need a caller take `RequestContext<Principal>`.
 */
export interface RequestContext<
  Who extends Principal | undefined = Principal | undefined,
  Params extends Record<string, string> = Record<string, string>,
> {
  ctx: Ctx;
  deps: DaemonDeps;
  principal: Who;
  req: FastifyRequest;
  reply: FastifyReply;
  params: Params;
  query: Record<string, string | string[] | undefined>;
  body: unknown;
  api: ApiName;
}

/** The context of a route with this access and path template. */
export type RouteContext<A extends RouteAccess, P extends string> = RequestContext<PrincipalOf<A>, PathParams<P>>;

export interface RouteDef {
  apis: readonly ApiName[];
  method: Method;
  /** Path below the API prefix in OpenAPI form, e.g. `/identities/{id}`. */
  path: string;
  operationId: string;
  tag: string;
  access: RouteAccess;
  body?: TSchema;
  /**
   * Content types the route accepts besides JSON. The parsers are global, so the route itself refuses any
   * other type with `INVALID_CONTENT_TYPE` (one rule for every route, docs/decisions.md "Content types").
   */
  consumes?: string[];
  produces?: string[];
  success: number;
  /** Name of the success envelope in the reference, for the OpenAPI document. */
  envelope?: string;
  summary?: string;
  handler(rc: RequestContext): Promise<Envelope | typeof RAW>;
}

/** A route as declared: its handler's context follows from its access and path (see `route`). */
export interface RouteSpec<A extends RouteAccess, P extends string> extends Omit<
  RouteDef,
  'access' | 'path' | 'handler'
> {
  access: A;
  path: P;
  handler(rc: RouteContext<A, P>): Promise<Envelope | typeof RAW>;
}

const paramNames = (path: string): string[] => [...path.matchAll(/\{(\w+)\}/g)].flatMap((m) => m[1] ?? []);

/**
 * Declares a route. Its handler is typed with what the route guarantees: a principal unless the access is
 * `anonymous` (authorize() refuses the request otherwise) and every parameter of the path template (the
 * router matched them). Both are checked again per request, so a break in either is a 500, not a handler
 * running on an absent principal or parameter.
 */
export function route<A extends RouteAccess, P extends string>(spec: RouteSpec<A, P>): RouteDef {
  const names = paramNames(spec.path);
  const fits = (rc: RequestContext): rc is RouteContext<A, P> =>
    (spec.access === 'anonymous' || rc.principal !== undefined) && names.every((n) => typeof rc.params[n] === 'string');
  return {
    ...spec,
    // Not async: the handler's own promise is the answer, with no second one around it.
    handler(rc) {
      if (!fits(rc))
        return Promise.reject(
          new Error(`${spec.operationId}: request without the principal or parameters the route needs`),
        );
      return spec.handler(rc);
    },
  };
}

/** The session token of a request: `svc-session`, or `zt-session` for existing clients (decisions.md). */
export function sessionToken(req: FastifyRequest): string | undefined {
  const h = req.headers['svc-session'] ?? req.headers['zt-session'];
  return Array.isArray(h) ? h[0] : h;
}

/**
 * The request's OIDC access token, if it sends no session header and one of its bearer tokens looks like one
 * of this controller's access tokens (`zt-session`, when present, wins: parity §14.8). Other bearer tokens
 * keep their meaning (an ext-jwt login, a secondary ext-JWT).
 */
function accessToken(req: FastifyRequest): string | undefined {
  return bearerTokens(req.headers.authorization).find(looksLikeAccessToken);
}

async function authorize(ctx: Ctx, access: RouteAccess, req: FastifyRequest): Promise<Principal | undefined> {
  const token = sessionToken(req);
  const bearer = token ? undefined : accessToken(req);
  if (access === 'anonymous') {
    if (token) return (await resolveToken(ctx, token)) ?? undefined;
    return bearer ? resolveBearer(ctx, bearer, () => peerFingerprint(req)).catch(() => undefined) : undefined;
  }
  if (!token && !bearer) throw new DomainError('UNAUTHORIZED');
  let principal: Principal;
  if (bearer) {
    // Refused with `WWW-Authenticate: Bearer realm="openziti-oidc" error="expired|invalid"`.
    principal = await resolveBearer(ctx, bearer, () => peerFingerprint(req));
  } else {
    const resolved = await resolveToken(ctx, token!);
    if (!resolved) throw new DomainError('UNAUTHORIZED');
    // A secondary ext-JWT requirement is met per request, by its bearer token (model/services/ext-jwt/ext-jwt-secondary.ts).
    principal = await withSecondaryExtJwt(ctx, resolved, req.headers.authorization);
  }
  if (access !== 'partial' && principal.authQueries.length > 0) {
    // Missing or refused secondary bearer JWT: the 401 says which, as the ext-jwt login's do.
    if (principal.extJwtRefusal) throw new BearerRefusal(principal.extJwtRefusal, 'UNAUTHORIZED');
    throw new DomainError('UNAUTHORIZED');
  }
  // parity: a non-admin on an admin operation is 401, not 403 (docs/reference-notes.md §3.4)
  if (access === 'admin' && !principal.identity.isAdmin) throw new DomainError('UNAUTHORIZED');
  return principal;
}

/**
 * What `authorize` answers for a request whose session token the principal cache alone decides (the warm
 * path: no promise, no await); undefined when `authorize` must run (a miss, expiry, activity to record, a
 * partial session, a non-admin on an admin route: each refused or answered there).
 */
function authorizeNow(ctx: Ctx, access: RouteAccess, req: FastifyRequest): Principal | undefined {
  const token = sessionToken(req);
  const principal = token ? resolveTokenNow(ctx, token) : undefined;
  if (access === 'admin' && !principal?.identity.isAdmin) return undefined;
  return principal;
}

const JSON_MEDIA_TYPE = /^application\/([\w.+-]+\+)?json$/;

/** Refuses a body whose content type the route does not take (a PEM type on a JSON-only route). */
function checkContentType(r: RouteDef, req: FastifyRequest): void {
  if (req.body === undefined) return;
  const header = req.headers['content-type'];
  const mediaType = (header ?? '').split(';')[0]!.trim().toLowerCase();
  if (mediaType === '' || JSON_MEDIA_TYPE.test(mediaType) || r.consumes?.includes(mediaType)) return;
  throw new DomainError('INVALID_CONTENT_TYPE');
}

const principals = new WeakMap<FastifyRequest, Principal | undefined>();

const toFastifyPath = (p: string) => p.replace(/\{(\w+)\}/g, ':$1');

/** The operating-system user running the offline CLI, as its events name it (unknown where it cannot be read). */
function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/** Who makes a request's changes and from where, for the events they record (model/events/). */
function actorOf(
  req: FastifyRequest,
  method: Method,
  api: ApiName,
  principal: Principal | undefined,
  source: 'rest' | 'offline',
): EventActor {
  const author = principal && {
    type: 'identity' as const,
    id: principal.identity.id,
    name: principal.identity.name,
    apiSessionId: principal.apiSessionId,
  };
  const from: EventActor['source'] =
    source === 'offline'
      ? { type: 'offline', api, method, osUser: osUser() }
      : { type: 'rest', api, auth: 'edge', remoteAddr: req.ip, method };
  // Two literals, not a spread of the author: a spread followed by a key is slow (copyOf in model/row.ts).
  return author ? { author, source: from } : { source: from };
}

/**
 * Registers declared routes on the server, for each API they belong to. `eventSource` is what events name as
 * the source of the changes made through them.
 */
export function registerRoutes(
  app: FastifyInstance,
  ctx: Ctx,
  deps: DaemonDeps,
  routes: readonly RouteDef[],
  eventSource: 'rest' | 'offline' = 'rest',
): void {
  for (const r of routes) {
    // Fastify reads no body for a GET.
    const bodyless = r.method === 'GET';
    for (const api of r.apis) {
      app.route({
        method: r.method,
        url: API_PREFIX[api] + toFastifyPath(r.path),
        schema: r.body ? { body: r.body } : undefined,
        // Authorise before the body is read or validated: an anonymous caller learns nothing from a 400.
        onRequest: (req, reply, done) => {
          // Other replicas' committed writes reach this one's caches before anything is read from them.
          const fresh = storeFresh(ctx.db);
          const known = fresh ? undefined : authorizeNow(ctx, r.access, req);
          if (known) {
            principals.set(req, known);
            if (!bodyless) return done();
            try {
              checkQueryEncoding(req.url);
            } catch (e) {
              return done(e as Error);
            }
            return done();
          }
          void (async () => {
            if (fresh) await fresh;
            principals.set(req, await authorize(ctx, r.access, req));
            if (bodyless) checkQueryEncoding(req.url);
          })().then(
            () => done(),
            (e: Error) => {
              if (e instanceof BearerRefusal) reply.header('www-authenticate', wwwAuthenticate(e));
              done(e);
            },
          );
        },
        // After parsing, before schema validation: a wrong type is named as such, not as a bad body. A GET has
        // no body (Fastify reads none): its query is checked once authorised, with no hook of its own.
        ...(!bodyless && {
          preValidation: (req: FastifyRequest, _reply: FastifyReply, done: (e?: Error) => void) => {
            try {
              checkContentType(r, req);
              checkQueryEncoding(req.url);
              done();
            } catch (e) {
              done(e as Error);
            }
          },
        }),
        handler: async (req, reply) => {
          const principal = principals.get(req);
          // Reads record nothing: only a writing request carries its actor (one object, no statement).
          const rctx = r.method === 'GET' ? ctx : withActor(ctx, actorOf(req, r.method, api, principal, eventSource));
          if (principal) {
            // The session's lifetime after this request's activity (parity: §4.1 response headers). Set before
            // the handler runs: some answer by themselves (the default client service page), and some set
            // their own values (authenticate).
            reply.header('expiration-seconds', String(Math.round(ctx.settings.sessionTimeoutMs / 1000)));
            reply.header('expires-at', new Date(ctx.now().getTime() + ctx.settings.sessionTimeoutMs).toISOString());
          }
          const result = await r.handler({
            ctx: rctx,
            deps,
            principal,
            req,
            reply,
            params: (req.params ?? {}) as Record<string, string>,
            query: (req.query ?? {}) as Record<string, string | string[] | undefined>,
            body: req.body,
            api,
          });
          if (result === RAW) return reply;
          reply.code(result.status ?? 200).type('application/json');
          // Data encoded already (model/json-text.ts) goes into the envelope as text, not serialised again.
          if (result.data instanceof JsonText) return reply.send(encodedEnvelope(result.data, result.meta));
          return reply.send({ data: result.data, meta: { ...baseMeta(), ...result.meta } });
        },
      });
    }
  }
}

/** One string query parameter (the first when repeated). */
export const queryString = (q: RequestContext['query'], name: string): string | undefined => {
  const v = q[name];
  return Array.isArray(v) ? v[0] : v;
};

/** A repeated query parameter as an array. */
export const queryArray = (q: RequestContext['query'], name: string): string[] => {
  const v = q[name];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
};
