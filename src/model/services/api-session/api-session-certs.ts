/**
 * The caller's API-session certificates (parity: docs/reference-notes.md §4.7): issue from a CSR, list,
 * read, delete. Everything is scoped to the caller's own API session, and a certificate past its validity
 * window is treated as gone (not listed, 404) even before the sweeper removes it.
 */
import { deleteApiSessionCert, deleteApiSessionCertsValidTo } from '../../../store/api-session-certs.js';
import { validCertsOfApiSession } from '../../../store/scopes.js';
import { insertRow } from '../../../store/crud.js';
import { isPkiError } from '../../../pki/index.js';
import { listEntities, type Page } from '../../crud.js';
import { iso, withDb, type Ctx } from '../../ctx.js';
import { withTx } from '../../../store/db.js';
import { DomainError, notFound } from '../../errors.js';
import { newEntityId } from '../../ids.js';
import type { ListOptions } from '../../list-query.js';
import { requirePki } from '../../pki.js';
import type { Row } from '../../resource.js';
import { findRows } from '../../../store/crud.js';
import { apiSessionCerts } from '../../resources/api-session-cert.js';
import { recordRowChange, rowBefore } from '../../events/operation-events.js';

export interface SessionCertOwner {
  apiSessionId: string;
  identityId: string;
}

/** The caller's API session's certificates that are still valid now (with `id`, only that one). */
const ownedAndValid = (ctx: Ctx, apiSessionId: string, id?: string) =>
  validCertsOfApiSession(apiSessionId, iso(ctx.now()), id);

export interface IssuedSessionCert {
  id: string;
  /** The new certificate (PEM). */
  certificate: string;
  /** The controller's CA bundle, to complete the chain and trust the controller. */
  cas: string;
  /** The new certificate's fingerprint (lowercase hex SHA-1). */
  fingerprint: string;
}

/**
 * Signs a client certificate for the caller's API session from `csr` and records it (fingerprint, subject,
 * validity): 12 hours unless `validityMs` says otherwise (an OIDC login's CSR: a year). A missing or unusable CSR
 * is 400 COULD_NOT_PROCESS_CSR.
 */
export async function createSessionCert(
  ctx: Ctx,
  owner: SessionCertOwner,
  csr: unknown,
  validityMs?: number,
): Promise<IssuedSessionCert> {
  if (typeof csr !== 'string' || csr.trim() === '')
    throw new DomainError('COULD_NOT_VALIDATE', { cause: { field: 'csr', reason: 'csr is required', value: null } });
  const pki = requirePki(ctx);
  let issued;
  try {
    issued = await pki.signSessionCsr(csr, {
      identityId: owner.identityId,
      apiSessionId: owner.apiSessionId,
      now: ctx.now(),
      ...(validityMs !== undefined && { validityMs }),
    });
  } catch (e) {
    if (isPkiError(e)) throw new DomainError('COULD_NOT_PROCESS_CSR', { cause: { message: e.message } });
    throw e;
  }
  const id = newEntityId();
  const now = iso(ctx.now());
  await withTx(ctx.db, async (trx) => {
    await insertRow(trx, apiSessionCerts, {
      id,
      createdAt: now,
      updatedAt: now,
      tags: {},
      apiSessionId: owner.apiSessionId,
      identityId: owner.identityId,
      subject: issued.certificate.subject,
      fingerprint: issued.fingerprint,
      certificate: issued.certPem,
      validFrom: iso(issued.notBefore),
      validTo: iso(issued.notAfter),
    });
    await recordRowChange(
      withDb(ctx, trx),
      apiSessionCerts,
      id,
      'created',
      'api-session-certificate-created',
      undefined,
    );
  });
  return { id, certificate: issued.certPem, cas: pki.caBundlePem, fingerprint: issued.fingerprint };
}

export function listSessionCerts(ctx: Ctx, apiSessionId: string, opts: ListOptions): Promise<Page> {
  return listEntities(ctx, apiSessionCerts, opts, ownedAndValid(ctx, apiSessionId));
}

/** One certificate of the caller's API session; 404 for another session's, an expired one, or none. */
export async function getSessionCert(ctx: Ctx, apiSessionId: string, id: string): Promise<Row> {
  const [row] = await findRows(ctx.db, apiSessionCerts, ownedAndValid(ctx, apiSessionId, id));
  if (!row) throw notFound(id, apiSessionCerts.label);
  return row;
}

export async function deleteSessionCert(ctx: Ctx, apiSessionId: string, id: string): Promise<void> {
  await getSessionCert(ctx, apiSessionId, id);
  await withTx(ctx.db, async (trx) => {
    const before = await rowBefore(withDb(ctx, trx), apiSessionCerts, id);
    await deleteApiSessionCert(trx, id);
    await recordRowChange(withDb(ctx, trx), apiSessionCerts, id, 'deleted', 'api-session-certificate-deleted', before);
  });
}

/** Removes certificates past their validity window (run by the daemon's sweeper). */
export async function sweepExpiredSessionCerts(ctx: Ctx): Promise<number> {
  return deleteApiSessionCertsValidTo(ctx.db, iso(ctx.now()));
}
