/**
 * Certificate fingerprints.
 *
 * parity: the reference identifies certificates (cert authenticators, CAs, routers, API-session certs) by the
 * lowercase hex SHA-1 of the DER, without separators (`common/cert/fingerprint.go`). SHA-1 is used as a lookup
 * key here, not for security: trust always comes from signature verification.
 */
import { createHash, X509Certificate as NodeX509Certificate } from 'node:crypto';
import { PkiError } from './errors.js';
import { decodeFirstPemBlock } from './pem.js';

/** Lowercase hex SHA-1 of `der`, no separators. */
export function fingerprintDer(der: Uint8Array): string {
  return createHash('sha1').update(der).digest('hex');
}

/**
 * The fingerprint of a certificate given as PEM (first block, must be a CERTIFICATE), DER, or parsed (a
 * `ParsedCertificate`, named by its shape because certificate.ts imports this module).
 * @throws PkiError `not-pem`, `wrong-pem-type` or `bad-der`.
 */
export function certificateFingerprint(cert: string | Uint8Array | { readonly fingerprint: string }): string {
  if (typeof cert === 'string') {
    const { der } = decodeFirstPemBlock(cert, ['CERTIFICATE', 'X509 CERTIFICATE'], 'certificate');
    try {
      new NodeX509Certificate(der);
    } catch (cause) {
      throw new PkiError('bad-der', 'could not parse the certificate DER', { cause });
    }
    return fingerprintDer(der);
  }
  if (cert instanceof Uint8Array) return fingerprintDer(cert);
  return cert.fingerprint;
}
