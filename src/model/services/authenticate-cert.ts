/**
 * Primary authentication by TLS client certificate (parity: controller-behaviours.md §5.3).
 *
 * The certificate must chain to the controller's CAs (validity dates ignored by the chain check), its
 * fingerprint must belong to a `cert` authenticator, the identity must be enabled, and its auth policy must
 * allow certificates (and, unless `allowExpiredCerts`, the certificate must be within its validity window).
 * Every failure is the same 401 INVALID_AUTH; the reason is logged at debug level for operators.
 */
import { withTx } from '../../store/db.js';
import { withDb, type Ctx } from '../ctx.js';
import { DomainError } from '../errors.js';
import { requirePki } from '../pki.js';
import { policyForIdentity } from '../resources/auth-policy.js';
import { isDisabled } from '../resources/identity.js';
import { startApiSession, type AuthenticateBody } from './authenticate.js';

/** The certificates a TLS client presented: its leaf, then whatever intermediates it sent. */
export interface PeerCertificates {
  leaf: Uint8Array;
  intermediates: Uint8Array[];
}

function refused(ctx: Ctx, reason: string, detail: Record<string, unknown> = {}): DomainError {
  ctx.log.debug({ ...detail, reason }, 'certificate authentication refused');
  return new DomainError('INVALID_AUTH');
}

/** Authenticates the presenter of `peer` and returns the new API session's id. */
export async function authenticateCert(ctx: Ctx, peer: PeerCertificates | undefined, body: AuthenticateBody, ipAddress: string): Promise<string> {
  if (!peer) throw refused(ctx, 'no client certificate');
  const now = ctx.now();
  let verified;
  try {
    verified = requirePki(ctx).verifyClientCertificate(peer.leaf, peer.intermediates, now);
  } catch {
    throw refused(ctx, 'unreadable client certificate');
  }
  const fingerprint = verified.leaf.fingerprint;
  if (!verified.ok) throw refused(ctx, 'certificate does not chain to a trusted CA', { fingerprint });

  return withTx(ctx.db, async (trx) => {
    const auth = await trx
      .selectFrom('authenticators')
      .select(['id', 'identityId'])
      .where('method', '=', 'cert')
      .where('fingerprint', '=', fingerprint)
      .executeTakeFirst();
    if (!auth) throw refused(ctx, 'no authenticator has this certificate', { fingerprint });
    const identity = await trx.selectFrom('identities').selectAll().where('id', '=', auth.identityId).executeTakeFirst();
    if (!identity || isDisabled(identity, now)) throw refused(ctx, 'identity disabled', { identityId: auth.identityId });
    const policy = await policyForIdentity(trx, identity.authPolicyId);
    if (!policy.primary.cert.allowed) throw refused(ctx, 'auth policy does not allow certificates', { identityId: identity.id });
    if (!policy.primary.cert.allowExpiredCerts && !verified.withinValidity) {
      throw refused(ctx, 'certificate outside its validity and the auth policy does not allow expired certificates', { identityId: identity.id });
    }
    return startApiSession(
      withDb(ctx, trx),
      { identityId: identity.id, authenticatorId: auth.id, ipAddress },
      body,
    );
  });
}
