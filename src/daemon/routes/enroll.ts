/**
 * Enrollment by token on the Client API, anonymous (parity: docs/reference-notes.md §7.3, api-conventions §9).
 *
 * Both request generations are accepted (decisions.md, "Newer request shapes"): the token in the query or in a
 * JSON body, the CSR as a raw PEM body (`application/pkcs10`, `application/x-pem-file`, `text/plain`) or as the
 * JSON member `clientCsr` (`certCsr` for the legacy endpoint's generic body). The certificate is answered as PEM
 * unless the client asks for JSON with `Accept: application/json`. `ottca` and CA auto-enrollment take no CSR:
 * the credential is the TLS client certificate of the request.
 */
import type { FastifyRequest } from 'fastify';
import { DomainError } from '../../model/errors.js';
import {
  anyEnrollmentForToken,
  enrollOtt,
  enrollUpdb,
  type OttEnrollmentResult,
} from '../../model/services/enrollment/enrollment.js';
import { enrollCa, enrollOttCa } from '../../model/services/enrollment/ca-enrollment.js';
import { enrollRouter } from '../../model/services/enrollment/router-enrollment.js';
import { empty, ok, RAW, type Envelope } from '../http/envelope.js';
import { peerCertificates } from '../http/tls.js';
import { route, queryString, type RequestContext, type RouteDef } from '../http/route.js';

const CLIENT = ['client'] as const;
const PEM_ANSWER_RE = /application\/(x-x509-user-cert|x-pem-file)/;

const bodyObject = (body: unknown): Record<string, unknown> =>
  body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};

/** The token from the query, else from a JSON body. */
const tokenOf = (rc: RequestContext): unknown => queryString(rc.query, 'token') ?? bodyObject(rc.body).token;

/** The CSR: the raw body when it is text, else the JSON member that carries it. */
function csrOf(rc: RequestContext): unknown {
  if (typeof rc.body === 'string') return rc.body;
  const b = bodyObject(rc.body);
  return b.clientCsr ?? b.certCsr;
}

/** JSON only when asked for and no PEM type is asked for as well (decisions.md, `/enroll/ott`). */
function wantsJson(req: FastifyRequest): boolean {
  const accept = String(req.headers.accept ?? '').toLowerCase();
  return accept.includes('application/json') && !PEM_ANSWER_RE.test(accept);
}

/** The new certificate chain as PEM of `pemType`, or `{data: {cert, ca}}` (enrollmentCertsEnvelope). */
async function answerCertificate(
  rc: RequestContext,
  result: OttEnrollmentResult,
  pemType: string,
): Promise<Envelope | typeof RAW> {
  if (wantsJson(rc.req)) return ok({ cert: result.certChainPem, ca: result.caPem });
  await rc.reply.code(200).type(pemType).send(result.certChainPem);
  return RAW;
}

export const enrollRoutes: RouteDef[] = [
  route({
    apis: CLIENT,
    method: 'POST',
    path: '/enroll/ott',
    operationId: 'enrollOtt',
    tag: 'Enroll',
    access: 'anonymous',
    consumes: ['application/pkcs10', 'application/x-pem-file', 'text/plain', 'application/json'],
    produces: ['application/x-x509-user-cert', 'application/json'],
    success: 200,
    envelope: 'enrollmentCertsEnvelope',
    summary: 'Enroll an identity via one-time-token',
    async handler(rc) {
      return answerCertificate(rc, await enrollOtt(rc.ctx, tokenOf(rc), csrOf(rc)), 'application/x-x509-user-cert');
    },
  }),
  route({
    apis: CLIENT,
    method: 'POST',
    path: '/enroll/updb',
    // 0.25.6 spelled it `ernollUpdb`; the current spec (0.29.0, advertised) corrected it.
    operationId: 'enrollUpdb',
    tag: 'Enroll',
    access: 'anonymous',
    success: 200,
    envelope: 'empty',
    summary: 'Enroll an identity via one-time-token with a username and password',
    async handler(rc) {
      return ok(await enrollUpdb(rc.ctx, tokenOf(rc), rc.body));
    },
  }),
  route({
    apis: CLIENT,
    method: 'POST',
    path: '/enroll/erott',
    operationId: 'enrollErOtt',
    tag: 'Enroll',
    access: 'anonymous',
    success: 200,
    envelope: 'enrollmentCertsEnvelope',
    summary: 'Enroll an edge router with a client and a server CSR',
    async handler(rc) {
      return ok(await enrollRouter(rc.ctx, tokenOf(rc), 'erott', rc.body));
    },
  }),
  route({
    apis: CLIENT,
    method: 'POST',
    path: '/enroll/ottca',
    operationId: 'enrollOttCa',
    tag: 'Enroll',
    access: 'anonymous',
    success: 200,
    envelope: 'empty',
    summary: 'Enroll an identity via one-time-token with a pre-exchanged client certificate',
    async handler(rc) {
      await enrollOttCa(rc.ctx, tokenOf(rc), peerCertificates(rc.req));
      return empty();
    },
  }),
  route({
    apis: CLIENT,
    method: 'POST',
    path: '/enroll/ca',
    operationId: 'enrollCa',
    tag: 'Enroll',
    access: 'anonymous',
    success: 200,
    envelope: 'empty',
    summary: 'Enroll an identity with a pre-exchanged certificate',
    async handler(rc) {
      await enrollCa(rc.ctx, peerCertificates(rc.req), bodyObject(rc.body).name);
      return empty();
    },
  }),
  route({
    apis: CLIENT,
    method: 'POST',
    path: '/enroll',
    operationId: 'enroll',
    tag: 'Enroll',
    access: 'anonymous',
    consumes: ['application/pkcs10', 'application/json', 'application/x-pem-file', 'text/plain'],
    produces: ['application/x-pem-file', 'application/json'],
    success: 200,
    envelope: 'enrollmentCertsEnvelope',
    summary: 'Legacy enrollment endpoint: dispatches by the token to the method-specific enrollment',
    async handler(rc) {
      const token = tokenOf(rc);
      const method = queryString(rc.query, 'method');
      // CA auto-enrollment has no token: the certificate is the whole request.
      if (method === 'ca') {
        await enrollCa(rc.ctx, peerCertificates(rc.req), bodyObject(rc.body).name);
        return empty();
      }
      // A `method` that does not match the token's is INVALID_ENROLL_METHOD (parity: §7.3).
      const enrollment = await anyEnrollmentForToken(rc.ctx, token, method);
      switch (enrollment.method) {
        case 'erott':
        case 'trott':
          return ok(await enrollRouter(rc.ctx, token, enrollment.method, rc.body));
        case 'ott':
          return answerCertificate(rc, await enrollOtt(rc.ctx, token, csrOf(rc)), 'application/x-pem-file');
        case 'ottca':
          await enrollOttCa(rc.ctx, token, peerCertificates(rc.req));
          return empty();
        case 'updb':
          return ok(await enrollUpdb(rc.ctx, token, rc.body));
        default:
          throw new DomainError('INVALID_ENROLL_METHOD', {
            cause: {
              field: 'method',
              reason: `${enrollment.method} enrollment is not supported here`,
              value: enrollment.method,
            },
          });
      }
    },
  }),
];
