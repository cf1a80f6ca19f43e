/**
 * CA actions beyond CRUD on the Management API (parity: docs/reference-notes.md §7.1, §7.5; api-conventions
 * §5): verification takes the PEM as `text/plain`, the JWT is answered raw as `application/jwt`.
 */
import { caJwt, verifyCa } from '../../model/services/ca/ca.js';
import { empty, RAW } from '../http/envelope.js';
import { route, type RouteDef } from '../http/route.js';

const MGMT = ['management'] as const;

export const caRoutes: RouteDef[] = [
  route({
    apis: MGMT,
    method: 'POST',
    path: '/cas/{id}/verify',
    operationId: 'verifyCa',
    tag: 'Certificate Authority',
    access: 'admin',
    consumes: ['text/plain'],
    success: 200,
    envelope: 'empty',
    summary: 'Verify a CA with a certificate whose common name is the verification token, signed by the CA',
    async handler(rc) {
      await verifyCa(rc.ctx, rc.params.id, rc.body);
      return empty();
    },
  }),
  route({
    apis: MGMT,
    method: 'GET',
    path: '/cas/{id}/jwt',
    operationId: 'getCaJwt',
    tag: 'Certificate Authority',
    // The spec does not state admin; CAs are admin-only everywhere else, so their JWT is too (least privilege).
    access: 'admin',
    produces: ['application/jwt'],
    success: 200,
    summary: 'Retrieve the enrollment JWT for a CA',
    async handler(rc) {
      const jwt = await caJwt(rc.ctx, rc.params.id);
      await rc.reply.code(200).type('application/jwt').send(jwt);
      return RAW;
    },
  }),
];
