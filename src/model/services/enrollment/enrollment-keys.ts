/**
 * The enrollment signing keys (`GET /enroll/jwks`) and the nonce challenge (`POST /enroll/challenge`), which the
 * reference declares but does not serve (docs/decisions.md, "Enrollment keys and the nonce challenge"). Enrollment
 * JWTs are signed by the controller's server key, `kid` = its certificate's fingerprint: the set is that one key,
 * and a challenge names it by that `kid`. The answer carries the CA bundle (`caPool`) the client can check the
 * key's certificate (the JWK's `x5c`) against.
 */
import type { Ctx } from '../../ctx.js';
import { fieldError } from '../../errors.js';
import { requirePki } from '../../pki.js';

export function enrollmentJwks(ctx: Ctx): Promise<{ keys: object[] }> {
  return requirePki(ctx).enrollmentJwks();
}

export interface NonceSignature {
  signature: string;
  algorithm: string;
  kid: string;
  caPool: string;
}

/** Signs the client's nonce with the enrollment key `keyId`; 400 naming `keyId` when no key has that id. */
export function enrollmentChallenge(ctx: Ctx, nonce: string, keyId: string): NonceSignature {
  const pki = requirePki(ctx);
  const signed = pki.signNonce(keyId, nonce);
  if (!signed) throw fieldError('keyId', 'no enrollment signing key has this id', keyId);
  return { ...signed, caPool: pki.caBundlePem };
}
