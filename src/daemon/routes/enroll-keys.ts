/**
 * `GET /enroll/jwks` and `POST /enroll/challenge` (Client API, anonymous): the keys that sign enrollment JWTs and
 * a signature of a client's nonce by one of them, so a client holding an enrollment JWT can check that it talks
 * to the network that issued it. Both answer without an envelope, as the spec says (`jwks`, `nonceSignature`).
 */
import { Type } from '@sinclair/typebox';
import { enrollmentChallenge, enrollmentJwks } from '../../model/services/enrollment/enrollment-keys.js';
import { RAW } from '../http/envelope.js';
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
      await rc.reply
        .code(200)
        .type('application/json')
        .send(enrollmentChallenge(rc.ctx, nonce, keyId));
      return RAW;
    },
  }),
];
