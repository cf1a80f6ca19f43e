/**
 * Token revocation (`/oidc/revoke`, RFC 7009) and logout (`/oidc/end_session`): docs/reference-notes.md §14.9.
 */
import { isPkiError } from '../../../pki/index.js';
import { type Ctx } from '../../ctx.js';
import { requirePki } from '../../pki.js';
import { deleteApiSessions } from '../api-session/api-session.js';
import { allowedUris } from './auth-requests.js';
import { withQuery } from './oidc-errors.js';
import { redirectAllowed } from './oidc-settings.js';
import { revoke, revocationLifetimeMs } from './revocations.js';

/** The claims of a JWT this controller signed, its expiry aside (a logout hint may be old); undefined otherwise. */
async function signedClaims(ctx: Ctx, token: string | undefined): Promise<Record<string, unknown> | undefined> {
  if (!token || token.length > 16_384) return undefined;
  let iat: unknown;
  try {
    iat = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')).iat;
  } catch {
    return undefined;
  }
  if (typeof iat !== 'number') return undefined;
  try {
    // Judged at its own issue time: the signature is what counts here, not whether it is still current.
    return await requirePki(ctx).controllerJwt.verify(token, new Date(iat * 1000));
  } catch (e) {
    if (isPkiError(e)) return undefined;
    throw e;
  }
}

/**
 * `POST /oidc/revoke`: a refresh token is revoked by `jti` until its `exp`, an access token by `jti` for the
 * longest token lifetime. Tokens that are not this controller's are ignored (the answer is the same).
 */
export async function revokeToken(ctx: Ctx, token: string | undefined): Promise<void> {
  const claims = await signedClaims(ctx, token);
  if (!claims || typeof claims.jti !== 'string' || (claims.z_t !== 'a' && claims.z_t !== 'r')) return;
  const exp = typeof claims.exp === 'number' ? new Date(claims.exp * 1000) : undefined;
  const longest = new Date(ctx.now().getTime() + revocationLifetimeMs(ctx));
  await revoke(ctx, { id: claims.jti, type: 'JTI', expiresAt: claims.z_t === 'r' && exp ? exp : longest });
}

/**
 * `/oidc/end_session`: the hint's API session (`z_asid`) is revoked and ended; a hint without one revokes its
 * identity's tokens issued until now. Answers where to send the client: an allowed `post_logout_redirect_uri`
 * (with `state`), else `<issuer>/logged-out`.
 */
export async function endSession(
  ctx: Ctx,
  params: Record<string, string | undefined>,
  issuer: string,
  controllerId?: string,
): Promise<string> {
  const claims = await signedClaims(ctx, params.id_token_hint);
  if (claims && typeof claims.z_asid === 'string') {
    await revoke(ctx, { id: claims.z_asid, type: 'API_SESSION' });
    await deleteApiSessions(ctx, [claims.z_asid]);
  } else if (claims && typeof claims.sub === 'string') {
    await revoke(ctx, { id: claims.sub, type: 'IDENTITY' });
  }
  const target = params.post_logout_redirect_uri;
  if (target && redirectAllowed(target, await allowedUris(ctx, controllerId, 'postLogoutUris')))
    return params.state ? withQuery(target, { state: params.state }) : target;
  return `${issuer}/logged-out`;
}
