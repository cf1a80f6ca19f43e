/**
 * Parsing certificates and reading the fields the controller needs (CN, subject, SANs, validity, CA flag).
 *
 * Two parsers look at each certificate: Node's `X509Certificate` (OpenSSL; used for signature checks, it is
 * native and authoritative about DER validity) and `@peculiar/x509` (for structured names and SANs, which Node
 * only offers as display strings). A certificate that either cannot read is rejected as bad DER.
 */
import { X509Certificate as NodeX509Certificate } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import { PkiError } from './errors.js';
import { fingerprintDer } from './fingerprint.js';
import { describeKey } from './keys.js';
import type { KeyDescription } from './keys.js';
import { decodeFirstPemBlock, decodePemBlocksOfType, encodePem } from './pem.js';
import { x509 } from './x509-lib.js';

/** PEM labels accepted for certificates (`X509 CERTIFICATE` is an old OpenSSL spelling). */
export const CERTIFICATE_PEM_TYPES = ['CERTIFICATE', 'X509 CERTIFICATE'] as const;

/** Subject alternative names by kind; IPs normalised (IPv6 compressed, lowercase), DNS names lowercase. */
export interface SubjectAltNames {
  readonly dns: readonly string[];
  readonly ip: readonly string[];
  readonly uri: readonly string[];
  readonly email: readonly string[];
}

/** A parsed certificate: its encodings, the fields callers read, and Node's view for signature checks. */
export interface ParsedCertificate {
  readonly der: Buffer;
  /** The certificate alone as PEM (re-encoded, so always canonical). */
  readonly pem: string;
  /** Lowercase hex SHA-1 of the DER, no separators (the reference's fingerprint format). */
  readonly fingerprint: string;
  /** Subject DN as text, e.g. `O=edgectl, CN=edgectl Root CA`. */
  readonly subject: string;
  readonly issuer: string;
  /** The subject Name exactly as encoded (to issue under the same name, or as the issuer of children). */
  readonly subjectDer: Buffer;
  /** The (first) subject common name, if any. */
  readonly commonName: string | undefined;
  /** Serial number as lowercase hex. */
  readonly serialNumber: string;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** basicConstraints cA=true. */
  readonly isCA: boolean;
  readonly sans: SubjectAltNames;
  /** Extended key usage OIDs (empty when the extension is absent, which means "any"). */
  readonly extendedKeyUsage: readonly string[];
  readonly publicKey: KeyObject;
  readonly keyDescription: KeyDescription;
  /** Node's certificate object: `verify(publicKey)`, `checkIssued(other)`. */
  readonly node: NodeX509Certificate;
}

/** Anything that names a certificate: PEM text (first CERTIFICATE block), DER bytes, or an already parsed one. */
export type CertificateInput = string | Uint8Array | ParsedCertificate;

/**
 * Normalises a host name or IP literal for SAN comparison: strips IPv6 brackets and a trailing dot,
 * lowercases DNS names, compresses IPv6. Returns `undefined` for an empty string.
 */
export function normalizeHost(host: string): string | undefined {
  let h = host.trim();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.endsWith('.')) h = h.slice(0, -1);
  if (h === '') return undefined;
  const family = isIP(h);
  if (family === 6) return new URL(`http://[${h}]/`).hostname.slice(1, -1);
  if (family === 4) return h;
  return h.toLowerCase();
}

