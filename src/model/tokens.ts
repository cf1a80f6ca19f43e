/**
 * Bearer tokens without clear copies in the store (docs/decisions.md, "Token storage").
 *
 * API-session, session and enrollment tokens must be shown again on later reads (the reference's schemas
 * require `token` on those records), so they cannot be random and forgotten. Instead each one is derived from
 * a secret key kept outside the store and the record's id: HMAC-SHA256(key, kind ":" id), shaped as a UUID v4
 * as clients expect. The store keeps only SHA-256 of the token (for one indexed lookup) and, for enrollments,
 * the signed JWT with its `jti` (the token) blanked. A copy of the store alone therefore grants nothing.
 */
import { createHash, createHmac } from 'node:crypto';

export type TokenKind = 'api-session' | 'session' | 'enrollment';

/** What the model needs to show a token again: the token of record `id` of one kind. */
export interface TokenMinter {
  token(kind: TokenKind, id: string): string;
  /** A 32-byte key for one purpose, derived from the same secret (e.g. sealing MFA secrets at rest). */
  key(purpose: KeyPurpose): Buffer;
}

/** What derived keys are for; each purpose gets its own key. */
export type KeyPurpose = 'mfa-secrets';

export const TOKEN_KEY_BYTES = 32;

/** Domain label of the derivation, so a later scheme can change it without colliding with this one. */
const LABEL = 'edgectl-token-v1';
const KEY_LABEL = 'edgectl-key-v1';

/** A minter over a 32-byte secret key (the daemon loads it from the data dir; tests pass a fixed one). */
export function tokenMinter(key: Uint8Array): TokenMinter {
  if (key.length !== TOKEN_KEY_BYTES) throw new Error(`the token key must be ${TOKEN_KEY_BYTES} bytes`);
  const secret = Buffer.from(key);
  return {
    token(kind, id) {
      const b = createHmac('sha256', secret).update(`${LABEL}:${kind}:${id}`).digest().subarray(0, 16);
      // UUID v4 layout: version nibble 4, RFC 4122 variant bits 10 (122 bits of the MAC remain).
      b[6] = (b[6]! & 0x0f) | 0x40;
      b[8] = (b[8]! & 0x3f) | 0x80;
      const h = b.toString('hex');
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
    },
    key(purpose) {
      // Another label than the tokens', so no key equals any token's MAC.
      return createHmac('sha256', secret).update(`${KEY_LABEL}:${purpose}`).digest();
    },
  };
}

/**
 * What the store keeps of a token: SHA-256, hex. Enough for random 122-bit tokens (no guessing the preimage),
 * and deterministic, so a presented token is found by one equality on an index.
 */
export const tokenHash = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

const BLANK_JTI = '"jti":""';

const decodeSegment = (s: string): string => Buffer.from(s, 'base64url').toString('utf8');
const encodeSegment = (s: string): string => Buffer.from(s, 'utf8').toString('base64url');

/** Replaces the one occurrence of `from` in `text` with `to`; anything else is a programming error. */
function replaceOnce(text: string, from: string, to: string): string {
  const at = text.indexOf(from);
  if (at < 0 || text.indexOf(from, at + 1) >= 0)
    throw new Error('enrollment JWT payload does not have exactly one expected jti');
  return text.slice(0, at) + to + text.slice(at + from.length);
}

/**
 * The storable form of an enrollment JWT: the same header and signature, the payload with `jti` emptied.
 * {@link jwtFromTemplate} puts the token back, giving the identical JWT (same bytes, same signature), so every
 * read shows what was signed once, and the store never holds the token.
 */
export function jwtTemplate(jwt: string, token: string): string {
  const [header, payload, signature, ...rest] = jwt.split('.');
  if (header === undefined || payload === undefined || signature === undefined || rest.length > 0)
    throw new Error('not a compact JWT');
  return `${header}.${encodeSegment(replaceOnce(decodeSegment(payload), `"jti":${JSON.stringify(token)}`, BLANK_JTI))}.${signature}`;
}

/** The JWT a {@link jwtTemplate} came from, given its token; an empty template (not yet signed) stays empty. */
export function jwtFromTemplate(template: string, token: string): string {
  if (template === '') return '';
  const [header, payload, signature] = template.split('.');
  return `${header}.${encodeSegment(replaceOnce(decodeSegment(payload ?? ''), BLANK_JTI, `"jti":${JSON.stringify(token)}`))}.${signature}`;
}
