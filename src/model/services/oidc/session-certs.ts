/**
 * Certificates of an OIDC session (docs/decisions.md, "OIDC login"; the reference's v2 proof of possession):
 *
 * - a CSR given at the login (`csrPem`) or on a refresh or exchange (`csr_pem`) is signed into a one-year
 *   API-session certificate, the same kind `POST /current-api-session/certificates` issues; its fingerprint joins
 *   the tokens' `z_cfs`;
 * - a bound token (`z_cfs` set) is honoured on a connection presenting one of its certificates, or a valid
 *   API-session certificate of its own API session;
 * - the certificate-state claims (`z_ice`, `z_cae`, `z_cer`, `z_ckrr`, `z_iccc`), read again at every issue from
 *   what the store keeps of the login's authenticator and auth policy, as the legacy current-API-session answers.
 */
import { certAuthenticatorState, certExtendRequest } from '../../../store/authenticators.js';
import { hasValidSessionCert } from '../../../store/api-session-certs.js';
import { isPkiError, parseAndVerifyCsr } from '../../../pki/index.js';
import { iso, type Ctx } from '../../ctx.js';
import { DomainError } from '../../errors.js';
import { policyForIdentity } from '../hooks/auth-policy.js';
import { createSessionCert, type SessionCertOwner } from '../api-session/api-session-certs.js';
import { OAuthError } from './oidc-errors.js';

/** An OIDC session certificate's lifetime: a year, as the reference's. */
export const OIDC_SESSION_CERT_VALIDITY_MS = 365 * 24 * 3600_000;

/** How many fingerprints a token's `z_cfs` keeps: the login's certificate and the latest session certificates. */
const MAX_BOUND_CERTIFICATES = 10;

/**
 * A login's `csrPem`, checked before the credentials are: undefined when none was given.
 * @throws DomainError COULD_NOT_PROCESS_CSR (400) for anything but a well-formed, well-signed CSR.
 */
export async function loginCsr(value: unknown): Promise<string | undefined> {
  if (value === undefined || value === null || value === '') return undefined;
  const unusable = (message: string) =>
    new DomainError('COULD_NOT_PROCESS_CSR', { cause: { message }, audit: { reason: 'unusable csrPem' } });
  if (typeof value !== 'string') throw unusable('csrPem must be a PEM certificate request');
  try {
    await parseAndVerifyCsr(value);
  } catch (e) {
    if (isPkiError(e)) throw unusable(e.message);
    throw e;
  }
  return value;
}

/**
 * Signs `csr` into a one-year certificate of the session and records it (inside the grant's transaction).
 * @throws OAuthError invalid_request for an unusable CSR (the token endpoint's answer).
 */
export async function issueOidcSessionCert(
  ctx: Ctx,
  owner: SessionCertOwner,
  csr: string,
): Promise<{ certificate: string; fingerprint: string }> {
  try {
    return await createSessionCert(ctx, owner, csr, OIDC_SESSION_CERT_VALIDITY_MS);
  } catch (e) {
    if (e instanceof DomainError && (e.code === 'COULD_NOT_PROCESS_CSR' || e.code === 'COULD_NOT_VALIDATE'))
      throw new OAuthError('invalid_request', 'csr_pem is not a usable certificate signing request');
    throw e;
  }
}

/** The bound fingerprints with `added` joined, the login's certificate first, at most {@link MAX_BOUND_CERTIFICATES}. */
export function withBoundCertificate(bound: readonly string[], added: string): string[] {
  const all = [...bound.filter((f) => f !== added), added];
  return all.length <= MAX_BOUND_CERTIFICATES ? all : [all[0]!, ...all.slice(all.length - MAX_BOUND_CERTIFICATES + 1)];
}

/**
 * Whether a connection presenting `presented` (lowercase hex SHA-1) may use a token bound to `bound`: always for an
 * unbound token; else one of its certificates, or a valid API-session certificate of its API session.
 */
export async function bindingHolds(
  ctx: Ctx,
  bound: readonly string[],
  apiSessionId: string,
  presented: string | undefined,
): Promise<boolean> {
  if (bound.length === 0) return true;
  if (presented === undefined || presented === '') return false;
  if (bound.includes(presented)) return true;
  return hasValidSessionCert(ctx.db, apiSessionId, presented, iso(ctx.now()));
}

/** The certificate-state claims of §9.1. */
export interface CertStateClaims {
  /** The login's certificate was issued by this network, so it can be extended. */
  z_ice: boolean;
  /** A certificate login whose auth policy accepts expired certificates. */
  z_cae: boolean;
  /** An administrator asked for the login's certificate to be extended. */
  z_cer: boolean;
  /** ... and its key to be rolled. */
  z_ckrr: boolean;
  /** The login's client sent an improper certificate chain. */
  z_iccc: boolean;
}

/**
 * The certificate-state claims of a session's tokens, from the store at the time of issue (so a refresh after an
 * administrator's extension request shows it). Only a certificate login's authenticator can make them true.
 */
export async function certStateClaims(
  ctx: Ctx,
  login: { authenticatorId: string | null; amr: readonly string[]; improperChain: boolean },
  authPolicyId: string,
): Promise<CertStateClaims> {
  const none: CertStateClaims = { z_ice: false, z_cae: false, z_cer: false, z_ckrr: false, z_iccc: false };
  if (!login.amr.includes('cert')) return none;
  const policy = await policyForIdentity(ctx.db, authPolicyId);
  const auth = login.authenticatorId ? await certAuthenticatorState(ctx.db, login.authenticatorId) : undefined;
  const networkIssued = auth !== undefined && auth.method === 'cert' && auth.caId === null && auth.fingerprint !== null;
  const asked = networkIssued ? await certExtendRequest(ctx.db, auth.id) : { extend: false, rollKeys: false };
  return {
    z_ice: networkIssued,
    z_cae: policy.primary.cert.allowExpiredCerts,
    z_cer: asked.extend,
    z_ckrr: asked.rollKeys,
    z_iccc: login.improperChain,
  };
}
