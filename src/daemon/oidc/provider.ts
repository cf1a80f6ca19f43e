/**
 * The OpenID provider at `/oidc` on the controller's listener (issue 23; docs/reference-notes.md §14.1–§14.7): discovery, keys,
 * authorize, the password login, the callback, the token endpoint, userinfo, revoke and end_session. Its endpoints speak OAuth and the
 * reference's login protocol, not the REST APIs' envelope: they are one Fastify scope of their own, with a form
 * parser and an error handler that answers each endpoint's shape (http.ts).
 *
 * `/version` advertises it (routes/info.ts, `edge.oidc.advertise`): current SDKs and the console switch to it then.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Ctx } from '../../model/ctx.js';
import { DomainError } from '../../model/errors.js';
import { requirePki } from '../../model/pki.js';
import { storeFresh } from '../../model/store.js';
import { checkPassword } from '../../model/services/authentication/authenticate.js';
import { checkCertLogin } from '../../model/services/authentication/authenticate-cert.js';
import { checkExtJwtLogin, verifyExtJwtLogin } from '../../model/services/ext-jwt/ext-jwt.js';
import { noteBearerEvidence } from '../../model/services/ext-jwt/ext-jwt-secondary.js';
import {
  finishLogin,
  finishPasswordLogin,
  issueCode,
  openAuthRequest,
  passTotpStep,
  pendingQueries,
  startAuthorization,
  type LoginBody,
} from '../../model/services/oidc/auth-requests.js';
import { tokenGrant } from '../../model/services/oidc/token-grants.js';
import { deleteInLogin, enrollInLogin, verifyInLogin } from '../../model/services/oidc/login-enrollment.js';
import { bearerTokens, OIDC_REALM, resolveBearer } from '../../model/services/oidc/bearer.js';
import { endSession, revokeToken } from '../../model/services/oidc/logout.js';
import { loginCsr } from '../../model/services/oidc/session-certs.js';
import { recordOidcStepFailure, type OidcStep } from '../../model/services/oidc/login-events.js';
import { BearerRefusal, wwwAuthenticate } from '../../model/services/ext-jwt/ext-jwt-verify.js';
import type { AuthQuery } from '../../model/services/authentication/auth-queries.js';
import type { DaemonDeps } from '../deps.js';
import { peerCertificates, peerFingerprint } from '../http/tls.js';
import { fingerprintDer } from '../../pki/index.js';
import {
  bodyObject,
  oidcParams,
  parseForm,
  redirect,
  requireFormOrJson,
  sendOidcError,
  type OidcErrorShape,
} from './http.js';
import { Issuers } from './issuer.js';

export const OIDC_PREFIX = '/oidc';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The error shape of an OIDC endpoint (oidc/http.ts). */
    oidcErrors?: OidcErrorShape;
  }
}

/** The discovery document (docs/reference-notes.md §14.1): absolute URLs under the request's issuer. */
function discovery(issuer: string, alg: string): Record<string, unknown> {
  const at = (path: string) => `${issuer}/${path}`;
  return {
    issuer,
    authorization_endpoint: at('authorize'),
    token_endpoint: at('oauth/token'),
    userinfo_endpoint: at('userinfo'),
    revocation_endpoint: at('revoke'),
    end_session_endpoint: at('end_session'),
    jwks_uri: at('keys'),
    scopes_supported: ['openid', 'profile', 'email', 'phone', 'address', 'offline_access'],
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:token-exchange'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [alg],
    request_uri_parameter_supported: false,
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    claims_supported: [
      'sub',
      'aud',
      'exp',
      'iat',
      'iss',
      'auth_time',
      'nonce',
      'amr',
      'at_hash',
      'scopes',
      'client_id',
      'azp',
      'name',
    ],
    code_challenge_methods_supported: ['S256'],
    ui_locales_supported: ['en'],
    openziti_endpoints: {
      password: at('login/password'),
      cert: at('login/cert'),
      ext_jwt: at('login/ext-jwt'),
      totp: at('login/totp'),
      totp_enroll: at('login/totp/enroll'),
      totp_enroll_verify: at('login/totp/enroll/verify'),
      auth_queries: at('login/auth-queries'),
    },
  };
}

