/**
 * What the model needs from the controller's PKI, as a capability on the {@link Ctx}: signing enrollment JWTs
 * and client certificates, and verifying client certificates against the controller's CAs.
 *
 * Why a capability rather than a direct dependency: the model stays free of the daemon (which owns the key
 * material and knows the advertised URL only once the listener is bound), and contexts without a PKI (tests of
 * pure model code, offline tools) simply leave it out; operations that need it then fail loudly.
 */
import type { CertificateInput, ChainVerification, EnrollmentJwtInput, IssuedCertificate } from '../pki/index.js';
import type { Ctx } from './ctx.js';
import { DomainError } from './errors.js';

export interface PkiCapability {
  /** The controller's advertised base URL, e.g. `https://ctrl.example:1280`: the `iss` of enrollment JWTs (§7.1). */
  readonly issuer: string;
  /** Intermediate + root CA certificates (PEM): what enrolled clients must trust (`enrollmentCerts.ca`). */
  readonly caBundlePem: string;
  /** Signs an enrollment JWT with the controller's server key. */
  signEnrollmentJwt(input: EnrollmentJwtInput): Promise<string>;
  /** Signs a one-year client certificate naming identity `id`; throws PkiError for a bad CSR. */
  signClientCsr(csr: string, options: { id: string; now?: Date }): Promise<IssuedCertificate>;
  /** Verifies a client certificate (plus the intermediates the client sent) against the controller's CAs. */
  verifyClientCertificate(
    leaf: CertificateInput,
    intermediates?: readonly CertificateInput[],
    now?: Date,
  ): ChainVerification & { readonly improperChain: boolean };
}

/** The context's PKI; a context without one cannot enroll or check certificates (a deployment error: 500). */
export function requirePki(ctx: Ctx): PkiCapability {
  if (!ctx.pki) throw new DomainError('UNHANDLED', { cause: { message: 'the controller PKI is not available in this context' } });
  return ctx.pki;
}
