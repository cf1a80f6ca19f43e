/**
 * Certificate profiles for what the controller signs from CSRs: identity/router client certificates, router
 * server certificates and API-session certificates (docs/reference-notes.md §7.6, §4.7).
 *
 * Identity naming: client certificates carry one URI SAN, a SPIFFE ID
 * `spiffe://<trust-domain>/<kind>/<id>` (kind `identity` or `router`), as the reference's newer versions do.
 * The default trust domain is `edgectl`. API-session certificates name the session as well:
 * `spiffe://<trust-domain>/identity/<identityId>/api-session/<apiSessionId>`.
 *
 * A client certificate carries only names the controller vouches for: an identity's and an
 * API session's certificate the SPIFFE ID alone, whatever the CSR asks for (the reference copies none of its
 * SANs either); a router's client certificate also the CSR's DNS and IP SANs, a router's server certificate all
 * of the CSR's SANs (as the reference: the router names the hosts it serves, and its enrollment is the admin's
 * word for it). A CSR never asks for more than 100 SANs (csr-bounds.ts). URI SANs of a client CSR are never
 * copied, so a client can never claim another identity's SPIFFE ID.
 */
import type { KeyObject } from 'node:crypto';
import { ExtendedKeyUsage, KeyUsage } from './authority.js';
import type { CertificateAuthority, IssueParams } from './authority.js';
import type { ParsedCertificate } from './certificate.js';
import { parseAndVerifyCsr } from './csr.js';
import type { ParsedCsr } from './csr.js';
import type { KeyDescription } from './keys.js';
import { joinPem } from './pem.js';

/** The default SPIFFE trust domain of identity URIs. */
export const DEFAULT_TRUST_DOMAIN = 'edgectl';
/** Identity and router certificates: one year (parity: §7.6). */
export const CLIENT_CERT_VALIDITY_MS = 365 * 24 * 60 * 60 * 1000;
/** API-session certificates: 12 hours (parity: §4.7). */
export const SESSION_CERT_VALIDITY_MS = 12 * 60 * 60 * 1000;
/** notBefore is back-dated by a minute so a client whose clock is slightly behind accepts a fresh certificate. */
export const CLOCK_SKEW_MS = 60 * 1000;

/** What a client certificate names. */
export type SubjectKind = 'identity' | 'router';

/** A certificate just issued, with what enrollment responses and authenticator records need. */
export interface IssuedCertificate {
  /** The certificate alone. */
  readonly certPem: string;
  /** The certificate followed by the issuing intermediate: what `/enroll/*` returns and TLS clients present. */
  readonly chainPem: string;
  readonly fingerprint: string;
  readonly serialNumber: string;
  readonly notBefore: Date;
  readonly notAfter: Date;
  readonly certificate: ParsedCertificate;
}

/**
 * The SPIFFE ID naming an identity or router: `spiffe://<trustDomain>/<kind>/<id>[/<extra segments>]`.
 * Segments are percent-encoded, so any id is safe.
 */
export function spiffeId(trustDomain: string, kind: SubjectKind, id: string, ...extra: string[]): string {
  return `spiffe://${trustDomain}/${[kind, id, ...extra].map(encodeURIComponent).join('/')}`;
}

/** Key usage for an end-entity key: RSA keys may encipher (key transport), EC keys only sign / agree. */
function leafKeyUsage(key: KeyDescription): number {
  return key.kind === 'rsa'
    ? KeyUsage.digitalSignature | KeyUsage.keyEncipherment | KeyUsage.dataEncipherment
    : KeyUsage.digitalSignature | KeyUsage.keyAgreement;
}

function issued(cert: ParsedCertificate, ca: CertificateAuthority): IssuedCertificate {
  return {
    certPem: cert.pem,
    chainPem: joinPem([cert.pem, ca.certPem]),
    fingerprint: cert.fingerprint,
    serialNumber: cert.serialNumber,
    notBefore: cert.notBefore,
    notAfter: cert.notAfter,
    certificate: cert,
  };
}

/** Issues a leaf (end-entity) certificate for a CSR's subject and key, valid from now (less clock skew). */
async function issueLeaf(
  ca: CertificateAuthority,
  req: ParsedCsr,
  now: Date,
  validityMs: number,
  extendedKeyUsage: string,
  sans: IssueParams['sans'],
): Promise<IssuedCertificate> {
  const cert = await ca.issue({
    subject: req.subjectDer,
    publicKey: req.publicKeySpki,
    notBefore: new Date(now.getTime() - CLOCK_SKEW_MS),
    notAfter: new Date(now.getTime() + validityMs),
    isCA: false,
    keyUsage: leafKeyUsage(req.keyDescription),
    extendedKeyUsage: [extendedKeyUsage],
    sans,
  });
  return issued(cert, ca);
}

/** Options of {@link signClientCsr}. */
export interface ClientCertificateOptions {
  /** The identity (or router) id the certificate names in its URI SAN. */
  readonly id: string;
  /** Default `identity`. */
  readonly kind?: SubjectKind;
  readonly trustDomain?: string;
  /** Issue time; default now. */
  readonly now?: Date;
  /** Default {@link CLIENT_CERT_VALIDITY_MS}. */
  readonly validityMs?: number;
}

