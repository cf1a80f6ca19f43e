/**
 * Router certificate operations (parity: docs/reference-notes.md §7.2, §7.6): extension on the Client API,
 * authenticated by the router's current client certificate over TLS (no API session), and edge router
 * re-enrollment on the Management API. Enrollment itself is in enroll.ts (`/enroll/erott`, legacy `/enroll`).
 */
import { extendRouter, reEnrollEdgeRouter } from '../../model/services/enrollment/router-enrollment.js';
import { empty, ok } from '../http/envelope.js';
import { peerCertificates } from '../http/tls.js';
import { route, type RouteDef } from '../http/route.js';

export const routerEnrollmentRoutes: RouteDef[] = [
  route({
    apis: ['client'],
    method: 'POST',
    path: '/enroll/extend/router',
    operationId: 'extendRouterEnrollment',
    tag: 'Enroll',
    access: 'anonymous',
    success: 200,
    envelope: 'enrollmentCertsEnvelope',
    summary: 'Issues new certificates to a router presenting its current client certificate; the old one stops working',
    async handler(rc) {
      return ok(await extendRouter(rc.ctx, peerCertificates(rc.req), rc.body));
    },
  }),
  route({
    apis: ['management'],
    method: 'POST',
    path: '/edge-routers/{id}/re-enroll',
    operationId: 'reEnrollEdgeRouter',
    tag: 'Edge Router',
    access: 'admin',
    success: 200,
    envelope: 'empty',
    summary: 'Re-enroll an edge router: its certificate is dropped and a new enrollment JWT issued',
    async handler(rc) {
      await reEnrollEdgeRouter(rc.ctx, rc.params.id);
      return empty();
    },
  }),
];
