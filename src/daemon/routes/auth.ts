/**
 * Authentication and the caller's own API session, on both APIs (parity: docs/reference-notes.md §4, §5).
 */
import { Type } from '@sinclair/typebox';
import { DomainError } from '../../model/errors.js';
import { createTotpToken } from '../../model/services/oidc/bearer.js';
import {
  authenticatePassword,
  checkAuthenticateBody,
  type AuthenticateBody,
} from '../../model/services/authentication/authenticate.js';
import { authenticateCert } from '../../model/services/authentication/authenticate-cert.js';
import { startExtJwtSession, verifyExtJwtLogin } from '../../model/services/ext-jwt/ext-jwt.js';
import { noteBearerEvidence } from '../../model/services/ext-jwt/ext-jwt-secondary.js';
import { wwwAuthenticate } from '../../model/services/ext-jwt/ext-jwt-verify.js';
import { currentApiSessionDetail, deleteApiSessions } from '../../model/services/api-session/api-session.js';
import { peerCertificates } from '../http/tls.js';
import { recordAuthFailure } from '../../model/events/auth-events.js';
import { empty, ok } from '../http/envelope.js';
import { route, queryString, type RouteDef } from '../http/route.js';

const BOTH = ['client', 'management'] as const;

export const authRoutes: RouteDef[] = [
  route({
    apis: BOTH,
    method: 'POST',
    path: '/authenticate',
    operationId: 'authenticate',
    tag: 'Authentication',
    access: 'anonymous',
    success: 200,
    envelope: 'currentApiSessionDetailEnvelope',
    summary: 'Authenticate via a method supplied via a query string parameter',
    async handler(rc) {
      const method = queryString(rc.query, 'method');
      const body = (rc.body && typeof rc.body === 'object' ? rc.body : {}) as AuthenticateBody;
      checkAuthenticateBody(body);
      const { ctx } = rc;
      const ip = rc.req.ip;
      const authorization = rc.req.headers.authorization;
      // Every method is rate limited per source, passwords also per username (daemon/auth-limiter.ts). What may
      // wait on an identity provider (a bearer JWT's key) runs outside the limiter's concurrency gate.
      const limiter = rc.deps.authLimiter;
      // A bearer JWT beside a password or certificate may answer a secondary ext-JWT requirement.
      const evidence = () => noteBearerEvidence(ctx, body, authorization);
      let attempt: Promise<string>;
      switch (method) {
        case 'password': {
          const account = typeof body.username === 'string' ? `user:${body.username}` : undefined;
          attempt = limiter.attempt(ip, account, () => authenticatePassword(ctx, body, ip), evidence);
          break;
        }
        case 'cert':
          // The credential is the TLS client certificate; a JSON body may still carry envInfo/sdkInfo/configTypes.
          attempt = limiter.attempt(
            ip,
            undefined,
            () => authenticateCert(ctx, peerCertificates(rc.req), body, ip),
            evidence,
          );
          break;
        case 'ext-jwt':
          attempt = limiter.attempt(
            ip,
            undefined,
            (verified) => startExtJwtSession(ctx, verified, body, ip),
            () => verifyExtJwtLogin(ctx, authorization, body),
          );
          break;
        default:
          throw new DomainError('INVALID_AUTH_METHOD', {
            cause: { field: 'method', reason: 'method must be one of password, cert, ext-jwt', value: method ?? '' },
          });
      }
      const apiSessionId = await attempt.catch(async (e: unknown) => {
        // Every 401 of an ext-jwt login says why, as a bearer-token challenge (no token, no signer named).
        if (method === 'ext-jwt' && (e as { status?: number })?.status === 401)
          rc.reply.header('www-authenticate', wwwAuthenticate(e));
        // The failed attempt's event; failing to record it must not change the answer.
        const username = method === 'password' && typeof body.username === 'string' ? body.username : undefined;
        await recordAuthFailure(ctx, { method, username: username?.slice(0, 255), remoteAddress: ip }, e).catch(
          (err: unknown) => ctx.log.error({ err }, 'authentication event not recorded'),
        );
        throw e;
      });
      const detail = await currentApiSessionDetail(rc.ctx, apiSessionId);
      // parity: both header names carry the token so existing clients find it (decisions.md, session header)
      rc.reply.header('svc-session', detail.token as string).header('zt-session', detail.token as string);
      rc.reply
        .header('expiration-seconds', String(detail.expirationSeconds))
        .header('expires-at', String(detail.expiresAt));
      return ok(detail);
    },
  }),
  route({
    apis: BOTH,
    method: 'GET',
    path: '/current-api-session',
    operationId: 'getCurrentAPISession',
    tag: 'Current API Session',
    access: 'partial',
    success: 200,
    envelope: 'currentApiSessionDetailEnvelope',
    async handler(rc) {
      const detail = await currentApiSessionDetail(rc.ctx, rc.principal.apiSessionId);
      const oidc = rc.principal.oidc;
      if (oidc) {
        // parity: an OIDC session's token is its access JWT, and it lasts until the token's `exp` (§14.8).
        detail.token = rc.principal.token;
        const exp = Number(oidc.claims.exp);
        detail.expirationSeconds = Math.max(0, exp - Math.floor(rc.ctx.now().getTime() / 1000));
        detail.expiresAt = new Date(exp * 1000).toISOString();
      }
      return ok(detail);
    },
  }),
  route({
    apis: BOTH,
    method: 'POST',
    path: '/current-api-session/totp-token',
    operationId: 'createTotpToken',
    tag: 'Current API Session',
    access: 'session',
    body: Type.Object({ code: Type.Optional(Type.String({ maxLength: 64 })) }),
    success: 200,
    envelope: 'totpTokenEnvelope',
    async handler(rc) {
      const code = (rc.body as { code?: string } | undefined)?.code;
      const principal = rc.principal;
      // Wrong codes count per API session under the auth limiter, as every other code check (routes/mfa.ts).
      return ok(
        await rc.deps.authLimiter.attempt(rc.req.ip, `mfa:${principal.apiSessionId}`, () =>
          createTotpToken(rc.ctx, principal, code, rc.deps.advertisedUrl),
        ),
      );
    },
  }),
  route({
    apis: BOTH,
    method: 'DELETE',
    path: '/current-api-session',
    operationId: 'deleteCurrentApiSession',
    tag: 'Current API Session',
    access: 'partial',
    success: 200,
    envelope: 'empty',
    summary: 'Logout',
    async handler(rc) {
      await deleteApiSessions(rc.ctx, [rc.principal.apiSessionId]);
      return empty();
    },
  }),
];
