/**
 * The model's view of the controller PKI (model/pki.ts), backed by the loaded {@link ControllerPki}. The
 * issuer is read lazily because the advertised URL is only known once the listener has bound its port.
 */
import type { ControllerPki } from '../pki/index.js';
import type { PkiCapability } from '../model/pki.js';

export function pkiCapability(pki: ControllerPki, issuer: () => string): PkiCapability {
  return {
    get issuer() {
      return issuer();
    },
    caBundlePem: pki.caBundlePem,
    signEnrollmentJwt: (input) => pki.signEnrollmentJwt(input),
    signClientCsr: (csr, options) => pki.signClientCsr(csr, options),
    verifyClientCertificate: (leaf, intermediates, now) => pki.verifyClientCertificate(leaf, intermediates, now),
  };
}
