/**
 * Third-party CAs as trust anchors: which registered CAs may be used for what, and which of them vouches for a
 * client certificate (parity: docs/reference-notes.md §5.3, §7.3, §7.5).
 *
 * Only verified CAs are ever returned: an operator proves possession of a CA's key (`POST /cas/{id}/verify`)
 * before any certificate it issued can authenticate or enroll. Each use then has its own switch
 * (`isAuthEnabled`, `isAutoCaEnrollmentEnabled`, `isOttCaEnrollmentEnabled`).
 */
import {
  verifiedCaPems as verifiedCaPemsOf,
  verifiedCaRecords,
  type CaUseSwitch,
  type StoredVerifiedCa,
} from '../../store/cas.js';
import type { Ctx } from '../ctx.js';
import {
  parseCertificate,
  verifyChain,
  type CertificateInput,
  type ChainVerification,
  type ParsedCertificate,
} from '../../pki/index.js';
import type { ExternalIdClaim } from './external-id.js';

/** A verified CA with its parsed certificate and the settings enrollment and authentication read. */
export interface TrustedCa {
  id: string;
  name: string;
  certificate: ParsedCertificate;
  isAuthEnabled: boolean;
  isAutoCaEnrollmentEnabled: boolean;
  isOttCaEnrollmentEnabled: boolean;
  identityRoles: string[];
  identityNameFormat: string;
  externalIdClaim: ExternalIdClaim | null;
}

/** What the CA is about to be used for; selects the switch that must be on. */
export type CaUse = 'auth' | 'auto-enroll' | 'ott-enroll' | 'any';

const USE_COLUMN: Record<Exclude<CaUse, 'any'>, CaUseSwitch> = {
  auth: 'isAuthEnabled',
  'auto-enroll': 'isAutoCaEnrollmentEnabled',
  'ott-enroll': 'isOttCaEnrollmentEnabled',
};

// Parsing is the costly part of reading a CA; certificates never change for a given PEM, so parses are memoised.
const parsed = new Map<string, ParsedCertificate>();
function parseCached(pem: string): ParsedCertificate {
  let cert = parsed.get(pem);
  if (!cert) {
    if (parsed.size > 1000) parsed.clear();
    cert = parseCertificate(pem);
    parsed.set(pem, cert);
  }
  return cert;
}

function toTrusted(row: StoredVerifiedCa): TrustedCa {
  const { certPem, externalIdClaim, ...rest } = row;
  return {
    ...rest,
    certificate: parseCached(certPem),
    externalIdClaim: (externalIdClaim as ExternalIdClaim | null) ?? null,
  };
}

/** The verified CAs usable for `use`, oldest first (a stable order makes the chosen CA predictable). */
export async function verifiedCas(ctx: Ctx, use: CaUse, id?: string): Promise<TrustedCa[]> {
  const rows = await verifiedCaRecords(ctx.db, use === 'any' ? undefined : USE_COLUMN[use], id);
  return rows.map(toTrusted);
}

/** The first CA of `candidates` that `leaf` chains to (through the client's `intermediates`), with the path. */
export function findIssuingCa(
  candidates: readonly TrustedCa[],
  leaf: CertificateInput,
  intermediates: readonly CertificateInput[],
  now: Date,
): { ca: TrustedCa; verification: Extract<ChainVerification, { ok: true }> } | undefined {
  for (const ca of candidates) {
    const verification = verifyChain(leaf, { intermediates, trusted: [ca.certificate], now });
    if (verification.ok) return { ca, verification };
  }
  return undefined;
}

/** The PEMs of every verified CA: what the TLS listener adds to the CAs it names in its certificate request. */
export async function verifiedCaPems(ctx: Ctx): Promise<string[]> {
  return verifiedCaPemsOf(ctx.db);
}

/** Tells the daemon that the set of trusted CAs may have changed (a no-op where nobody listens). */
export function trustChanged(ctx: Ctx): void {
  ctx.pki?.trustChanged?.();
}
