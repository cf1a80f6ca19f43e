/**
 * The caller's API-session certificates on the Client API (parity: docs/reference-notes.md §4.7). `session`
 * access: a partially authenticated session (MFA outstanding) cannot obtain certificates.
 */
import { Type } from '@sinclair/typebox';
import { renderRecord } from '../../model/render.js';
import { apiSessionCerts } from '../../model/resources/api-session-cert.js';
import {
  createSessionCert,
  deleteSessionCert,
  getSessionCert,
  listSessionCerts,
} from '../../model/services/api-session/api-session-certs.js';
import { empty, listOf, ok } from '../http/envelope.js';
import { route, type RequestContext, type RouteDef } from '../http/route.js';
import type { Principal } from '../../model/services/api-session/api-session.js';
import { listOptions } from './crud.js';

const CLIENT = ['client'] as const;
const PATH = '/current-api-session/certificates';
const TAG = 'Current API Session';
const sessionOf = (rc: RequestContext<Principal>) => rc.principal.apiSessionId;

export const apiSessionCertRoutes: RouteDef[] = [
  route({
    apis: CLIENT,
    method: 'GET',
    path: PATH,
    operationId: 'listCurrentApiSessionCertificates',
    tag: TAG,
    access: 'session',
    success: 200,
    envelope: 'listCurrentApiSessionCertificatesEnvelope',
    async handler(rc) {
      const page = await listSessionCerts(rc.ctx, sessionOf(rc), listOptions(rc));
      return listOf(
        page.rows.map((r) => renderRecord(apiSessionCerts, r)),
        page,
      );
    },
  }),
  route({
    apis: CLIENT,
    method: 'POST',
    path: PATH,
    operationId: 'createCurrentApiSessionCertificate',
    tag: TAG,
    access: 'session',
    body: Type.Object({ csr: Type.String() }, { additionalProperties: true }),
    success: 201,
    envelope: 'createCurrentApiSessionCertificateEnvelope',
    summary: 'Creates an ephemeral certificate for the current API Session',
    async handler(rc) {
      rc.deps.issuanceLimiter.take(sessionOf(rc), rc.principal.identity.id);
      const issued = await createSessionCert(
        rc.ctx,
        { apiSessionId: sessionOf(rc), identityId: rc.principal.identity.id },
        (rc.body as { csr: string }).csr,
      );
      return {
        status: 201,
        data: {
          id: issued.id,
          _links: { self: { href: `./${apiSessionCerts.name}/${issued.id}` } },
          certificate: issued.certificate,
          cas: issued.cas,
        },
      };
    },
  }),
  route({
    apis: CLIENT,
    method: 'GET',
    path: `${PATH}/{id}`,
    operationId: 'detailCurrentApiSessionCertificate',
    tag: TAG,
    access: 'session',
    success: 200,
    envelope: 'detailCurrentApiSessionCertificateEnvelope',
    async handler(rc) {
      return ok(renderRecord(apiSessionCerts, await getSessionCert(rc.ctx, sessionOf(rc), rc.params.id)));
    },
  }),
  route({
    apis: CLIENT,
    method: 'DELETE',
    path: `${PATH}/{id}`,
    operationId: 'deleteCurrentApiSessionCertificate',
    tag: TAG,
    access: 'session',
    success: 200,
    envelope: 'empty',
    async handler(rc) {
      await deleteSessionCert(rc.ctx, sessionOf(rc), rc.params.id);
      return empty();
    },
  }),
];
