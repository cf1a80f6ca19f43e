/** Enrollment operations beyond CRUD on the Management API: refresh, and the enrollments of one identity. */
import { Type } from '@sinclair/typebox';
import { getRow, listEntities } from '../../model/crud.js';
import { enrollmentsOfIdentity } from '../../model/listing-scopes.js';
import { renderRecord } from '../../model/render.js';
import { enrollments } from '../../model/resources/enrollment.js';
import { identities } from '../../model/resources/identity.js';
import { refreshEnrollment } from '../../model/services/enrollment/enrollment.js';
import { created, listOf } from '../http/envelope.js';
import { route, type RouteDef } from '../http/route.js';
import { listOptions } from './crud.js';

const MGMT = ['management'] as const;

export const enrollmentRoutes: RouteDef[] = [
  route({
    apis: MGMT,
    method: 'POST',
    path: '/enrollments/{id}/refresh',
    operationId: 'refreshEnrollment',
    tag: 'Enrollment',
    access: 'admin',
    body: Type.Object({ expiresAt: Type.String() }, { additionalProperties: true }),
    success: 200,
    envelope: 'createEnvelope',
    summary: "Refreshes an enrollment record's expiration window",
    async handler(rc) {
      await refreshEnrollment(rc.ctx, rc.params.id, (rc.body as { expiresAt: string }).expiresAt);
      // parity: 200 with a createEnvelope pointing at the enrollment (docs/reference-notes.md §3.2)
      return { ...created(rc.params.id, enrollments.name), status: 200 };
    },
  }),
  route({
    apis: MGMT,
    method: 'GET',
    path: '/identities/{id}/enrollments',
    operationId: 'getIdentityEnrollments',
    tag: 'Identity',
    access: 'admin',
    success: 200,
    envelope: 'listEnrollmentsEnvelope',
    async handler(rc) {
      await getRow(rc.ctx, identities, rc.params.id);
      const page = await listEntities(rc.ctx, enrollments, listOptions(rc), enrollmentsOfIdentity(rc.params.id));
      return listOf(
        page.rows.map((r) => renderRecord(enrollments, r)),
        page,
      );
    },
  }),
];
