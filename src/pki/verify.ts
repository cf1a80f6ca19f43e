/**
 * Certificate signature and chain verification.
 *
 * parity: the reference verifies client certificates ignoring validity dates (expiry is judged separately by the
 * auth policy's `allowExpiredCerts`) and accepting any extended key usage (docs/reference-notes.md §5.3). So this
 * is a plain path builder over signatures and CA flags; the leaf's validity window is reported, not enforced.
 * Signatures are checked by Node's OpenSSL binding (`X509Certificate.verify` / `checkIssued`).
 */
import { parseCertificate } from './certificate.js';
import type { CertificateInput, ParsedCertificate } from './certificate.js';

/**
 * True when `cert` was signed by `issuer`: the issuer name (and key identifiers, when present) match, the issuer's
 * key usage (if any) allows certificate signing, and the signature verifies with the issuer's public key.
 * Used for CA verification (`POST /cas/{id}/verify`: a certificate whose CN is the verification token, signed by
 * the CA) and as the step of chain building. The issuer's CA flag is not checked here; {@link verifyChain} does.
 */
export function isIssuedBy(cert: CertificateInput, issuer: CertificateInput): boolean {
  const child = parseCertificate(cert);
  const parent = parseCertificate(issuer);
  try {
    return child.node.checkIssued(parent.node) && child.node.verify(parent.publicKey);
  } catch {
    return false;
  }
}

/** Outcome of {@link verifyChain}. `withinValidity` is reported in both cases so callers can word errors. */
export type ChainVerification =
  | {
      readonly ok: true;
      readonly leaf: ParsedCertificate;
      /** leaf → … → anchor (the anchor is the trusted certificate the path ended at). */
      readonly chain: readonly ParsedCertificate[];
      readonly anchor: ParsedCertificate;
      /** Whether `now` lies within the leaf's notBefore..notAfter. */
      readonly withinValidity: boolean;
    }
  | {
      readonly ok: false;
      readonly leaf: ParsedCertificate;
      readonly reason: 'no-path-to-trusted-certificate';
      readonly withinValidity: boolean;
    };

/** Inputs of {@link verifyChain}. */
export interface VerifyChainOptions {
  /** Untrusted certificates that may complete the path (e.g. the intermediates a TLS client sent after its leaf). */
  readonly intermediates?: readonly CertificateInput[];
  /** Trust anchors: roots and/or intermediates. A path succeeds as soon as it reaches any of them. */
  readonly trusted: readonly CertificateInput[];
  /** The time the leaf's validity is judged at; default now. */
  readonly now?: Date;
  /** Maximum number of certificates in a path, leaf included; default 10. */
  readonly maxDepth?: number;
}

/**
 * Verifies that `leaf` chains, by signatures, to one of `trusted`, optionally through `intermediates`.
 * Validity dates of all certificates are ignored; every issuer on the path must be a CA (basicConstraints).
 * A leaf that is itself one of the trusted certificates (same DER) verifies with a one-element chain.
 */
export function verifyChain(leafInput: CertificateInput, options: VerifyChainOptions): ChainVerification {
  const leaf = parseCertificate(leafInput);
  const trusted = options.trusted.map(parseCertificate);
  const intermediates = (options.intermediates ?? []).map(parseCertificate);
  const maxDepth = options.maxDepth ?? 10;
  const now = (options.now ?? new Date()).getTime();
  const withinValidity = now >= leaf.notBefore.getTime() && now <= leaf.notAfter.getTime();
  const trustedPrints = new Set(trusted.map((c) => c.fingerprint));

  const search = (cert: ParsedCertificate, path: ParsedCertificate[]): ParsedCertificate[] | undefined => {
    if (trustedPrints.has(cert.fingerprint)) return path;
    if (path.length >= maxDepth) return undefined;
    // Trusted issuers first: the shortest path to an anchor is the one the reference's Go verifier finds.
    for (const candidate of [...trusted, ...intermediates]) {
      if (!candidate.isCA) continue;
      if (path.some((p) => p.fingerprint === candidate.fingerprint)) continue;
      if (!isIssuedBy(cert, candidate)) continue;
      const found = search(candidate, [...path, candidate]);
      if (found !== undefined) return found;
    }
    return undefined;
  };

  const chain = search(leaf, [leaf]);
  if (chain === undefined) return { ok: false, leaf, reason: 'no-path-to-trusted-certificate', withinValidity };
  const anchor = chain[chain.length - 1] ?? leaf;
  return { ok: true, leaf, chain, anchor, withinValidity };
}
