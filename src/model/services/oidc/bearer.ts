/**
 * `Authorization: Bearer <access token>` on the Client and Management APIs (docs/reference-notes.md §14.8): a
 * controller-issued access token stands for its API session wherever a `zt-session` would, under the same rules.
 *
 * Every request checks the signature and expiry, the token type, the revocations (by `jti`, by `z_asid`, by
 * identity with its cutoff), that the API session still exists and is not idle past the timeout, and that the
 * identity is not disabled. Admin rights and the auth policy come from the store, not from the claims. Nothing
 * of it is cached: a revocation or a deleted session bites on the next request, on every replica.
 */
import { randomUUID } from 'node:crypto';
import { isPkiError } from '../../../pki/index.js';
import { DomainError } from '../../errors.js';
import { checkTotp } from '../mfa/mfa.js';
import { touchApiSession } from '../../../store/api-sessions.js';
import { oidcSessionById } from '../../../store/oidc.js';
import { iso, type Ctx } from '../../ctx.js';
import { requirePki } from '../../pki.js';
import { isDisabled } from '../../resources/identity.js';
import { activityGranularityMs, deleteApiSessions, isExpired, type Principal } from '../api-session/api-session.js';
import { BearerRefusal } from '../ext-jwt/ext-jwt-verify.js';
import { policyForIdentity } from '../hooks/auth-policy.js';
import { revocationOf } from './revocations.js';
import { totpQuery } from './auth-requests.js';
import { bindingHolds } from './session-certs.js';

export const OIDC_REALM = 'openziti-oidc';

const refuse = (flavour: 'invalid' | 'expired') => new BearerRefusal(flavour, 'UNAUTHORIZED', OIDC_REALM);

/** The bearer tokens of an `Authorization` header (several values allowed; at most 3 looked at, §14.8). */
export function bearerTokens(header: string | string[] | undefined): string[] {
  const values = Array.isArray(header) ? header : header === undefined ? [] : header.split(/,\s*(?=Bearer\s)/i);
  return values
    .map((h) => /^Bearer\s+(\S+)\s*$/i.exec(h.trim())?.[1])
    .filter((t): t is string => t !== undefined)
    .slice(0, 3);
}

/**
 * Whether `token` looks like one of this controller's access tokens (unverified: `z_t` = `a` and a `z_asid`),
 * so that external JWTs beside it keep their own meaning.
 */
export function looksLikeAccessToken(token: string): boolean {
  const parts = token.split('.');
  if (parts.length !== 3 || token.length > 16_384) return false;
  try {
    const claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    return claims.z_t === 'a' && typeof claims.z_asid === 'string' && claims.z_asid !== '';
  } catch {
    return false;
  }
}

/** The certificates a token is bound to (`z_cfs`, lowercase hex SHA-1 fingerprints); empty when unbound. */
export const boundCertificates = (claims: Record<string, unknown>): string[] =>
  Array.isArray(claims.z_cfs) ? claims.z_cfs.filter((f): f is string => typeof f === 'string') : [];

/**
 * The principal of an access token. `presented` gives the fingerprint of the request's client certificate, asked
 * only for a certificate-bound token (`z_cfs`), which is refused without one of its certificates or an
 * API-session certificate of its session.
 * @throws BearerRefusal (401 UNAUTHORIZED, realm `openziti-oidc`) `expired` past `exp`, `invalid` for anything
 *   else: a bad signature, another token type, a revocation, an ended session, a disabled or deleted identity,
 *   a bound token without its certificate.
 */
