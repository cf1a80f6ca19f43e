/**
 * The current spec's enrollment operations (Client API, anonymous): `GET /enroll/jwks` and
 * `POST /enroll/challenge`, the keys that sign enrollment JWTs and a signature of a client's nonce by one of
 * them, so a client holding an enrollment JWT can check that it talks to the network that issued it (both answer
 * without an envelope, as the spec says: `jwks`, `nonceSignature`); and `POST /enroll/token`, enrollment with
 * an external JWT (model/services/enrollment/token-enrollment.ts).
 */
import { Type } from '@sinclair/typebox';
import { enrollmentChallenge, enrollmentJwks } from '../../model/services/enrollment/enrollment-keys.js';
import { enrollWithToken, verifyTokenEnrollment } from '../../model/services/enrollment/token-enrollment.js';
import { ok, RAW } from '../http/envelope.js';
import { route, type RouteDef } from '../http/route.js';

const UUID = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

export const enrollKeyRoutes: RouteDef[] = [
  route({
    apis: ['client'],
    method: 'GET',
    path: '/enroll/jwks',
    operationId: 'getEnrollmentJwks',
    tag: 'Enroll',
    access: 'anonymous',
    success: 200,
    envelope: 'jwks',
    summary: 'The public keys that sign enrollment JWTs, by `kid`',
    async handler(rc) {
      await rc.reply
        .code(200)
        .type('application/json')
        .send(await enrollmentJwks(rc.ctx));
      return RAW;
    },
  }),
  route({
    apis: ['client'],
    method: 'POST',
    path: '/enroll/challenge',
    operationId: 'enrollmentChallenge',
    tag: 'Enroll',
    access: 'anonymous',
    body: Type.Object(
      { nonce: Type.String({ pattern: UUID }), keyId: Type.String({ minLength: 1, maxLength: 256 }) },
      { additionalProperties: true },
    ),
    success: 200,
    envelope: 'nonceSignature',
    summary: 'Signs a nonce (a UUID) with the enrollment key `keyId`',
    async handler(rc) {
      const { nonce, keyId } = rc.body as { nonce: string; keyId: string };
      // A signature per request costs the server: limited per source like a login.
      const signed = await rc.deps.authLimiter.attempt(rc.req.ip, undefined, async () =>
        enrollmentChallenge(rc.ctx, nonce, keyId),
      );
      await rc.reply.code(200).type('application/json').send(signed);
      return RAW;
    },
  }),
  route({
    apis: ['client'],
    method: 'POST',
    path: '/enroll/token',
    operationId: 'enrollToken',
    tag: 'Enroll',
    access: 'anonymous',
    body: Type.Object({ clientCsr: Type.Optional(Type.String()) }, { additionalProperties: true }),
    success: 200,
    envelope: 'enrollmentCertsEnvelope',
    summary:
      'Enroll a new identity with an external JWT: with `clientCsr` it gets a certificate, without one it logs in ' +
      'with such tokens (`Authorization: Bearer <JWT>`; `svc-token-issuer-id` or `ziti-token-issuer-id` names the signer)',
    async handler(rc) {
      const issuer = rc.req.headers['svc-token-issuer-id'] ?? rc.req.headers['ziti-token-issuer-id'];
      const signerId = Array.isArray(issuer) ? issuer[0] : issuer;
      // Limited per source like a login (daemon/auth-limiter.ts); the token's key may be fetched outside the gate.
      const result = await rc.deps.authLimiter.attempt(
        rc.req.ip,
        undefined,
        (verified) => enrollWithToken(rc.ctx, verified, (rc.body as { clientCsr?: string }).clientCsr),
        () => verifyTokenEnrollment(rc.ctx, rc.req.headers.authorization, signerId),
      );
      return ok(result.cert === undefined ? {} : { cert: result.cert, ca: result.ca });
    },
  }),
];
