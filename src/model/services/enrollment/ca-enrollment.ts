/**
 * Enrollment with a certificate from a third-party CA, presented over mutual TLS (parity:
 * docs/reference-notes.md §7.3):
 *
 * - `ottca`: an admin-created enrollment names a CA; the holder of its token proves possession of a certificate
 *   from that CA, which becomes the identity's cert authenticator.
 * - CA auto-enrollment (`/enroll/ca`): no token; any certificate from a verified CA with auto-enrollment on
 *   creates a new identity on the spot, named by the CA's `identityNameFormat`, with the CA's `identityRoles`
 *   as role attributes and, for a CA with an `externalIdClaim`, the claim's value as `externalId`.
 *
 * Only verified CAs take part. Both flows run in one transaction: a refused enrollment creates nothing and an
 * `ottca` token stays usable.
 */
import { authenticatorIdOf } from '../../../store/authenticators.js';
import { identityIdByExternalId } from '../../../store/identities.js';
import { withTx } from '../../../store/db.js';
import { insertRow } from '../../../store/crud.js';
import type { ParsedCertificate } from '../../../pki/index.js';
import { createEntity } from '../../crud.js';
import { iso, withDb, type Ctx } from '../../ctx.js';
import { DomainError } from '../../errors.js';
import { newEntityId } from '../../ids.js';
import { authenticators } from '../../resources/authenticator.js';
import { identities } from '../../resources/identity.js';
import { externalIdFromCertificate } from '../../ca/external-id.js';
import { formatIdentityName, uniqueIdentityName } from '../../ca/name-format.js';
import { findIssuingCa, verifiedCas, type TrustedCa } from '../../ca/trust.js';
import type { PeerCertificates } from '../authentication/authenticate-cert.js';
import { assertFingerprintUnused } from '../authentication/cert-authenticator.js';
import { consume, enrollmentForToken } from './enrollment.js';
import { recordRowChange, type Operation } from '../../events/operation-events.js';

/** The identity type of identities created by CA auto-enrollment (the reference's `Default` type does not exist here). */
export const AUTO_ENROLLED_IDENTITY_TYPE = 'Device';

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_EKU = '2.5.29.37.0';

/** The CA of `candidates` that vouches for the presented certificate, or undefined. */
function issuingCa(
  candidates: readonly TrustedCa[],
  peer: PeerCertificates,
  now: Date,
): { ca: TrustedCa; leaf: ParsedCertificate } | undefined {
  try {
    const found = findIssuingCa(candidates, peer.leaf, peer.intermediates, now);
    return found && { ca: found.ca, leaf: found.verification.leaf };
  } catch {
    return undefined; // unreadable certificates verify against nothing
  }
}

/**
 * Stores `cert` as the identity's cert authenticator, issued through `caId`. The chain was verified by the
 * caller (with the intermediates the client sent), so the PEM is not re-verified here.
 * @throws DomainError CERT_IN_USE, MAX_AUTHENTICATOR_METHODS_REACHED.
 */
async function insertCertAuthenticator(
  ctx: Ctx,
  identityId: string,
  cert: ParsedCertificate,
  caId: string,
  operation: Operation,
): Promise<string> {
  await assertFingerprintUnused(ctx, cert.fingerprint, 'clientCert');
  if ((await authenticatorIdOf(ctx.db, identityId, 'cert')) !== undefined) {
    throw new DomainError('MAX_AUTHENTICATOR_METHODS_REACHED', {
      cause: { field: 'method', reason: 'identity already has a cert authenticator', value: 'cert' },
    });
  }
  const id = newEntityId();
  const now = iso(ctx.now());
  await insertRow(ctx.db, authenticators, {
    id,
    createdAt: now,
    updatedAt: now,
    tags: {},
    identityId,
    method: 'cert',
    certPem: cert.pem,
    fingerprint: cert.fingerprint,
    caId,
    failedAttempts: 0,
  });
  await recordRowChange(ctx, authenticators, id, 'created', operation, undefined);
  return id;
}

/**
 * `ottca`: the enrollment's CA must still exist, be verified and allow ottca enrollment (else 400
 * ENROLLMENT_CA_NOT_VALID); the TLS client certificate must chain to it (else 400 CERTIFICATE_FAILED_VALIDATION)
 * and be unused (409 CERT_IN_USE).
 */
