/**
 * The `ext-jwt` primary login (parity: docs/reference-notes.md §5.4): the bearer token is verified first (outside
 * any transaction: it may fetch a JWKS), then one transaction checks the identity and its policy and starts the
 * API session.
 */
import type { Ctx } from '../ctx.js';
import { withDb } from '../ctx.js';
import { isDisabled } from '../resources/identity.js';
import { policyForIdentity } from './hooks/auth-policy.js';
import { identityStanding } from '../../store/identities.js';
import { withTx } from '../../store/db.js';
import { startApiSession, type AuthenticateBody } from './authenticate.js';
import { attachBearerEvidence } from './ext-jwt-secondary.js';
import { bearerToken, invalid, verifyBearer } from './ext-jwt-verify.js';

/**
 * `POST /authenticate?method=ext-jwt`: the bearer token is the credential. The identity must be enabled and
 * its auth policy must allow ext-jwt logins, and this signer when it lists signers.
 */
export async function authenticateExtJwt(
  ctx: Ctx,
  authorization: string | string[] | undefined,
  body: AuthenticateBody,
  ipAddress: string,
): Promise<string> {
  const verified = await verifyBearer(ctx, bearerToken(authorization));
  // The same token also answers a secondary ext-JWT requirement for its signer.
  attachBearerEvidence(body, verified);
  return withTx(ctx.db, async (trx) => {
    const identity = await identityStanding(trx, verified.identityId);
    if (!identity || isDisabled(identity, ctx.now())) throw invalid();
    const policy = await policyForIdentity(trx, identity.authPolicyId);
    const allowed = policy.primary.extJwt;
    if (!allowed.allowed) throw invalid();
    if (allowed.allowedSigners.length > 0 && !allowed.allowedSigners.includes(verified.signerId)) throw invalid();
    // The signer stands in for an authenticator: ext-jwt identities have none (docs/decisions.md).
    return startApiSession(
      withDb(ctx, trx),
      { identityId: identity.id, authenticatorId: verified.signerId, ipAddress },
      body,
    );
  });
}
