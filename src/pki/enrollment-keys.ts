/**
 * The enrollment signing keys as the current spec publishes them (`GET /enroll/jwks`) and the proof that this
 * network holds one (`POST /enroll/challenge`). Enrollment JWTs are signed by the controller's TLS server key
 * (jwt.ts), with `kid` = the server certificate's fingerprint, so that one key is the whole set.
 *
 * A nonce signature is the JWS signature of the nonce's UTF-8 bytes under the key's JWS algorithm (RS256:
 * RSASSA-PKCS1-v1_5 with SHA-256; ES256/384/512: ECDSA, `r || s`), base64url without padding: a client checks it
 * with the JWK of that `kid` as it would check a JWT's signature.
 */
import { createHash, sign, type KeyObject } from 'node:crypto';
import { exportJWK, type JWK } from 'jose';
import type { ParsedCertificate } from './certificate.js';
import { jwsAlgorithmFor } from './keys.js';

/** A public JWK with the members the spec's `jwk` lists for a certificate-backed key. */
export interface PublicJwk extends JWK {
  readonly kid: string;
  readonly kty: string;
}

/** The public JWK of the key certified by `cert` (`chain`: that certificate first, then its issuers). */
export async function certificateJwk(cert: ParsedCertificate, chain: readonly ParsedCertificate[]): Promise<PublicJwk> {
  const jwk = await exportJWK(cert.publicKey);
  return {
    ...jwk,
    kty: jwk.kty!,
    kid: cert.fingerprint,
    use: 'sig',
    alg: jwsAlgorithmFor(cert.publicKey),
    x5c: chain.map((c) => c.der.toString('base64')),
    x5t: createHash('sha1').update(cert.der).digest('base64url'),
    'x5t#S256': createHash('sha256').update(cert.der).digest('base64url'),
  };
}

/** Signs `data` as a JWS signature with `key` (see the module comment); returns it with its algorithm. */
export function jwsSignature(key: KeyObject, data: string): { signature: string; algorithm: string } {
  const algorithm = jwsAlgorithmFor(key);
  const hash = `sha${algorithm.slice(2)}`;
  const bytes = Buffer.from(data, 'utf8');
  const signature =
    algorithm === 'RS256' ? sign(hash, bytes, key) : sign(hash, bytes, { key, dsaEncoding: 'ieee-p1363' });
  return { signature: signature.toString('base64url'), algorithm };
}
