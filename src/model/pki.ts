/**
 * What the model needs from the controller's PKI, as a capability on the context (`ctx.pki`): signing enrollment
 * JWTs, client and API-session certificates, verifying client certificates against the controller's CAs, and
 * telling the listener when the trusted third-party CAs change.
 *
 * Why a capability rather than a direct dependency: the model stays free of the daemon (which owns the key
 * material and knows the advertised URL only once the listener is bound), and contexts without a PKI (tests of
 * pure model code, offline tools) simply leave it out; operations that need it then fail loudly.
 */
import type {
  CertificateInput,
  ChainVerification,
  EnrollmentJwtInput,
  IssuedCertificate,
  PublicJwk,
} from '../pki/index.js';
import { DomainError } from './errors.js';

export interface PkiCapability {
  /** The controller's advertised base URL, e.g. `https://ctrl.example:1280`: the `iss` of enrollment JWTs (§7.1). */
  readonly issuer: string;
  /** Intermediate + root CA certificates (PEM): what enrolled clients must trust (`enrollmentCerts.ca`). */
  readonly caBundlePem: string;
  /** Signs an enrollment JWT with the controller's server key. */
  signEnrollmentJwt(input: EnrollmentJwtInput): Promise<string>;
  /** The public keys that sign enrollment JWTs, each with its `kid` (`GET /enroll/jwks`). */
  enrollmentJwks(): Promise<{ keys: PublicJwk[] }>;
  /** Signs a nonce with the enrollment key `kid`; undefined when there is no such key. */
  signNonce(kid: string, nonce: string): { signature: string; algorithm: string; kid: string } | undefined;
  /** The controller's server certificate (PEM) and its fingerprint: what `GET /controllers` shows. */
  readonly serverCert: { readonly pem: string; readonly fingerprint: string };
  /** Signs a one-year client certificate naming identity (or router) `id`; throws PkiError for a bad CSR. */
  signClientCsr(
    csr: string,
    options: { id: string; kind?: 'identity' | 'router'; now?: Date },
  ): Promise<IssuedCertificate>;
  /** Signs a one-year router server certificate with the CSR's SANs; throws PkiError for a bad CSR. */
  signServerCsr(csr: string, options?: { now?: Date }): Promise<IssuedCertificate>;
  /**
   * Signs an API-session certificate naming the identity and the API session, valid 12 hours unless `validityMs`
   * says otherwise; throws PkiError for a bad CSR.
   */
  signSessionCsr(
    csr: string,
    options: { identityId: string; apiSessionId: string; now?: Date; validityMs?: number },
  ): Promise<IssuedCertificate>;
  /** Verifies a client certificate (plus the intermediates the client sent) against the controller's CAs. */
  verifyClientCertificate(
    leaf: CertificateInput,
    intermediates?: readonly CertificateInput[],
    now?: Date,
  ): ChainVerification & { readonly improperChain: boolean };
  /**
   * Called by the model after a change that may alter the set of trusted third-party CAs (a CA verified,
   * updated or deleted), possibly inside the change's transaction: the listener re-reads the verified CAs
   * once the store is free and updates the CA names its TLS certificate request advertises. Optional: contexts
   * without a listener leave it out.
   */
  trustChanged?(): void;
  /** The controller's own JWTs (OIDC tokens), signed with the server key (docs/reference-notes.md §14.7). */
  readonly controllerJwt: ControllerJwtCapability;
  /** The hosts (DNS names, IPs) the server certificate covers: with the listener's port, the OIDC issuers (§3). */
  readonly serverHosts: readonly string[];
}

export interface ControllerJwtCapability {
  /** `RS256`, `ES256`, `ES384` or `ES512`, by the key. */
  readonly alg: string;
  readonly kid: string;
  sign(claims: Record<string, unknown>): Promise<string>;
  /** The claims of a JWT this controller signed, valid at `now`; throws PkiError `expired-jwt` / `invalid-jwt`. */
  verify(jwt: string, now: Date): Promise<Record<string, unknown>>;
  /** The JWKS document of `/oidc/keys`. */
  jwks(): Promise<{ keys: Record<string, unknown>[] }>;
}

/**
 * The context's PKI; a context without one cannot enroll or check certificates (a deployment error: 500).
 * Takes the Ctx by its shape: ctx.ts imports this module's capability type.
 */
export function requirePki(ctx: { readonly pki?: PkiCapability }): PkiCapability {
  if (!ctx.pki)
    throw new DomainError('UNHANDLED', { cause: { message: 'the controller PKI is not available in this context' } });
  return ctx.pki;
}
