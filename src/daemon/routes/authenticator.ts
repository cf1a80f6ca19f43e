/** Authenticator operations beyond CRUD on the Management API: re-enroll (parity: docs/reference-notes.md §7.2). */
import { Type } from '@sinclair/typebox';
import { enrollments } from '../../model/resources/enrollment.js';
import { reEnrollAuthenticator } from '../../model/services/enrollment/re-enroll.js';
import { created } from '../http/envelope.js';
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
];
