/**
 * Bounds on a CSR, checked before it is parsed: its size, and how many subject alternative
 * names it asks for. The ASN.1 library parses a CSR synchronously and its SANs slowly (~0.1 ms each), so a valid
 * CSR with thousands of SANs held the event loop for a second; within these bounds a parse takes milliseconds.
 *
 * The SANs are counted without parsing: a walk over the DER's tag-length headers along the one path that holds
 * them (CertificationRequest → CertificationRequestInfo → attributes → extensionRequest → Extensions →
 * subjectAltName → GeneralNames), decoding nothing. It counts every SAN extension of every extensionRequest
 * value, more than the parser reads, and refuses what is not DER on that path (an indefinite length, a length
 * overrunning its parent, an unexpected tag), so no encoding can hide SANs from the count.
 */
import { PkiError } from './errors.js';

/** The largest CSR accepted: 32 KiB of PEM text, or of DER. */
export const MAX_CSR_BYTES = 32 * 1024;
/** The most subject alternative names a CSR may ask for. */
export const MAX_CSR_SANS = 100;

const SEQUENCE = 0x30;
const SET = 0x31;
const OID = 0x06;
const OCTET_STRING = 0x04;
/** `[0] IMPLICIT` constructed: the attributes of a CertificationRequestInfo. */
const ATTRIBUTES = 0xa0;
/** 1.2.840.113549.1.9.14 (PKCS#9 extensionRequest), content octets. */
const EXTENSION_REQUEST = Buffer.from([0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x0e]);
/** 2.5.29.17 (subjectAltName), content octets. */
const SUBJECT_ALT_NAME = Buffer.from([0x55, 0x1d, 0x11]);

/** One DER element: its tag and where its content lies in the buffer. */
interface Tlv {
  readonly tag: number;
  readonly start: number;
  readonly end: number;
}

const notDer = () => new PkiError('bad-der', 'could not parse the certificate signing request');

/** The element starting at `pos`, which must end by `limit`; definite lengths only (DER). */
function readTlv(der: Uint8Array, pos: number, limit: number): Tlv {
  if (pos + 2 > limit) throw notDer();
  const tag = der[pos]!;
  if ((tag & 0x1f) === 0x1f) throw notDer(); // high tag numbers do not occur on the walked path
  let length = der[pos + 1]!;
  let start = pos + 2;
  if (length & 0x80) {
    const octets = length & 0x7f;
    if (octets === 0 || octets > 3 || start + octets > limit) throw notDer(); // 0: BER's indefinite length
    length = 0;
    for (let i = 0; i < octets; i++) length = length * 256 + der[start + i]!;
    start += octets;
  }
  if (start + length > limit) throw notDer();
  return { tag, start, end: start + length };
}

/** The elements inside `parent`'s content, in order. */
function* children(der: Uint8Array, parent: Tlv): Generator<Tlv> {
  for (let pos = parent.start; pos < parent.end;) {
    const child = readTlv(der, pos, parent.end);
    yield child;
    pos = child.end;
  }
}

function expect(tlv: Tlv | undefined, tag: number): Tlv {
  if (tlv?.tag !== tag) throw notDer();
  return tlv;
}

const isOid = (der: Uint8Array, tlv: Tlv, oid: Buffer) =>
  tlv.tag === OID && Buffer.from(der.buffer, der.byteOffset + tlv.start, tlv.end - tlv.start).equals(oid);

/** How many names the subjectAltName extensions of one `Extensions` value ask for. */
function sansInExtensions(der: Uint8Array, extensions: Tlv): number {
  let count = 0;
  for (const extension of children(der, expect(extensions, SEQUENCE))) {
    const parts = [...children(der, expect(extension, SEQUENCE))];
    if (!isOid(der, expect(parts[0], OID), SUBJECT_ALT_NAME)) continue;
    const value = expect(parts[parts.length - 1], OCTET_STRING);
    const names = expect(readTlv(der, value.start, value.end), SEQUENCE);
    for (const _name of children(der, names)) count++;
  }
  return count;
}

/**
 * How many subject alternative names a DER CSR asks for, summed over every SAN extension it carries.
 * @throws PkiError `bad-der` when the headers on the way are not DER.
 */
export function countRequestedSans(der: Uint8Array): number {
  const request = expect(readTlv(der, 0, der.length), SEQUENCE);
  const info = expect(children(der, request).next().value, SEQUENCE);
  let count = 0;
  for (const field of children(der, info)) {
    if (field.tag !== ATTRIBUTES) continue;
    for (const attribute of children(der, field)) {
      const [type, values] = children(der, expect(attribute, SEQUENCE));
      if (!type || !isOid(der, type, EXTENSION_REQUEST)) continue;
      for (const value of children(der, expect(values, SET))) count += sansInExtensions(der, value);
    }
  }
  return count;
}

/**
 * Refuses a CSR (PEM text or DER) larger than {@link MAX_CSR_BYTES}, before anything decodes it.
 * @throws PkiError `over-limit`, naming the bound.
 */
export function assertCsrSize(input: string | Uint8Array): void {
  const size = typeof input === 'string' ? Buffer.byteLength(input) : input.byteLength;
  if (size > MAX_CSR_BYTES) {
    throw new PkiError(
      'over-limit',
      `the certificate signing request is ${size} bytes; at most ${MAX_CSR_BYTES} bytes (32 KiB) are accepted`,
    );
  }
}

/**
 * Refuses a DER CSR asking for more than {@link MAX_CSR_SANS} subject alternative names, before it is parsed.
 * @throws PkiError `over-limit`, naming the bound; `bad-der` when the walked headers are not DER.
 */
export function assertCsrSans(der: Uint8Array): void {
  const sans = countRequestedSans(der);
  if (sans > MAX_CSR_SANS) {
    throw new PkiError(
      'over-limit',
      `the certificate signing request asks for ${sans} subject alternative names; at most ${MAX_CSR_SANS} are accepted`,
    );
  }
}
