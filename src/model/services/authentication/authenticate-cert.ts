/**
 * Primary authentication by TLS client certificate (parity: docs/reference-notes.md §5.3).
 *
 * Trust: the certificate must chain (validity dates ignored by the chain check) to the controller's CAs, or to
 * a verified third-party CA with `isAuthEnabled`, through the intermediates the client sent after its leaf.
 * Identity: found by the fingerprint of a `cert` authenticator; for a third-party CA with an `externalIdClaim`,
 * first by the identity whose `externalId` equals the claim's value (so the PKI may rotate certificates freely),
 * then by fingerprint. Then the identity must be enabled, its auth policy must allow certificates and, unless
 * `allowExpiredCerts`, the certificate must be within its validity window; a policy asking for a second factor is
 * refused until second factors are served. Every failure is the same 401
 * INVALID_AUTH; the reason is logged at debug level for operators.
 */
import { authenticatorIdOf, certAuthenticatorByFingerprint } from '../../../store/authenticators.js';
import { withTx } from '../../../store/db.js';
import { identityIdByExternalId, identityStanding } from '../../../store/identities.js';
import type { ParsedCertificate } from '../../../pki/index.js';
import { withDb, type Ctx } from '../../ctx.js';
import { DomainError } from '../../errors.js';
import { requirePki } from '../../pki.js';
import { policyForIdentity } from '../hooks/auth-policy.js';
import { isDisabled } from '../../resources/identity.js';
import { externalIdFromCertificate } from '../../ca/external-id.js';
import { findIssuingCa, verifiedCas } from '../../ca/trust.js';
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

/**
 * The presented leaf when it chains to the controller's own CAs, else undefined (no certificate, unreadable, or
 * from elsewhere). Used where only network-issued certificates count (certificate extension).
 */
export function networkIssuedPeer(ctx: Ctx, peer: PeerCertificates | undefined): ParsedCertificate | undefined {
  if (!peer) return undefined;
  try {
    const v = requirePki(ctx).verifyClientCertificate(peer.leaf, peer.intermediates, ctx.now());
    return v.ok ? v.leaf : undefined;
  } catch {
    return undefined;
  }
}

interface CertMatch {
  identityId: string;
  authenticatorId: string;
  withinValidity: boolean;
  /** The client sent its leaf without the intermediate that issued it (our own CAs only). */
  improperChain: boolean;
}

/** Who the presented certificate names, or a refusal. */
async function matchCertificate(ctx: Ctx, peer: PeerCertificates | undefined): Promise<CertMatch> {
  if (!peer) throw refused(ctx, 'no client certificate');
  const now = ctx.now();
  let own;
  try {
    own = requirePki(ctx).verifyClientCertificate(peer.leaf, peer.intermediates, now);
  } catch {
    throw refused(ctx, 'unreadable client certificate');
  }
  const leaf = own.leaf;
  const byFingerprint = async (): Promise<CertMatch> => {
    const auth = await certAuthenticatorByFingerprint(ctx.db, leaf.fingerprint);
    if (!auth) throw refused(ctx, 'no authenticator has this certificate', { fingerprint: leaf.fingerprint });
    return {
      identityId: auth.identityId,
      authenticatorId: auth.id,
      withinValidity: own.withinValidity,
      improperChain: own.ok && own.improperChain,
    };
  };
  if (own.ok) return byFingerprint();

  let issuer;
  try {
    issuer = findIssuingCa(await verifiedCas(ctx, 'auth'), leaf, peer.intermediates, now);
  } catch {
    throw refused(ctx, 'unreadable client certificate chain', { fingerprint: leaf.fingerprint });
  }
  if (!issuer) throw refused(ctx, 'certificate does not chain to a trusted CA', { fingerprint: leaf.fingerprint });
  const claim = issuer.ca.externalIdClaim;
  const externalId = claim ? externalIdFromCertificate(claim, leaf) : undefined;
  if (externalId !== undefined) {
    const identityId = await identityIdByExternalId(ctx.db, externalId);
    if (identityId !== undefined) {
      const authenticatorId = await authenticatorIdOf(ctx.db, identityId, 'cert');
      // An identity matched by claim may have no authenticator at all: the session then names the CA that vouched.
      return {
        identityId,
        authenticatorId: authenticatorId ?? issuer.ca.id,
        withinValidity: own.withinValidity,
        improperChain: false,
      };
    }
  }
  return byFingerprint();
}

/** Authenticates the presenter of `peer` and returns the new API session's id. */
export async function authenticateCert(
  ctx: Ctx,
  peer: PeerCertificates | undefined,
  body: AuthenticateBody,
  ipAddress: string,
): Promise<string> {
  return withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    const login = await checkCertLogin(tctx, peer);
    return startApiSession(tctx, { ...login, ipAddress }, body, 'cert');
  });
}

/**
 * Who the presenter of `peer` is, when the certificate, the identity and its auth policy allow the login (call
 * inside the login's transaction); every refusal is 401 INVALID_AUTH.
 */
export async function checkCertLogin(
  ctx: Ctx,
  peer: PeerCertificates | undefined,
): Promise<{ identityId: string; authenticatorId: string; improperChain: boolean }> {
  const match = await matchCertificate(ctx, peer);
  const now = ctx.now();
  const identity = await identityStanding(ctx.db, match.identityId);
  if (!identity || isDisabled(identity, now)) throw refused(ctx, 'identity disabled', { identityId: match.identityId });
  const policy = await policyForIdentity(ctx.db, identity.authPolicyId);
  if (!policy.primary.cert.allowed)
    throw refused(ctx, 'auth policy does not allow certificates', { identityId: identity.id });
  if (!policy.primary.cert.allowExpiredCerts && !match.withinValidity) {
    throw refused(ctx, 'certificate outside its validity and the auth policy does not allow expired certificates', {
      identityId: identity.id,
    });
  }
  return { identityId: identity.id, authenticatorId: match.authenticatorId, improperChain: match.improperChain };
}