export async function resolveBearer(
  ctx: Ctx,
  token: string,
  presented: () => string | undefined = () => undefined,
): Promise<Principal> {
  let claims: Record<string, unknown>;
  try {
    claims = await requirePki(ctx).controllerJwt.verify(token, ctx.now());
  } catch (e) {
    if (isPkiError(e)) throw refuse(e.reason === 'expired-jwt' ? 'expired' : 'invalid');
    throw e;
  }
  const { sub, jti, z_asid: asid, iat } = claims;
  if (
    claims.z_t !== 'a' ||
    typeof sub !== 'string' ||
    sub === '' ||
    typeof jti !== 'string' ||
    typeof asid !== 'string'
  )
    throw refuse('invalid');
  // parity: a bound token is used only beside one of its certificates or an API-session certificate of its session
  // (§14.6, binding).
  if (!(await bindingHolds(ctx, boundCertificates(claims), asid, presented()))) throw refuse('invalid');
  if (await revocationOf(ctx, { jti, identityId: sub, apiSessionId: asid, issuedAt: Number(iat) }))
    throw refuse('invalid');
  const session = await oidcSessionById(ctx.db, asid);
  const now = ctx.now();
  if (!session || session.identityId !== sub || isDisabled(session, now)) throw refuse('invalid');
  const lastActivityMs = new Date(session.lastActivityAt).getTime();
  if (isExpired(ctx, lastActivityMs, now)) {
    await deleteApiSessions(ctx, [asid]);
    throw refuse('invalid');
  }
  if (now.getTime() - lastActivityMs >= activityGranularityMs(ctx)) await touchApiSession(ctx.db, asid, iso(now));
  // Factors the policy asks for now that the token's login did not pass leave the session partial (§14.8).
  const policy = await policyForIdentity(ctx.db, session.authPolicyId);
  const amr = Array.isArray(claims.amr) ? claims.amr : [];
  const authQueries: unknown[] = [];
  if (policy.secondary.requireTotp && !amr.includes('totp')) authQueries.push(totpQuery(true));
  const signer = policy.secondary.requireExtJwtSigner ?? null;
  if (signer !== null && !amr.includes(`ejs:${signer}`))
    authQueries.push({ typeId: 'EXT-JWT', provider: 'url', id: signer });
  return {
    apiSessionId: asid,
    token,
    identity: {
      id: session.identityId,
      name: session.name,
      isAdmin: session.isAdmin,
      isDefaultAdmin: session.isDefaultAdmin,
      authPolicyId: session.authPolicyId,
    },
    authQueries,
    // The secondary ext-JWT of an OIDC session is judged from its login's `amr` (above), not per request.
    extJwtSigner: null,
    oidc: { claims },
  };
}

/**
 * `POST /current-api-session/totp-token` (docs/reference-notes.md §14.8): for an OIDC bearer session only (a
 * legacy one is 400 INVALID_BACKING_TOKEN_TYPE). A current TOTP code (no recovery code) earns a JWT saying so:
 * `z_t` = `t`, the caller's `z_asid`, no `exp` (it is only good beside a valid access token of that session).
 * A missing code, like a wrong one, is 400 MFA_INVALID_TOKEN.
 */
export async function createTotpToken(
  ctx: Ctx,
  principal: Principal,
  code: string | undefined,
  issuer: string,
): Promise<{ token: string; issuedAt: string }> {
  if (!principal.oidc) throw new DomainError('INVALID_BACKING_TOKEN_TYPE');
  const caller = { apiSessionId: principal.apiSessionId, identityId: principal.identity.id };
  try {
    await checkTotp(ctx, caller, code);
  } catch (e) {
    // parity: this operation answers 400 for a wrong code (the reference's status; elsewhere 401).
    if (e instanceof DomainError && e.code === 'MFA_INVALID_TOKEN')
      throw new DomainError('MFA_INVALID_TOKEN', { status: 400, causeMessage: e.causeMessage });
    throw e;
  }
  const now = ctx.now();
  const token = await requirePki(ctx).controllerJwt.sign({
    iss: issuer,
    sub: principal.identity.id,
    aud: principal.oidc.claims.aud ?? [],
    iat: Math.floor(now.getTime() / 1000),
    jti: randomUUID(),
    z_asid: principal.apiSessionId,
    z_t: 't',
  });
  return { token, issuedAt: iso(now) };
}
