/**
 * The `ext-jwt` primary login (parity: docs/reference-notes.md §5.4) in two steps: the bearer token is verified
 * first (outside any transaction and outside the authentication limiter's concurrency gate: it may wait for an
 * identity provider's JWKS), then one transaction checks the identity and its policy and starts the API session.
 */
import type { Ctx } from '../../ctx.js';
import type { VerifiedToken } from './ext-jwt-keys.js';
import { withDb } from '../../ctx.js';
import { isDisabled } from '../../resources/identity.js';
import { policyForIdentity } from '../hooks/auth-policy.js';
import { identityStanding } from '../../../store/identities.js';
import { withTx } from '../../../store/db.js';
import { startApiSession, type AuthenticateBody } from '../authentication/authenticate.js';
import { attachBearerEvidence } from './ext-jwt-secondary.js';
import { bearerToken, invalid, verifyBearer } from './ext-jwt-verify.js';

/** `POST /authenticate?method=ext-jwt`, first step: the bearer token is the credential. */
export async function verifyExtJwtLogin(
  ctx: Ctx,
  authorization: string | string[] | undefined,
  body: AuthenticateBody,
): Promise<VerifiedToken> {
  const verified = await verifyBearer(ctx, bearerToken(authorization));
  // The same token also answers a secondary ext-JWT requirement for its signer.
  attachBearerEvidence(body, verified);
  return verified;
}

/**
 * Second step: the identity must be enabled and its auth policy must allow ext-jwt logins, and this signer when
 * it lists signers. Answers the new API session's id.
 */
export async function startExtJwtSession(
  ctx: Ctx,
  verified: VerifiedToken,
  body: AuthenticateBody,
  ipAddress: string,
): Promise<string> {
  return withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    return startApiSession(tctx, { ...(await checkExtJwtLogin(tctx, verified)), ipAddress }, body, 'ext-jwt');
  });
}

/**
 * Whether the verified token's identity may log in with it (call inside the login's transaction): enabled, and
 * its auth policy allows ext-jwt logins, and this signer when it lists signers. The signer stands in for an
 * authenticator: ext-jwt identities have none (docs/decisions.md).
 */
export async function checkExtJwtLogin(
  ctx: Ctx,
  verified: VerifiedToken,
): Promise<{ identityId: string; authenticatorId: string }> {
  const identity = await identityStanding(ctx.db, verified.identityId);
  if (!identity || isDisabled(identity, ctx.now())) throw invalid();
  const policy = await policyForIdentity(ctx.db, identity.authPolicyId);
  const allowed = policy.primary.extJwt;
  if (!allowed.allowed) throw invalid();
  if (allowed.allowedSigners.length > 0 && !allowed.allowedSigners.includes(verified.signerId)) throw invalid();
  return { identityId: identity.id, authenticatorId: verified.signerId };
}
