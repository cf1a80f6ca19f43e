/**
 * Authenticator operations beyond CRUD on the Management API: re-enroll (parity: docs/reference-notes.md §7.2) and
 * the current spec's request-extend (docs/decisions.md, "Certificate extension requests").
 */
import { Type } from '@sinclair/typebox';
import { enrollments } from '../../model/resources/enrollment.js';
import { reEnrollAuthenticator } from '../../model/services/enrollment/re-enroll.js';
import { requestCertAuthenticatorExtend } from '../../model/services/authentication/cert-extension.js';
import { created, empty } from '../http/envelope.js';
import { route, type RouteDef } from '../http/route.js';

export const authenticatorRoutes: RouteDef[] = [
  route({
    apis: ['management'],
    method: 'POST',
    path: '/authenticators/{id}/re-enroll',
    operationId: 'reEnrollAuthenticator',
    tag: 'Authenticator',
    access: 'admin',
    body: Type.Object({ expiresAt: Type.String() }, { additionalProperties: true }),
    success: 201,
    envelope: 'createEnvelope',
    summary: 'Reverts an authenticator to an enrollment',
    async handler(rc) {
      const id = await reEnrollAuthenticator(rc.ctx, rc.params.id, (rc.body as { expiresAt: string }).expiresAt);
      return created(id, enrollments.name);
    },
  }),
  route({
    apis: ['management'],
    method: 'POST',
    path: '/authenticators/{id}/request-extend',
    operationId: 'requestExtendAuthenticator',
    tag: 'Authenticator',
    access: 'admin',
    body: Type.Object({ rollKeys: Type.Optional(Type.Boolean()) }, { additionalProperties: true }),
    success: 200,
    envelope: 'empty',
    summary: "Asks an identity's clients to extend their certificate (and roll its key) at their next login",
    async handler(rc) {
      await requestCertAuthenticatorExtend(rc.ctx, rc.params.id, (rc.body as { rollKeys?: boolean }).rollKeys === true);
      return empty();
    },
  }),
];