export async function enrollOttCa(
  ctx: Ctx,
  token: unknown,
  peer: PeerCertificates | undefined,
): Promise<{ identityId: string; authenticatorId: string }> {
  const enrollment = await enrollmentForToken(ctx, token, 'ottca');
  const [ca] = enrollment.caId ? await verifiedCas(ctx, 'ott-enroll', enrollment.caId) : [];
  if (!ca)
    throw new DomainError('ENROLLMENT_CA_NOT_VALID', {
      cause: {
        field: 'caId',
        reason: 'the CA is missing, unverified or does not allow ottca enrollment',
        value: enrollment.caId,
      },
    });
  if (!peer)
    throw new DomainError('CERTIFICATE_FAILED_VALIDATION', {
      cause: { message: 'no client certificate was presented' },
    });
  const found = issuingCa([ca], peer, ctx.now());
  if (!found)
    throw new DomainError('CERTIFICATE_FAILED_VALIDATION', {
      cause: { message: 'the client certificate does not chain to the enrollment CA' },
    });
  const authenticatorId = await withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    await consume(tctx, enrollment);
    return insertCertAuthenticator(tctx, enrollment.identityId, found.leaf, ca.id, 'enrollment-used');
  });
  return { identityId: enrollment.identityId, authenticatorId };
}

/** Whether a certificate may be used for client authentication: no EKU extension, or one naming clientAuth/any. */
const allowsClientAuth = (cert: ParsedCertificate) =>
  cert.extendedKeyUsage.length === 0 ||
  cert.extendedKeyUsage.includes(CLIENT_AUTH) ||
  cert.extendedKeyUsage.includes(ANY_EKU);

/**
 * CA auto-enrollment. No verified CA with auto-enrollment ⇒ 400 ENROLLMENT_NO_VALID_CAS; no certificate, one no
 * such CA vouches for, or one not usable for client authentication ⇒ 400 CERT_FAILED_VALIDATION; a certificate
 * already registered ⇒ 409 CERT_IN_USE; a CA with an `externalIdClaim` whose value the certificate lacks ⇒ 400
 * MISSING_CERT_CLAIM, and whose value an identity already has ⇒ 409 ENROLLMENT_IDENTITY_ALREADY_ENROLLED.
 * The new identity also gets a cert authenticator for the certificate, so it can be listed, re-enrolled, and
 * removed with the CA.
 */
export async function enrollCa(
  ctx: Ctx,
  peer: PeerCertificates | undefined,
  requestedName?: unknown,
): Promise<{ identityId: string; authenticatorId: string }> {
  const candidates = await verifiedCas(ctx, 'auto-enroll');
  if (candidates.length === 0) throw new DomainError('ENROLLMENT_NO_VALID_CAS');
  if (!peer)
    throw new DomainError('CERT_FAILED_VALIDATION', { cause: { message: 'no client certificate was presented' } });
  const found = issuingCa(candidates, peer, ctx.now());
  if (!found)
    throw new DomainError('CERT_FAILED_VALIDATION', {
      cause: { message: 'the client certificate does not chain to a CA with auto-enrollment enabled' },
    });
  const { ca, leaf } = found;
  if (!allowsClientAuth(leaf))
    throw new DomainError('CERT_FAILED_VALIDATION', {
      cause: { message: 'the client certificate is not valid for client authentication' },
    });

  return withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    await assertFingerprintUnused(tctx, leaf.fingerprint, 'clientCert');
    let externalId: string | undefined;
    if (ca.externalIdClaim) {
      externalId = externalIdFromCertificate(ca.externalIdClaim, leaf);
      if (externalId === undefined)
        throw new DomainError('MISSING_CERT_CLAIM', {
          cause: {
            field: 'externalIdClaim',
            reason: 'the certificate holds no value for the CA externalIdClaim',
            value: leaf.subject,
          },
        });
      if ((await identityIdByExternalId(trx, externalId)) !== undefined)
        throw new DomainError('ENROLLMENT_IDENTITY_ALREADY_ENROLLED', {
          cause: { field: 'externalId', reason: 'an identity with this external id exists', value: externalId },
        });
    }
    const identityId = newEntityId();
    const base = formatIdentityName(ca.identityNameFormat, {
      caName: ca.name,
      caId: ca.id,
      commonName: leaf.commonName ?? '',
      requestedName: typeof requestedName === 'string' && requestedName !== '' ? requestedName : identityId,
      identityId,
    });
    const name = await uniqueIdentityName(tctx, base);
    await createEntity(
      tctx,
      identities,
      {
        name,
        type: AUTO_ENROLLED_IDENTITY_TYPE,
        isAdmin: false,
        roleAttributes: ca.identityRoles,
        ...(externalId !== undefined ? { externalId } : {}),
      },
      { id: identityId },
    );
    const authenticatorId = await insertCertAuthenticator(tctx, identityId, leaf, ca.id, 'ca-auto-enrolled');
    return { identityId, authenticatorId };
  });
}
