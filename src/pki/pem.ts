/**
 * PEM encoding and decoding.
 *
 * A small strict decoder of our own rather than a library's, because callers must tell three failures apart
 * (no PEM at all / a block of the wrong type / bytes that are not DER) and libraries blur them. It follows Go's
 * `encoding/pem` on the points clients rely on: text around and between blocks is ignored, and a block whose
 * body is not base64 does not count as a block.
 */
import { PkiError } from './errors.js';

/** One `-----BEGIN <type>-----` … `-----END <type>-----` block with its decoded body. */
export interface PemBlock {
  /** The label, e.g. `CERTIFICATE`, `CERTIFICATE REQUEST`, `PRIVATE KEY`. */
  readonly type: string;
  /** The base64-decoded body (normally DER). */
  readonly der: Buffer;
}

const BLOCK_RE = /-----BEGIN ([A-Z0-9][A-Z0-9 #-]*?)-----([\s\S]*?)-----END \1-----/g;
const BASE64_BODY_RE = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Every well-formed PEM block in `text`, in order. Blocks with RFC 1421 headers (`Proc-Type:` …, i.e. legacy
 * encrypted keys) or a non-base64 body are skipped, as Go does. Returns an empty array when there is none.
 */
export function decodePemBlocks(text: string): PemBlock[] {
  const blocks: PemBlock[] = [];
  for (const match of text.matchAll(BLOCK_RE)) {
    const type = match[1] ?? '';
    const body = (match[2] ?? '').replace(/\s+/g, '');
    if (body.length === 0 || body.length % 4 !== 0 || !BASE64_BODY_RE.test(body)) continue;
    blocks.push({ type, der: Buffer.from(body, 'base64') });
  }
  return blocks;
}

/**
 * The blocks of `text`, all of which must be of one of `types`.
 * @throws PkiError `not-pem` when there is no block, `wrong-pem-type` when one has another type.
 */
export function decodePemBlocksOfType(text: string, types: readonly string[], what: string): PemBlock[] {
  const blocks = decodePemBlocks(text);
  if (blocks.length === 0) throw new PkiError('not-pem', `could not find a PEM block in the ${what}`);
  for (const block of blocks) {
    if (!types.includes(block.type)) {
      throw new PkiError('wrong-pem-type', `expected PEM block of type ${types[0]} but found ${block.type}`);
    }
  }
  return blocks;
}

/**
 * The first block of `text`, which must be of one of `types` (later blocks are ignored, as Go's `pem.Decode`
 * callers in the reference do).
 * @throws PkiError `not-pem` / `wrong-pem-type`.
 */
export function decodeFirstPemBlock(text: string, types: readonly string[], what: string): PemBlock {
  const [first] = decodePemBlocks(text);
  if (first === undefined) throw new PkiError('not-pem', `could not find a PEM block in the ${what}`);
  if (!types.includes(first.type)) {
    throw new PkiError('wrong-pem-type', `expected PEM block of type ${types[0]} but found ${first.type}`);
  }
  return first;
}

/** Encodes `der` as one PEM block with 64-character lines and a trailing newline. */
export function encodePem(type: string, der: Uint8Array): string {
  const b64 = Buffer.from(der).toString('base64');
  const lines = b64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${type}-----\n${lines.join('\n')}\n-----END ${type}-----\n`;
}

/** Joins PEM texts into one bundle, making sure each ends with a newline. */
export function joinPem(pems: readonly string[]): string {
  return pems.map((p) => (p.endsWith('\n') ? p : `${p}\n`)).join('');
}
