/**
 * Router enrollment (parity: docs/reference-notes.md §7.2, §7.3, §7.6): how an edge router (`erott`) or a transit
 * router (`trott`) obtains its certificates.
 *
 * - Creating a router creates its enrollment (expiry `edge.enrollment.edgeRouter.duration`); the router record
 *   shows the token and JWT until the router enrolls.
 * - Enrolling sends two CSRs: the client certificate (its CN must be the router id, so a token cannot mint a
 *   certificate naming another router) and the server certificate (SANs from the CSR). The router becomes
 *   verified with the client certificate's fingerprint; the enrollment is consumed in the same transaction.
 * - Re-enrolling an edge router forgets its certificate and issues a new enrollment.
 * - Extension (`/enroll/extend/router`): a router presenting its current client certificate over TLS gets new
 *   certificates; the old fingerprint is replaced at once.
 */
import { withTx } from '../../../store/db.js';
import {
  deleteEdgeRouterEnrollments,
  edgeRouterExists,
  enrollmentsOfRouters,
  routerIdByFingerprint,
  setRouterCertificate as storeRouterCertificate,
} from '../../../store/routers.js';
import { insertRow } from '../../../store/crud.js';
import { isPkiError, parseCsr, type IssuedCertificate } from '../../../pki/index.js';
import { iso, withDb, type Ctx } from '../../ctx.js';
import { DomainError, notFound } from '../../errors.js';
import { newEntityId } from '../../ids.js';
import { requirePki } from '../../pki.js';
import type { Row } from '../../resource.js';
import { textOf } from '../../row.js';
import { enrollments } from '../../resources/enrollment.js';
import { enrollmentCredentials, enrollmentSecrets } from '../../enrollments/credentials.js';
import { networkIssuedPeer, type PeerCertificates } from '../authentication/authenticate-cert.js';
import { anyEnrollmentForToken, consume } from './enrollment.js';
import { recordRowChange, rowBefore, type Operation } from '../../events/operation-events.js';
import { edgeRouters } from '../../resources/edge-router.js';
import { transitRouters } from '../../resources/transit-router.js';

export type RouterKind = 'edge' | 'transit';

const KINDS = {
  edge: { table: 'edge_routers', column: 'edgeRouterId', method: 'erott' },
  transit: { table: 'transit_routers', column: 'transitRouterId', method: 'trott' },
} as const;

/**
 * Creates the router's enrollment (in the caller's transaction) and returns its id. A context without a PKI
 * (pure model code, offline tools) cannot sign the JWT: the router is then created without an enrollment, and
 * `re-enroll` gives it one later. Returns undefined in that case.
 */
export async function createRouterEnrollment(
  ctx: Ctx,
  kind: RouterKind,
  routerId: string,
): Promise<string | undefined> {
  if (!ctx.pki) {
    ctx.log.warn(
      { routerId },
      'no PKI in this context: router created without an enrollment (re-enroll it to get one)',
    );
    return undefined;
  }
  const { column, method } = KINDS[kind];
  const now = ctx.now();
  const expiresAt = new Date(now.getTime() + ctx.settings.routerEnrollmentDurationMs);
  const id = newEntityId();
  await insertRow(ctx.db, enrollments, {
    id,
    createdAt: iso(now),
    updatedAt: iso(now),
    tags: {},
    method,
    expiresAt: iso(expiresAt),
    ...(await enrollmentSecrets(ctx, { id, method, subject: routerId, expiresAt })),
    [column]: routerId,
  });
  await recordRowChange(ctx, enrollments, id, 'created', 'enrollment-created', undefined);
  return id;
}

/** Sets `enrollmentToken`, `enrollmentJwt`, `enrollmentCreatedAt`, `enrollmentExpiresAt` on router records. */
export async function attachRouterEnrollments(ctx: Ctx, rows: Row[], kind: RouterKind): Promise<void> {
  if (rows.length === 0) return;
  const { column } = KINDS[kind];
  const found = await enrollmentsOfRouters(
    ctx.db,
    column,
    rows.map((r) => textOf(r, 'id')),
  );
  const byRouter = new Map(found.map((e) => [e.routerId, e]));
  for (const r of rows) {
    const e = byRouter.get(textOf(r, 'id'));
    const shown = e ? enrollmentCredentials(ctx, e) : undefined;
    r.enrollmentToken = shown?.token ?? null;
    r.enrollmentJwt = shown?.jwt ?? null;
    r.enrollmentCreatedAt = e?.createdAt ?? null;
    r.enrollmentExpiresAt = e?.expiresAt ?? null;
  }
}

/** `enrollmentCerts`: the router's client and server certificate chains and the CA bundle to trust. */
export interface RouterCerts {
  cert: string;
  serverCert: string;
  ca: string;
}

const bodyObject = (body: unknown): Record<string, unknown> =>
  body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};

/** Both CSRs, under either generation's names (`certCsr`/`serverCertCsr` or `clientCsr`/`serverCsr`). */
function routerCsrs(body: unknown): { client: string; server: string } {
  const b = bodyObject(body);
  const client = b.certCsr ?? b.clientCsr;
  const server = b.serverCertCsr ?? b.serverCsr;
  if (typeof client !== 'string' || client.trim() === '' || typeof server !== 'string' || server.trim() === '') {
    throw new DomainError('MISSING_OR_INVALID_CSR', {
      cause: { message: 'both a client CSR (certCsr) and a server CSR (serverCertCsr) are required' },
    });
  }
  return { client, server };
}