function readSans(cert: InstanceType<typeof x509.X509Certificate>, node: NodeX509Certificate): SubjectAltNames {
  const dns: string[] = [];
  const ip: string[] = [];
  const uri: string[] = [];
  const email: string[] = [];
  const add = (type: string, value: string): void => {
    if (type === 'dns') dns.push(value.toLowerCase());
    else if (type === 'ip') ip.push(normalizeHost(value) ?? value);
    else if (type === 'url') uri.push(value);
    else if (type === 'email') email.push(value);
  };
  let ext: InstanceType<typeof x509.SubjectAlternativeNameExtension> | null;
  try {
    ext = cert.getExtension(x509.SubjectAlternativeNameExtension);
    if (ext !== null) for (const name of ext.names.items) add(name.type, name.value);
  } catch {
    // The library refuses SAN entries it cannot render (e.g. otherName of an unknown type, as some third-party
    // CAs issue). Fall back to Node's display string, which lists every entry; unknown kinds are skipped.
    dns.length = ip.length = uri.length = email.length = 0;
    const kinds: Record<string, string> = { DNS: 'dns', 'IP Address': 'ip', URI: 'url', email: 'email' };
    const entry = /([A-Za-z ]+):("(?:[^"\\]|\\.)*"|[^,]*)(?:, |$)/g;
    for (const m of (node.subjectAltName ?? '').matchAll(entry)) {
      const kind = kinds[m[1] ?? ''];
      const raw = m[2] ?? '';
      if (kind !== undefined) add(kind, raw.startsWith('"') ? (JSON.parse(raw) as string) : raw);
    }
  }
  return { dns, ip, uri, email };
}

/** Parses one DER-encoded certificate. @throws PkiError `bad-der`. */
export function parseCertificateDer(der: Uint8Array): ParsedCertificate {
  const buf = Buffer.from(der);
  let node: NodeX509Certificate;
  let cert: InstanceType<typeof x509.X509Certificate>;
  let sans: SubjectAltNames;
  let extendedKeyUsage: string[];
  try {
    node = new NodeX509Certificate(buf);
    cert = new x509.X509Certificate(buf);
    sans = readSans(cert, node);
    const eku = cert.getExtension(x509.ExtendedKeyUsageExtension);
    extendedKeyUsage = eku === null ? [] : Array.from(eku.usages, String);
  } catch (cause) {
    throw new PkiError('bad-der', 'could not parse the certificate DER', { cause });
  }
  const publicKey = node.publicKey;
  return {
    der: buf,
    pem: encodePem('CERTIFICATE', buf),
    fingerprint: fingerprintDer(buf),
    subject: cert.subject,
    issuer: cert.issuer,
    subjectDer: Buffer.from(cert.subjectName.toArrayBuffer()),
    commonName: cert.subjectName.getField('CN')[0],
    serialNumber: cert.serialNumber.toLowerCase(),
    notBefore: cert.notBefore,
    notAfter: cert.notAfter,
    isCA: node.ca,
    sans,
    extendedKeyUsage,
    publicKey,
    keyDescription: describeKey(publicKey),
    node,
  };
}

/**
 * Parses a certificate: PEM text (its first block, which must be a CERTIFICATE), DER bytes, or passes a parsed
 * one through.
 * @throws PkiError `not-pem`, `wrong-pem-type` or `bad-der`.
 */
export function parseCertificate(input: CertificateInput): ParsedCertificate {
  if (typeof input === 'string') {
    return parseCertificateDer(decodeFirstPemBlock(input, CERTIFICATE_PEM_TYPES, 'certificate').der);
  }
  if (input instanceof Uint8Array) return parseCertificateDer(input);
  return input;
}

/**
 * Parses every certificate of a PEM bundle or chain, in order. All blocks must be certificates.
 * @throws PkiError `not-pem`, `wrong-pem-type` or `bad-der`.
 */
export function parseCertificates(pem: string): ParsedCertificate[] {
  return decodePemBlocksOfType(pem, CERTIFICATE_PEM_TYPES, 'certificate bundle').map((b) => parseCertificateDer(b.der));
}

/** True when `host` (DNS name or IP literal) is listed in the certificate's SANs (exact match, no wildcards). */
export function certificateCoversHost(cert: ParsedCertificate, host: string): boolean {
  const h = normalizeHost(host);
  if (h === undefined) return false;
  return isIP(h) !== 0 ? cert.sans.ip.includes(h) : cert.sans.dns.includes(h);
}

/** True when `now` lies within the certificate's notBefore..notAfter (inclusive). */
export function isWithinValidity(cert: CertificateInput, now: Date = new Date()): boolean {
  const c = parseCertificate(cert);
  const t = now.getTime();
  return t >= c.notBefore.getTime() && t <= c.notAfter.getTime();
}
