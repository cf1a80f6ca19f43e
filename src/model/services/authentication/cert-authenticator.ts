/**
 * Turning a PEM certificate into the stored fields of a `cert` authenticator, shared by the admin API
 * (`POST /authenticators {method: cert, certPem}`) and `ott` enrollment.
 *
 * parity (docs/reference-notes.md §5.3): the PEM must hold exactly one certificate, which must chain to a CA
 * the controller trusts (validity dates ignored, as for authentication), and its fingerprint must not belong
 * to another authenticator. Verified third-party CAs count as trusted here whatever their `isAuthEnabled`:
 * the switch decides whether the certificate may log in, not whether it may be registered.
 */
import { certFingerprintInUse } from '../../../store/authenticators.js';
import type { Ctx } from '../../ctx.js';
import { DomainError } from '../../errors.js';
import { requirePki } from '../../pki.js';
import {
  CERTIFICATE_PEM_TYPES,
  decodePemBlocks,
  isPkiError,
  parseCertificateDer,
  type ParsedCertificate,
} from '../../../pki/index.js';
import { findIssuingCa, verifiedCas } from '../../ca/trust.js';

export interface CertAuthenticatorFields {
  certPem: string;
  fingerprint: string;
  caId: string | null;
}

const invalidPem = (reason: string) =>
  new DomainError('INVALID_CERT_PEM', { cause: { field: 'certPem', reason, value: '' } });

/** Exactly one CERTIFICATE block that parses; anything else is INVALID_CERT_PEM. */
function singleCertificate(pem: unknown): ParsedCertificate {
  if (typeof pem !== 'string' || pem.trim() === '') {
    throw new DomainError('INVALID_AUTHENTICATOR_PROPERTIES', {
      cause: { field: 'certPem', reason: 'certPem is required for cert', value: null },
    });
  }
  const blocks = decodePemBlocks(pem);
  if (blocks.length !== 1) throw invalidPem(`expected exactly one certificate, found ${blocks.length} PEM blocks`);
  const [block] = blocks;
  if (!(CERTIFICATE_PEM_TYPES as readonly string[]).includes(block!.type))
    throw invalidPem(`expected a CERTIFICATE block, found ${block!.type}`);
  try {
    return parseCertificateDer(block!.der);
  } catch (e) {
    if (isPkiError(e)) throw invalidPem('the certificate could not be parsed');
    throw e;
  }
}

/**
 * Verifies `pem` for use as a cert authenticator and returns the fields to store. A certificate of the
 * controller's PKI is issued by the network (`caId` null); otherwise the first verified third-party CA it chains
 * to becomes its `caId`, so deleting that CA removes the authenticator.
 * @throws DomainError INVALID_AUTHENTICATOR_PROPERTIES (no PEM), INVALID_CERT_PEM, CERT_FAILED_VALIDATION, CERT_IN_USE.
 */
export async function certAuthenticatorFromPem(ctx: Ctx, pem: unknown): Promise<CertAuthenticatorFields> {
  const cert = singleCertificate(pem);
  const now = ctx.now();
  let caId: string | null = null;
  if (!requirePki(ctx).verifyClientCertificate(cert, [], now).ok) {
    const issuer = findIssuingCa(await verifiedCas(ctx, 'any'), cert, [], now);
    if (!issuer) {
      throw new DomainError('CERT_FAILED_VALIDATION', {
        cause: { field: 'certPem', reason: 'the certificate does not chain to a trusted CA', value: cert.subject },
      });
    }
    caId = issuer.ca.id;
  }
  await assertFingerprintUnused(ctx, cert.fingerprint, 'certPem');
  return { certPem: cert.pem, fingerprint: cert.fingerprint, caId };
}

/** A certificate identifies one authenticator only (409 CERT_IN_USE), including a pending extension's. */
export async function assertFingerprintUnused(ctx: Ctx, fingerprint: string, field: string): Promise<void> {
  if (await certFingerprintInUse(ctx.db, fingerprint))
    throw new DomainError('CERT_IN_USE', {
      cause: { field, reason: 'the certificate is already used by another authenticator', value: fingerprint },
    });
}
