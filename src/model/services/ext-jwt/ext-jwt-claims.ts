/**
 * `claimsProperty` of an external JWT signer: a JSON pointer (RFC 6901) into the token's claims, the leading `/`
 * optional, so `sub`, `/sub` and `/user/email` all work (parity: docs/reference-notes.md §5.4).
 */
import { fieldError } from '../../errors.js';

/** The pointer's reference tokens; a field error on `claimsProperty` when it is not a usable pointer. */
export function parseClaimsPointer(pointer: string): string[] {
  const body = pointer.startsWith('/') ? pointer.slice(1) : pointer;
  if (body === '') throw fieldError('claimsProperty', 'claimsProperty must name a claim', pointer);
  const segments = body.split('/');
  for (const s of segments) {
    if (s === '' || /~(?![01])/.test(s))
      throw fieldError('claimsProperty', 'claimsProperty must be a JSON pointer such as sub or /user/email', pointer);
  }
  return segments.map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The value at `pointer` in `claims`, or undefined. */
export function claimAt(claims: unknown, pointer: string): unknown {
  let cur: unknown = claims;
  for (const seg of parseClaimsPointer(pointer)) {
    if (cur === null || typeof cur !== 'object') return undefined;
    if (Array.isArray(cur)) {
      if (!/^(0|[1-9]\d*)$/.test(seg)) return undefined;
      cur = cur[Number(seg)];
    } else {
      if (!Object.prototype.hasOwnProperty.call(cur, seg)) return undefined;
      cur = (cur as Record<string, unknown>)[seg];
    }
  }
  return cur;
}
