/**
 * PKCS#7 (CMS) "certs-only" bundles, as served at `/.well-known/est/cacerts` (RFC 7030 §4.1.3).
 *
 * The structure is fixed and tiny, so it is encoded here by hand: a degenerate SignedData (version 1, no digest
 * algorithms, content type `data` without content, the certificates, no signer infos). That is byte-for-byte the
 * shape OpenSSL's `crl2pkcs7 -nocrl` and the Go `pkcs7.DegenerateCertificate` the reference uses produce, which is
 * what the OpenZiti SDKs parse. (node-forge could build it only for RSA certificates; our CAs may be EC.)
 * Parsing goes through `@peculiar/x509`, which reads any certs-only SignedData.
 */
import { PkiError } from './errors.js';
import { parseCertificate, parseCertificateDer } from './certificate.js';
import type { CertificateInput, ParsedCertificate } from './certificate.js';
import { decodePemBlocks } from './pem.js';
import { x509 } from './x509-lib.js';

/** The content type the well-known endpoint answers with. */
export const PKCS7_MIME_TYPE = 'application/pkcs7-mime';

// 1.2.840.113549.1.7.2 (signedData) and 1.2.840.113549.1.7.1 (data), DER-encoded OBJECT IDENTIFIERs.
const OID_SIGNED_DATA = Buffer.from('06092a864886f70d010702', 'hex');
const OID_DATA = Buffer.from('06092a864886f70d010701', 'hex');

function derLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let n = length; n > 0; n = Math.floor(n / 256)) bytes.unshift(n & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, ...contents: Buffer[]): Buffer {
  const body = Buffer.concat(contents);
  return Buffer.concat([Buffer.from([tag]), derLength(body.length), body]);
}

/** DER of a certs-only PKCS#7 SignedData holding `certs` in the given order. */
export function certsOnlyPkcs7Der(certs: readonly CertificateInput[]): Buffer {
  const ders = certs.map((c) => parseCertificate(c).der);
  const signedData = tlv(
    0x30,
    tlv(0x02, Buffer.from([1])), // version 1
    tlv(0x31), // digestAlgorithms: empty SET
    tlv(0x30, OID_DATA), // encapContentInfo: data, no content
    tlv(0xa0, ...ders), // [0] IMPLICIT certificates
    tlv(0x31), // signerInfos: empty SET
  );
  return tlv(0x30, OID_SIGNED_DATA, tlv(0xa0, signedData));
}

/** Base64 with line breaks every `lineLength` characters (no trailing newline). */
export function base64Lines(der: Uint8Array, lineLength = 64): string {
  const b64 = Buffer.from(der).toString('base64');
  return (b64.match(new RegExp(`.{1,${lineLength}}`, 'g')) ?? []).join('\n');
}

/**
 * The body of `GET /.well-known/est/cacerts`: the CA bundle as base64 PKCS#7 certs-only, in 64-character lines
 * (parity: docs/reference-notes.md §7.3). `caBundle` is PEM text (all blocks must be certificates) or a list.
 */
export function caBundlePkcs7Base64(caBundle: string | readonly CertificateInput[]): string {
  const certs = typeof caBundle === 'string' ? parseBundle(caBundle) : caBundle;
  return base64Lines(certsOnlyPkcs7Der(certs));
}

function parseBundle(pem: string): ParsedCertificate[] {
  const blocks = decodePemBlocks(pem).filter((b) => b.type === 'CERTIFICATE');
  if (blocks.length === 0) throw new PkiError('not-pem', 'the CA bundle holds no certificate');
  return blocks.map((b) => parseCertificateDer(b.der));
}

/**
 * Reads the certificates of a PKCS#7 bundle given as base64 (line breaks allowed, as served by the well-known
 * endpoint), as PEM (`PKCS7` / `CMS` block), or as DER. Used by the CLI's enroll command to bootstrap trust.
 * @throws PkiError `bad-der` when it is not a certs-only SignedData.
 */
export function parsePkcs7Certificates(input: string | Uint8Array): ParsedCertificate[] {
  let der: Buffer;
  if (typeof input === 'string') {
    const pem = decodePemBlocks(input).find((b) => b.type === 'PKCS7' || b.type === 'CMS');
    der = pem !== undefined ? pem.der : Buffer.from(input.replace(/\s+/g, ''), 'base64');
  } else {
    der = Buffer.from(input);
  }
  let certs: InstanceType<typeof x509.X509Certificates>;
  try {
    certs = new x509.X509Certificates(der);
  } catch (cause) {
    throw new PkiError('bad-der', 'could not parse the PKCS#7 certificate bundle', { cause });
  }
  return Array.from(certs, (c) => parseCertificateDer(new Uint8Array(c.rawData)));
}