/** The auth request id of a login request: body `id`, else query `authRequestID`, else query `id` (§14.4). */
function authRequestId(req: FastifyRequest): string | undefined {
  const body = bodyObject(req).id;
  const q = (req.query ?? {}) as Record<string, unknown>;
  const pick = (v: unknown) =>
    typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : undefined;
  return pick(body) ?? pick(q.authRequestID) ?? pick(q.id);
}

/** The login body's fields (§14.4), from JSON or from the form's flat names. */
function loginBody(req: FastifyRequest): LoginBody & { username?: unknown; password?: unknown } {
  const b = bodyObject(req);
  const flat = (prefix: string, names: string[]): Record<string, string> | undefined => {
    const out: Record<string, string> = {};
    for (const n of names) {
      const v = b[prefix + n[0]!.toUpperCase() + n.slice(1)];
      if (typeof v === 'string') out[n] = v;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  };
  const configTypes = Array.isArray(b.configTypes)
    ? b.configTypes
    : typeof b.configTypes === 'string'
      ? [b.configTypes]
      : [];
  return {
    username: b.username,
    password: b.password,
    configTypes: configTypes.slice(0, 100),
    envInfo: b.envInfo ?? flat('env', ['arch', 'os', 'osRelease', 'osVersion', 'domain', 'hostname']),
    sdkInfo: b.sdkInfo ?? flat('sdk', ['appId', 'appVersion', 'branch', 'revision', 'type', 'version']),
  };
}

/**
 * The login body with its `csrPem` checked (a CSR to sign at the code exchange; refused with 400
 * COULD_NOT_PROCESS_CSR before the credentials are looked at).
 */
async function primaryLoginBody(req: FastifyRequest): Promise<ReturnType<typeof loginBody>> {
  return { ...loginBody(req), csrPem: await loginCsr(bodyObject(req).csrPem) };
}

/** A login step's answer: the callback when every factor is done, else the queries still due (§14.4). */
function loginAnswer(reply: FastifyReply, issuer: string, id: string, queries: AuthQuery[]): FastifyReply {
  if (queries.length === 0) return redirect(reply, `${issuer}/authorize/callback?id=${encodeURIComponent(id)}`);
  if (queries.some((q) => q.typeId === 'TOTP')) reply.header('totp-required', 'true');
  return reply.code(200).header('cache-control', 'no-store').type('application/json').send({ authQueries: queries });
}

const LOGIN_PAGE_TEXT: Record<string, string> = {
  cert: 'POST to this URL with a TLS client certificate to log in\n',
  'ext-jwt': 'POST to this URL with an Authorization: Bearer <JWT> header to log in\n',
};

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function passwordPage(id: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Log in</title></head><body>
<form method="post"><input type="hidden" name="id" value="${escapeHtml(id)}">
<label>Username <input name="username" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Log in</button></form></body></html>\n`;
}

/** Registers the provider's scope on `app` (the controller's listener). */
export function registerOidcProvider(app: FastifyInstance, ctx: Ctx, deps: DaemonDeps): void {
  // The issuer each request is served under, set by the scope's first hook.
  const issuers = new WeakMap<FastifyRequest, string>();
  const issuerOf = (req: FastifyRequest): string => issuers.get(req)!;
  const boundPort = (): number => {
    const a = app.server.address();
    return a && typeof a === 'object' ? a.port : 0;
  };
  const advertised = (): URL | undefined => {
    try {
      return deps.advertisedUrl ? new URL(deps.advertisedUrl) : undefined;
    } catch {
      return undefined;
    }
  };
  const issuerSet = new Issuers(
    () => [...(ctx.pki?.serverHosts ?? []), ...(advertised() ? [advertised()!.hostname] : [])],
    () => [boundPort(), Number(advertised()?.port || 443)],
  );

  // Who asks for a revocation or a logout, as the events of its changes name it (the token's holder, unnamed).
  const oidcActor = (req: FastifyRequest): Ctx => ({
    ...ctx,
    actor: { source: { type: 'rest', api: 'oidc', remoteAddr: req.ip, method: req.method } },
  });

  void app.register(
    async (scope) => {
      scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (_req, body, done) => {
        try {
          done(null, parseForm(new TextDecoder('utf-8', { fatal: true }).decode(body as Buffer)));
        } catch {
          done(new DomainError('COULD_NOT_PARSE_BODY'), undefined);
        }
      });
      scope.setErrorHandler((err, req, reply) => {
        if (sendOidcError(err, req.routeOptions.config.oidcErrors ?? 'login', reply)) return;
        req.log.error({ err, requestId: req.id }, 'unhandled error');
        sendOidcError(new DomainError('UNHANDLED'), req.routeOptions.config.oidcErrors ?? 'login', reply);
      });
      scope.addHook('onRequest', async (req, reply) => {
        const fresh = storeFresh(ctx.db);
        if (fresh) await fresh;
        const issuer = issuerSet.of(req);
        // parity: a Host that names no issuer of this controller is not served (§14.1).
        if (!issuer) return reply.code(404).type('text/plain; charset=utf-8').send('404 page not found\n');
        issuers.set(req, issuer);
      });

      scope.get('/.well-known/openid-configuration', async (req, reply) =>
        reply.type('application/json').send(discovery(issuerOf(req), requirePki(ctx).controllerJwt.alg)),
      );
      scope.get('/keys', async (_req, reply) =>
        reply
          .header('cache-control', 'max-age=300')
          .type('application/json')
          .send(await requirePki(ctx).controllerJwt.jwks()),
      );

      const authorize = async (req: FastifyRequest, reply: FastifyReply) => {
        if (req.method === 'POST') requireFormOrJson(req);
        const params = oidcParams(req);
        const { id, loginPage } = await startAuthorization(ctx, params.one, params.all('configTypes'), {
          remoteAddress: `${req.ip}:${req.socket.remotePort ?? 0}`,
          hasClientCert: peerCertificates(req) !== undefined,
          controllerId: deps.controllerId,
        });
        // A relative URL on this controller (§14.3): clients follow it and read `auth-request-id`.
        return redirect(reply, `${OIDC_PREFIX}/${loginPage}?authRequestID=${encodeURIComponent(id)}`);
      };
      scope.get('/authorize', { config: { oidcErrors: 'authorize' } }, authorize);
      scope.post('/authorize', { config: { oidcErrors: 'authorize' } }, authorize);

      scope.get('/authorize/callback', { config: { oidcErrors: 'authorize' } }, async (req, reply) =>
        redirect(reply, await issueCode(ctx, authRequestId(req))),
      );

      for (const page of ['username', 'password', 'cert', 'ext-jwt']) {
        scope.get(`/login/${page}`, async (req, reply) => {
          const request = await openAuthRequest(ctx, authRequestId(req));
          reply.header('auth-request-id', request.id).header('cache-control', 'no-store');
          if (page === 'username' || page === 'password')
            return reply.type('text/html; charset=utf-8').send(passwordPage(request.id));
          return reply.type('text/plain; charset=utf-8').send(LOGIN_PAGE_TEXT[page]);
        });
      }

      /**
       * Runs a login step; a refusal records the step's failure event (login-events.ts) before it is answered.
       * Malformed requests (a body type the step does not take) are not attempts.
       */
      const audited = async <T>(
        req: FastifyRequest,
        step: OidcStep,
        run: () => Promise<T>,
        username?: unknown,
      ): Promise<T> => {
        requireFormOrJson(req);
        try {
          return await run();
        } catch (e) {
          await recordOidcStepFailure(
            ctx,
            { step, remoteAddress: req.ip, username: typeof username === 'string' ? username : undefined },
            e,
          );
          throw e;
        }
      };

      const passwordLogin = async (req: FastifyRequest, reply: FastifyReply) => {
        const body = loginBody(req);
        const queries = await audited(
          req,
          'password',
          async () => {
            const request = await openAuthRequest(ctx, authRequestId(req));
            body.csrPem = await loginCsr(bodyObject(req).csrPem);
            const account = typeof body.username === 'string' ? `user:${body.username}` : undefined;
            // The legacy login's limits apply (daemon/auth-limiter.ts); a bearer JWT beside the password may
            // answer a secondary ext-JWT requirement, as on `POST /authenticate`.
            const target = await deps.authLimiter.attempt(
              req.ip,
              account,
              () => checkPassword(ctx, body),
              () => noteBearerEvidence(ctx, body, req.headers.authorization),
            );
            return { request, queries: await finishPasswordLogin(ctx, request, target, body, req.ip) };
          },
          body.username,
        );
        return loginAnswer(reply, issuerOf(req), queries.request.id, queries.queries);
      };
      scope.post('/login/username', passwordLogin);
      scope.post('/login/password', passwordLogin);

      // The credential is this request's TLS client certificate (§14.4).
      scope.post('/login/cert', async (req, reply) => {
        const { request, queries } = await audited(req, 'cert', async () => {
          const request = await openAuthRequest(ctx, authRequestId(req));
          const body = await primaryLoginBody(req);
          const peer = peerCertificates(req);
          const queries = await deps.authLimiter.attempt(
            req.ip,
            undefined,
            () =>
              finishLogin(
                ctx,
                request,
                'cert',
                // The tokens are bound to the certificate this login presented (z_cfs, z_acf).
                async (tctx) => ({
                  ...(await checkCertLogin(tctx, peer)),
                  certFingerprint: fingerprintDer(peer!.leaf),
                }),
                body,
                req.ip,
              ),
            () => noteBearerEvidence(ctx, body, req.headers.authorization),
          );
          return { request, queries };
        });
        return loginAnswer(reply, issuerOf(req), request.id, queries);
      });

      // The credential is the `Authorization: Bearer` JWT of an external signer (§14.4).
      scope.post('/login/ext-jwt', async (req, reply) => {
        try {
          const { request, queries } = await audited(req, 'ext-jwt', async () => {
            const request = await openAuthRequest(ctx, authRequestId(req));
            const body = await primaryLoginBody(req);
            const queries = await deps.authLimiter.attempt(
              req.ip,
              undefined,
              (verified) =>
                finishLogin(ctx, request, 'ext-jwt', (tctx) => checkExtJwtLogin(tctx, verified), body, req.ip),
              () => verifyExtJwtLogin(ctx, req.headers.authorization, body),
            );
            return { request, queries };
          });
          return loginAnswer(reply, issuerOf(req), request.id, queries);
        } catch (e) {
          // Every 401 says why, as a bearer-token challenge (as `POST /authenticate?method=ext-jwt`).
          if ((e as { status?: number })?.status === 401) reply.header('www-authenticate', wwwAuthenticate(e));
          throw e;
        }
      });

      scope.post('/login/totp', async (req, reply) => {
        const id = authRequestId(req);
        const queries = await audited(req, 'totp', async () => {
          if (id !== undefined && id.length > 40)
            throw new DomainError('INVALID TOTP CODE', { audit: { reason: 'unknown auth request' } });
          const code = bodyObject(req).code;
          // Wrong codes are limited per login as the legacy flow's are per API session (routes/mfa.ts).
          return deps.authLimiter.attempt(req.ip, `mfa:oidc:${id ?? ''}`, () =>
            passTotpStep(ctx, id, typeof code === 'string' ? code : undefined, req.ip),
          );
        });
        return loginAnswer(reply, issuerOf(req), id!, queries);
      });

      // TOTP enrollment inside a login (§14.4); code checks are limited per login as the TOTP step's.
      const enrollLimited = <T>(req: FastifyRequest, run: () => Promise<T>) =>
        deps.authLimiter.attempt(req.ip, `mfa:oidc:${authRequestId(req) ?? ''}`, run);
      const codeOf = (req: FastifyRequest) => {
        const code = bodyObject(req).code;
        return typeof code === 'string' ? code : undefined;
      };
      scope.post('/login/totp/enroll', async (req, reply) => {
        requireFormOrJson(req);
        const detail = await enrollInLogin(ctx, authRequestId(req));
        return reply.code(201).header('cache-control', 'no-store').type('application/json').send(detail);
      });
      scope.post('/login/totp/enroll/verify', async (req, reply) => {
        const id = authRequestId(req);
        const queries = await audited(req, 'totp', () =>
          enrollLimited(req, () => verifyInLogin(ctx, id, codeOf(req), req.ip)),
        );
        return loginAnswer(reply, issuerOf(req), id!, queries);
      });
      scope.delete('/login/totp/enroll', async (req, reply) => {
        requireFormOrJson(req);
        await enrollLimited(req, () => deleteInLogin(ctx, authRequestId(req), codeOf(req)));
        return reply.code(200).type('application/json').send({});
      });

      scope.get('/login/auth-queries', async (req, reply) => {
        let queries: AuthQuery[];
        try {
          queries = await pendingQueries(ctx, authRequestId(req));
        } catch (e) {
          if (!(e instanceof DomainError)) throw e;
          // parity: an unknown request is a plain-text 401 here (§14.4).
          return reply.code(401).type('text/plain; charset=utf-8').send('unknown auth request\n');
        }
        if (queries.some((q) => q.typeId === 'TOTP')) reply.header('totp-required', 'true');
        return reply.header('cache-control', 'no-store').type('application/json').send({ authQueries: queries });
      });

      scope.post('/oauth/token', { config: { oidcErrors: 'oauth' } }, async (req, reply) => {
        requireFormOrJson(req);
        const answer = await tokenGrant(ctx, oidcParams(req).one, issuerOf(req), {
          remoteAddress: req.ip,
          certFingerprint: peerFingerprint(req),
          // A refresh or exchange with a CSR signs a certificate: limited as the Client API's signings are.
          limitIssuance: (apiSessionId, identityId) => deps.issuanceLimiter.take(apiSessionId, identityId),
        });
        return reply
          .header('cache-control', 'no-store')
          .header('pragma', 'no-cache')
          .type('application/json')
          .send(answer);
      });

      const userinfo = async (req: FastifyRequest, reply: FastifyReply) => {
        const token = bearerTokens(req.headers.authorization)[0];
        try {
          if (!token) throw new BearerRefusal('missing', 'UNAUTHORIZED', OIDC_REALM);
          const principal = await resolveBearer(ctx, token, () => peerFingerprint(req));
          const id = principal.identity;
          return reply
            .header('cache-control', 'no-store')
            .type('application/json')
            .send({ sub: id.id, name: id.name, ...(id.isAdmin && { z_ia: true }) });
        } catch (e) {
          if (e instanceof BearerRefusal) reply.header('www-authenticate', wwwAuthenticate(e));
          throw e;
        }
      };
      scope.get('/userinfo', userinfo);
      scope.post('/userinfo', userinfo);

      // RFC 7009: 200 whatever the token was (§14.9). The console's logout posts to `/oauth/revoke`, which the
      // reference does not serve (its refresh token then outlives the logout); served here so that logout ends it.
      const revoke = async (req: FastifyRequest, reply: FastifyReply) => {
        requireFormOrJson(req);
        await revokeToken(oidcActor(req), oidcParams(req).one.token);
        return reply.code(200).header('cache-control', 'no-store').send();
      };
      scope.post('/revoke', { config: { oidcErrors: 'oauth' } }, revoke);
      scope.post('/oauth/revoke', { config: { oidcErrors: 'oauth' } }, revoke);

      const endSessionRoute = async (req: FastifyRequest, reply: FastifyReply) => {
        if (req.method === 'POST') requireFormOrJson(req);
        return redirect(reply, await endSession(oidcActor(req), oidcParams(req).one, issuerOf(req), deps.controllerId));
      };
      scope.get('/end_session', endSessionRoute);
      scope.post('/end_session', endSessionRoute);

      // The library health endpoints clients and balancers may probe (§14.1).
      for (const path of ['/healthz', '/ready'])
        scope.get(path, async (_req, reply) => reply.type('text/plain; charset=utf-8').send('ok\n'));

      scope.get('/logged-out', async (_req, reply) =>
        reply.type('text/plain; charset=utf-8').send('You have been logged out\n'),
      );
    },
    { prefix: OIDC_PREFIX },
  );
}