async function signRouterCsrs(
  ctx: Ctx,
  routerId: string,
  csrs: { client: string; server: string },
): Promise<{ client: IssuedCertificate; server: IssuedCertificate }> {
  const pki = requirePki(ctx);
  try {
    const client = await pki.signClientCsr(csrs.client, { id: routerId, kind: 'router', now: ctx.now() });
    const server = await pki.signServerCsr(csrs.server, { now: ctx.now() });
    return { client, server };
  } catch (e) {
    if (isPkiError(e)) throw new DomainError('COULD_NOT_PROCESS_CSR', { cause: { message: e.message } });
    throw e;
  }
}

async function setRouterCertificate(
  ctx: Ctx,
  kind: RouterKind,
  routerId: string,
  cert: IssuedCertificate | null,
  operation: Operation,
): Promise<void> {
  const def = kind === 'edge' ? edgeRouters : transitRouters;
  const before = await rowBefore(ctx, def, routerId);
  await storeRouterCertificate(ctx.db, KINDS[kind].table, routerId, cert, iso(ctx.now()));
  await recordRowChange(ctx, def, routerId, 'updated', operation, before);
}

/**
 * Uses an `erott` / `trott` token (`method`, when given, must match it). Errors: token errors as for identities;
 * a CSR missing ⇒ 400 MISSING_OR_INVALID_CSR; unusable ⇒ 400 COULD_NOT_PROCESS_CSR; a client CSR whose CN is
 * not the router id ⇒ 400 EDGE_ROUTER_ENROLL_COMMON_NAME_INVALID. A refused enrollment leaves the token usable.
 */
export async function enrollRouter(
  ctx: Ctx,
  token: unknown,
  method: 'erott' | 'trott' | undefined,
  body: unknown,
): Promise<RouterCerts> {
  const enrollment = await anyEnrollmentForToken(ctx, token, method);
  const kind: RouterKind | undefined = enrollment.edgeRouterId
    ? 'edge'
    : enrollment.transitRouterId
      ? 'transit'
      : undefined;
  const routerId = enrollment.edgeRouterId ?? enrollment.transitRouterId;
  if (!kind || !routerId) {
    throw new DomainError('INVALID_ENROLL_METHOD', {
      cause: { field: 'method', reason: 'the token is not a router enrollment token', value: enrollment.method },
    });
  }
  const csrs = routerCsrs(body);
  let commonName: string | undefined;
  try {
    commonName = parseCsr(csrs.client).commonName;
  } catch (e) {
    if (isPkiError(e)) throw new DomainError('COULD_NOT_PROCESS_CSR', { cause: { message: e.message } });
    throw e;
  }
  if (commonName !== routerId) {
    throw new DomainError('EDGE_ROUTER_ENROLL_COMMON_NAME_INVALID', {
      cause: { field: 'certCsr', reason: 'the client CSR common name must be the router id', value: commonName ?? '' },
    });
  }
  const signed = await signRouterCsrs(ctx, routerId, csrs);
  await withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    await consume(tctx, enrollment);
    await setRouterCertificate(tctx, kind, routerId, signed.client, 'router-enrolled');
  });
  return { cert: signed.client.chainPem, serverCert: signed.server.chainPem, ca: requirePki(ctx).caBundlePem };
}

/** Re-enroll an edge router: its certificate is forgotten (unverified) and a new `erott` enrollment replaces any old one. */
export async function reEnrollEdgeRouter(ctx: Ctx, id: string): Promise<void> {
  requirePki(ctx);
  await withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    if (!(await edgeRouterExists(trx, id))) throw notFound(id, 'edge router');
    await setRouterCertificate(tctx, 'edge', id, null, 'router-re-enrolled');
    await deleteEdgeRouterEnrollments(trx, id);
    await createRouterEnrollment(tctx, 'edge', id);
  });
}

/**
 * Router certificate extension: the request must present, over TLS, the router's current client certificate
 * issued by the controller (else 401 UNAUTHORIZED). Both CSRs are required; the new client certificate replaces
 * the old one immediately.
 */
export async function extendRouter(ctx: Ctx, peer: PeerCertificates | undefined, body: unknown): Promise<RouterCerts> {
  const presented = networkIssuedPeer(ctx, peer);
  const unauthorized = () =>
    new DomainError('UNAUTHORIZED', {
      cause: { message: "the request must be made over TLS with the router's current certificate" },
    });
  if (!presented) throw unauthorized();
  let found: { kind: RouterKind; id: string } | undefined;
  for (const kind of ['edge', 'transit'] as const) {
    const id = await routerIdByFingerprint(ctx.db, KINDS[kind].table, presented.fingerprint);
    if (id !== undefined) {
      found = { kind, id };
      break;
    }
  }
  if (!found) throw unauthorized();
  const signed = await signRouterCsrs(ctx, found.id, routerCsrs(body));
  const { kind, id } = found;
  await withTx(ctx.db, (trx) => setRouterCertificate(withDb(ctx, trx), kind, id, signed.client, 'router-extended'));
  return { cert: signed.client.chainPem, serverCert: signed.server.chainPem, ca: requirePki(ctx).caBundlePem };
}