/**
 * Signs a client certificate (identity `ott` enrollment, router `certCsr`, authenticator extension): subject
 * from the CSR, EKU clientAuth, URI SAN {@link spiffeId} (for a router, plus the CSR's DNS and IP SANs), valid
 * one year.
 * @throws PkiError for an unparsable CSR, an unacceptable key or a bad CSR signature.
 */
export async function signClientCsr(
  ca: CertificateAuthority,
  csr: string | Uint8Array | ParsedCsr,
  options: ClientCertificateOptions,
): Promise<IssuedCertificate> {
  const req = await parseAndVerifyCsr(csr);
  const now = options.now ?? new Date();
  const kind = options.kind ?? 'identity';
  const uri = spiffeId(options.trustDomain ?? DEFAULT_TRUST_DOMAIN, kind, options.id);
  const validity = options.validityMs ?? CLIENT_CERT_VALIDITY_MS;
  const hosts = kind === 'router' ? [...req.sans.dns, ...req.sans.ip] : [];
  return issueLeaf(ca, req, now, validity, ExtendedKeyUsage.clientAuth, { hosts, uris: [uri] });
}

/** Options of {@link signServerCsr}. */
export interface ServerCertificateOptions {
  /** Extra host names / IPs to add to the CSR's SANs. */
  readonly extraHosts?: readonly string[];
  readonly now?: Date;
  /** Default {@link CLIENT_CERT_VALIDITY_MS} (one year, as the reference). */
  readonly validityMs?: number;
}

/**
 * Signs a server certificate (router `serverCertCsr`): subject from the CSR, EKU serverAuth, the CSR's
 * DNS/IP/e-mail/URI SANs (plus `extraHosts`), valid one year.
 * @throws PkiError for an unparsable CSR, an unacceptable key or a bad CSR signature.
 */
export async function signServerCsr(
  ca: CertificateAuthority,
  csr: string | Uint8Array | ParsedCsr,
  options: ServerCertificateOptions = {},
): Promise<IssuedCertificate> {
  const req = await parseAndVerifyCsr(csr);
  const now = options.now ?? new Date();
  const sans = {
    hosts: [...req.sans.dns, ...req.sans.ip, ...(options.extraHosts ?? [])],
    emails: req.sans.email,
    uris: req.sans.uri,
  };
  return issueLeaf(ca, req, now, options.validityMs ?? CLIENT_CERT_VALIDITY_MS, ExtendedKeyUsage.serverAuth, sans);
}

/** Options of {@link signSessionCsr}. */
export interface SessionCertificateOptions {
  readonly identityId: string;
  readonly apiSessionId?: string;
  readonly trustDomain?: string;
  readonly now?: Date;
  /** Default {@link SESSION_CERT_VALIDITY_MS} (12 h). */
  readonly validityMs?: number;
}

/**
 * Signs a short-lived API-session certificate (`POST /current-api-session/certificates`): EKU clientAuth, one URI
 * SAN naming the identity and the API session, valid 12 hours.
 * @throws PkiError for an unparsable CSR, an unacceptable key or a bad CSR signature.
 */
export async function signSessionCsr(
  ca: CertificateAuthority,
  csr: string | Uint8Array | ParsedCsr,
  options: SessionCertificateOptions,
): Promise<IssuedCertificate> {
  const req = await parseAndVerifyCsr(csr);
  const now = options.now ?? new Date();
  const extra = options.apiSessionId !== undefined ? ['api-session', options.apiSessionId] : [];
  const uri = spiffeId(options.trustDomain ?? DEFAULT_TRUST_DOMAIN, 'identity', options.identityId, ...extra);
  return issueLeaf(ca, req, now, options.validityMs ?? SESSION_CERT_VALIDITY_MS, ExtendedKeyUsage.clientAuth, {
    uris: [uri],
  });
}

/**
 * Issues the controller's own TLS server certificate for `publicKey` (no CSR: the controller holds the key).
 * CN = the first host; SANs = all hosts; EKU serverAuth.
 */
export async function issueControllerServerCertificate(
  ca: CertificateAuthority,
  publicKey: KeyObject,
  keyDescription: KeyDescription,
  hosts: readonly string[],
  options: { readonly now?: Date; readonly validityMs: number },
): Promise<IssuedCertificate> {
  const now = options.now ?? new Date();
  const cert = await ca.issue({
    subject: [{ O: ['edgectl'] }, { CN: [hosts[0] ?? 'localhost'] }],
    publicKey,
    notBefore: new Date(now.getTime() - CLOCK_SKEW_MS),
    notAfter: new Date(now.getTime() + options.validityMs),
    isCA: false,
    keyUsage: leafKeyUsage(keyDescription),
    extendedKeyUsage: [ExtendedKeyUsage.serverAuth],
    sans: { hosts },
  });
  return issued(cert, ca);
}
