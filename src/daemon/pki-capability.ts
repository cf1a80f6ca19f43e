/**
 * The model's view of the controller PKI (model/pki.ts), backed by the loaded {@link ControllerPki}. The
 * issuer is read lazily because the advertised URL is only known once the listener has bound its port; trust
 * changes are forwarded to whatever the daemon registers once its listener exists.
 */
import { controllerJwk, signControllerJwt, verifyControllerJwt, type ControllerPki } from '../pki/index.js';
import type { PkiCapability } from '../model/pki.js';

export function pkiCapability(
  pki: ControllerPki,
  issuer: () => string,
  onTrustChanged: () => void = () => {},
): PkiCapability {
  // Made once from the loaded PKI: every token issued or presented uses it.
  const jwtKey = pki.jwtKey();
  return {
    get issuer() {
      return issuer();
    },
    caBundlePem: pki.caBundlePem,
    signEnrollmentJwt: (input) => pki.signEnrollmentJwt(input),
    enrollmentJwks: () => pki.enrollmentJwks(),
    signNonce: (kid, nonce) => pki.signNonce(kid, nonce),
    serverCert: { pem: pki.serverCertPem, fingerprint: pki.server.fingerprint },
    signClientCsr: (csr, options) => pki.signClientCsr(csr, options),
    signServerCsr: (csr, options) => pki.signServerCsr(csr, options),
    signSessionCsr: (csr, options) => pki.signSessionCsr(csr, options),
    verifyClientCertificate: (leaf, intermediates, now) => pki.verifyClientCertificate(leaf, intermediates, now),
    trustChanged: () => onTrustChanged(),
    serverHosts: pki.serverHosts,
    controllerJwt: {
      alg: jwtKey.alg,
      kid: jwtKey.kid,
      sign: (claims) => signControllerJwt(claims, jwtKey),
      verify: (jwt, now) => verifyControllerJwt(jwt, jwtKey, now),
      jwks: async () => ({ keys: [await controllerJwk(jwtKey)] }),
    },
  };
}
