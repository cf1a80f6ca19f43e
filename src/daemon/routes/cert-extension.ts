/**
 * Extension of the caller's own certificate authenticator, on both APIs (parity: docs/reference-notes.md §7.6).
 * `extend` reads the TLS client certificate of the request: it must be the authenticator's current one.
 */
import { Type } from '@sinclair/typebox';
import {
  extendCertAuthenticator,
  verifyExtendedCertificate,
} from '../../model/services/authentication/cert-extension.js';
import { peerCertificates } from '../http/tls.js';
import { empty, ok } from '../http/envelope.js';
import { route, type RouteDef } from '../http/route.js';

const BOTH = ['client', 'management'] as const;
const TAG = 'Extend Enrollment';

export const certExtensionRoutes: RouteDef[] = [
  route({
    apis: BOTH,
    method: 'POST',
    path: '/current-identity/authenticators/{id}/extend',
    operationId: 'extendCurrentIdentityAuthenticator',
    tag: TAG,
    access: 'session',
    body: Type.Object({ clientCertCsr: Type.String() }, { additionalProperties: true }),
    success: 200,
    envelope: 'identityExtendEnrollmentEnvelope',
    summary:
      'Issues a new certificate for a certificate based authenticator; the current one stays valid until extend-verify',
    async handler(rc) {
      rc.deps.issuanceLimiter.take(rc.principal.apiSessionId, rc.principal.identity.id);
      const body = rc.body as { clientCertCsr: string };
      return ok(
        await extendCertAuthenticator(
          rc.ctx,
          rc.principal.identity.id,
          rc.params.id,
          peerCertificates(rc.req),
          body.clientCertCsr,
        ),
      );
    },
  }),
  route({
    apis: BOTH,
    method: 'POST',
    path: '/current-identity/authenticators/{id}/extend-verify',
    operationId: 'extendVerifyCurrentIdentityAuthenticator',
    tag: TAG,
    access: 'session',
    body: Type.Object({ clientCert: Type.String() }, { additionalProperties: true }),
    success: 200,
    envelope: 'empty',
    summary: 'Confirms receipt of the certificate issued by extend, which then replaces the current one',
    async handler(rc) {
      await verifyExtendedCertificate(
        rc.ctx,
        rc.principal.identity.id,
        rc.params.id,
        (rc.body as { clientCert: string }).clientCert,
      );
      return empty();
    },
  }),
];
