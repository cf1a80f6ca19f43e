/**
 * The life of an enrollment after its creation: refresh by an admin, and use of its token by a client
 * (parity: docs/reference-notes.md §7.2, §7.3).
 *
 * Using a token is atomic: the enrollment is deleted and the authenticator created in one transaction, and the
 * delete is conditional on the row still being there, so two concurrent uses of one token cannot both succeed.
 * Anything refused (bad CSR, password rules, a used fingerprint) rolls back and leaves the token usable.
 */
import { withTx } from '../../../store/db.js';
import {
  deleteEnrollmentWithTokenHash,
  enrollmentByTokenHash,
  type EnrollmentByToken,
} from '../../../store/enrollments.js';
import { isPkiError } from '../../../pki/index.js';
import { createEntity, getRow, updateEntity } from '../../crud.js';
import { iso, withDb, type Ctx } from '../../ctx.js';
import { DomainError, fieldError } from '../../errors.js';
import { isUuid } from '../../ids.js';
import { requirePki } from '../../pki.js';
import { authenticators } from '../../resources/authenticator.js';
import { hashForIdentity } from '../hooks/authenticator.js';
import { enrollments } from '../../resources/enrollment.js';
import { enrollmentSecrets, futureDate } from '../../enrollments/credentials.js';
import { tokenHash } from '../../tokens.js';
import { recordRowChange, rowBefore } from '../../events/operation-events.js';

/** The stored fields of an outstanding enrollment; exactly one of the three owner ids is set. */
export type AnyEnrollmentRecord = EnrollmentByToken;

/** An outstanding identity enrollment. */
export type EnrollmentRecord = AnyEnrollmentRecord & { identityId: string };

/** The id an enrollment's JWT names as `sub`: its identity or router. */
export const enrollmentSubject = (row: {
  identityId?: unknown;
  edgeRouterId?: unknown;
  transitRouterId?: unknown;
  id?: unknown;
}): string => String(row.identityId ?? row.edgeRouterId ?? row.transitRouterId ?? row.id);

/** New expiry and a new JWT for the same token (parity: §7.2; expired enrollments can be refreshed too). */
export async function refreshEnrollment(ctx: Ctx, id: string, expiresAtValue: unknown): Promise<void> {
  const row = await getRow(ctx, enrollments, id);
  const expiresAt = futureDate(ctx, 'expiresAt', expiresAtValue);
  // The token derives from the id, so it is the same; only the JWT (its `exp`) is new.
  const secrets = await enrollmentSecrets(ctx, {
    id,
    method: row.method,
    subject: enrollmentSubject(row),
    expiresAt,
  });
  await updateEntity(ctx, enrollments, id, {}, 'patch', { expiresAt: iso(expiresAt), ...secrets });
}

const invalidToken = () => new DomainError('INVALID_ENROLLMENT_TOKEN');

/**
 * The outstanding enrollment behind `token` (identity or router), checked for use now: it exists (else
 * INVALID_ENROLLMENT_TOKEN), matches `method` when one is given (else INVALID_ENROLL_METHOD), and has not
 * expired (else ENROLLMENT_EXPIRED). No token at all is a field error on `token`.
 */
export async function anyEnrollmentForToken(ctx: Ctx, token: unknown, method?: string): Promise<AnyEnrollmentRecord> {
  if (token === undefined || token === null || token === '') throw fieldError('token', 'token is required', null);
  if (typeof token !== 'string' || !isUuid(token)) throw invalidToken();
  const row = await enrollmentByTokenHash(ctx.db, tokenHash(token));
  if (!row) throw invalidToken();
  if (method !== undefined && method !== row.method) {
    throw new DomainError('INVALID_ENROLL_METHOD', {
      cause: { field: 'method', reason: `the token is not for ${method} enrollment`, value: method },
    });
  }
  if (Date.parse(row.expiresAt) <= ctx.now().getTime()) throw new DomainError('ENROLLMENT_EXPIRED');
  return row;
}

/** As {@link anyEnrollmentForToken}, for an enrollment that must belong to an identity. */
export async function enrollmentForToken(ctx: Ctx, token: unknown, method?: string): Promise<EnrollmentRecord> {
  const row = await anyEnrollmentForToken(ctx, token, method);
  if (!row.identityId) throw invalidToken();
  return row as EnrollmentRecord;
}

/** Deletes the enrollment being used; a row already gone means the token was used concurrently. */
export async function consume(ctx: Ctx, enrollment: AnyEnrollmentRecord): Promise<void> {
  const before = await rowBefore(ctx, enrollments, enrollment.id);
  if (!(await deleteEnrollmentWithTokenHash(ctx.db, enrollment.id, enrollment.tokenHash))) throw invalidToken();
  // Its event names the identity (or router) and the method, never the token or the JWT (entity-change.ts).
  await recordRowChange(ctx, enrollments, enrollment.id, 'deleted', 'enrollment-used', before);
}

export interface OttEnrollmentResult {
  identityId: string;
  authenticatorId: string;
  /** The new client certificate followed by the issuing intermediate. */
  certChainPem: string;
  /** The controller's CA bundle, for the client's trust store. */
  caPem: string;
}

/**
 * `ott`: signs the client's CSR (one-year client certificate naming the identity) and stores it as the identity's
 * `cert` authenticator.
 * @throws DomainError token errors as {@link enrollmentForToken}; MISSING_OR_INVALID_CSR without a CSR;
 *   COULD_NOT_PROCESS_CSR when it does not parse, its key is unacceptable or its signature fails.
 */
export async function enrollOtt(ctx: Ctx, token: unknown, csr: unknown): Promise<OttEnrollmentResult> {
  const pki = requirePki(ctx);
  const enrollment = await enrollmentForToken(ctx, token, 'ott');
  if (typeof csr !== 'string' || csr.trim() === '') throw new DomainError('MISSING_OR_INVALID_CSR');
  let issued;
  try {
    issued = await pki.signClientCsr(csr, { id: enrollment.identityId, now: ctx.now() });
  } catch (e) {
    if (isPkiError(e)) throw new DomainError('COULD_NOT_PROCESS_CSR', { cause: { message: e.message } });
    throw e;
  }
  const authenticatorId = await withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    await consume(tctx, enrollment);
    return createEntity(tctx, authenticators, {
      identityId: enrollment.identityId,
      method: 'cert',
      certPem: issued.certPem,
    });
  });
  return { identityId: enrollment.identityId, authenticatorId, certChainPem: issued.chainPem, caPem: pki.caBundlePem };
}

/**
 * `updb`: sets the identity's password under its auth policy's rules. The username is the enrollment's; one in
 * the request body is ignored (parity: §7.3).
 */
export async function enrollUpdb(ctx: Ctx, token: unknown, body: unknown): Promise<{ username: string }> {
  const enrollment = await enrollmentForToken(ctx, token, 'updb');
  const password = body && typeof body === 'object' ? (body as { password?: unknown }).password : undefined;
  if (typeof password !== 'string' || password === '') throw fieldError('password', 'password is required', null);
  const username = enrollment.username ?? '';
  // Hashed before the transaction (no Argon2id inside one); a password the rules refuse leaves the token usable.
  const pre = { passwordHash: await hashForIdentity(ctx, enrollment.identityId, password) };
  await withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    await consume(tctx, enrollment);
    await createEntity(
      tctx,
      authenticators,
      { identityId: enrollment.identityId, method: 'updb', username, password },
      {},
      pre,
    );
  });
  return { username };
}
