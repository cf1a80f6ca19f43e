/**
 * Enrollment with an external JWT (`POST /enroll/token`; docs/decisions.md, "Enrollment with an external JWT"):
 * a token of an external JWT signer that allows it makes a new identity, named and given attributes by the
 * token's claims, with a network-issued certificate (the request carries a CSR: the signer needs
 * `enrollToCertEnabled`) or as an identity that logs in with such tokens (no CSR: `enrollToTokenEnabled`).
 *
 * In order, as the reference: the first `Bearer` token that verifies (by the signer `ziti-token-issuer-id` names,
 * else by the signer of its `iss`) wins, else 400 INVALID_ENROLLMENT_TOKEN; its id claim (the signer's
 * `claimsProperty`) and name claim (`enrollNameClaimsSelector`, default the id claim) must be non-empty strings
 * (else 400 INVALID_ENROLLMENT_TOKEN); an identity with that `externalId` already: 409
 * ENROLLMENT_IDENTITY_ALREADY_ENROLLED; the signer must allow the kind of enrollment and the auth policy
 * (`enrollAuthPolicyId`, default `default`) the primary method it implies (`cert`; `extJwt` with this signer
 * among `allowedSigners`, an empty list allowing every signer): else 409 INVALID_ENROLLMENT_NOT_ALLOWED. A CSR
 * that cannot be signed: 400 COULD_NOT_PROCESS_CSR. The identity (and its certificate authenticator) are made in
 * one transaction.
 */
import { withTx } from '../../../store/db.js';
import { authPolicyById } from '../../../store/auth-policies.js';
import { identityIdByExternalId } from '../../../store/identities.js';
import { isPkiError, type IssuedCertificate } from '../../../pki/index.js';
import { createEntity } from '../../crud.js';
import { withDb, type Ctx } from '../../ctx.js';
import { DomainError } from '../../errors.js';
import { newEntityId } from '../../ids.js';
import { requirePki } from '../../pki.js';
import { authenticators } from '../../resources/authenticator.js';
import { identities } from '../../resources/identity.js';
import { claimAt } from '../ext-jwt/ext-jwt-claims.js';
import { verifyEnrollmentBearer } from '../ext-jwt/ext-jwt-verify.js';
import type { StoredSigner } from '../../../store/external-jwt-signers.js';

const invalidToken = () => new DomainError('INVALID_ENROLLMENT_TOKEN');
const notAllowed = (message: string) => new DomainError('INVALID_ENROLLMENT_NOT_ALLOWED', { cause: { message } });

/** The certificate answer (`enrollmentCerts`): empty for an enrollment to a token. */
export interface TokenEnrollmentResult {
  identityId: string;
  cert?: string;
  ca?: string;
}

/** The tokens of the `Authorization` values that are `Bearer <token>`. */
export function bearerTokens(authorization: string | string[] | undefined): string[] {
  const values = Array.isArray(authorization) ? authorization : authorization === undefined ? [] : [authorization];
  return values
    .flatMap((v) => v.split(','))
    .map((v) => /^\s*Bearer\s+(\S+)\s*$/.exec(v)?.[1])
    .filter((t): t is string => t !== undefined);
}

async function firstVerified(ctx: Ctx, tokens: readonly string[], signerId: string | undefined) {
  for (const token of tokens) {
    try {
      return await verifyEnrollmentBearer(ctx, token, signerId);
    } catch (e) {
      if (!(e instanceof DomainError)) throw e;
    }
  }
  throw invalidToken();
}

/** A non-empty string claim, else undefined. */
const textClaim = (claims: unknown, pointer: string): string | undefined => {
  const v = claimAt(claims, pointer);
  return typeof v === 'string' && v.trim() !== '' ? v : undefined;
};

/** Role attributes from the attribute claim: a list of strings, or one string of comma-separated values. */
function attributesOf(claims: unknown, pointer: string | null): string[] {
  if (!pointer) return [];
  const v = claimAt(claims, pointer);
  const list = Array.isArray(v) ? v : typeof v === 'string' ? v.split(',') : [];
  return [...new Set(list.filter((a): a is string => typeof a === 'string').map((a) => a.trim()))].filter(Boolean);
}

async function checkAllowed(ctx: Ctx, signer: StoredSigner, toCert: boolean): Promise<string> {
  if (toCert && !signer.enrollToCertEnabled) throw notAllowed('the signer does not allow enrollment to a certificate');
  if (!toCert && !signer.enrollToTokenEnabled) throw notAllowed('the signer does not allow enrollment to a token');
  const policyId = signer.enrollAuthPolicyId ?? 'default';
  const policy = await authPolicyById(ctx.db, policyId);
  if (!policy) throw notAllowed('the auth policy of the signer does not exist');
  const primary = policy.primary as {
    cert?: { allowed?: boolean };
    extJwt?: { allowed?: boolean; allowedSigners?: string[] };
  };
  if (toCert && !primary.cert?.allowed) throw notAllowed('the auth policy does not allow certificate logins');
  if (!toCert) {
    const signers = primary.extJwt?.allowedSigners ?? [];
    if (!primary.extJwt?.allowed || (signers.length > 0 && !signers.includes(signer.id)))
      throw notAllowed('the auth policy does not allow logins with this signer');
  }
  return policyId;
}

/** A verified enrollment token: its signer and claims. */
export type VerifiedEnrollmentToken = Awaited<ReturnType<typeof firstVerified>>;

/**
 * The first `Bearer` token that verifies (400 INVALID_ENROLLMENT_TOKEN if none does). It may fetch a JWKS, so the
 * daemon runs it outside the login limiter's concurrency gate, as ext-jwt logins.
 */
export function verifyTokenEnrollment(
  ctx: Ctx,
  authorization: string | string[] | undefined,
  signerId: string | undefined,
): Promise<VerifiedEnrollmentToken> {
  return firstVerified(ctx, bearerTokens(authorization), signerId);
}

/** The enrollment a verified token asks for (the rules after verification, module comment). */
export async function enrollWithToken(
  ctx: Ctx,
  verified: VerifiedEnrollmentToken,
  csr: unknown,
): Promise<TokenEnrollmentResult> {
  const { signer, claims } = verified;
  const externalId = textClaim(claims, signer.claimsProperty);
  const name = textClaim(claims, signer.enrollNameClaimsSelector ?? signer.claimsProperty);
  if (!externalId || !name) throw invalidToken();
  if (await identityIdByExternalId(ctx.db, externalId)) throw new DomainError('ENROLLMENT_IDENTITY_ALREADY_ENROLLED');
  const toCert = typeof csr === 'string' && csr.trim() !== '';
  const authPolicyId = await checkAllowed(ctx, signer, toCert);

  const id = newEntityId();
  let issued: IssuedCertificate | undefined;
  if (toCert) {
    const pki = requirePki(ctx);
    try {
      issued = await pki.signClientCsr(csr, { id, now: ctx.now() });
    } catch (e) {
      if (isPkiError(e)) throw new DomainError('COULD_NOT_PROCESS_CSR', { cause: { message: e.message } });
      throw e;
    }
  }
  await withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    // Checked again inside the transaction: two enrollments of one token cannot both make an identity.
    if (await identityIdByExternalId(trx, externalId)) throw new DomainError('ENROLLMENT_IDENTITY_ALREADY_ENROLLED');
    const identity = {
      name,
      type: 'User',
      isAdmin: false,
      authPolicyId,
      externalId,
      roleAttributes: attributesOf(claims, signer.enrollAttributeClaimsSelector),
    };
    await createEntity(tctx, identities, identity, { id });
    if (issued) await createEntity(tctx, authenticators, { identityId: id, method: 'cert', certPem: issued.certPem });
  });
  if (!issued) return { identityId: id };
  return { identityId: id, cert: issued.chainPem, ca: requirePki(ctx).caBundlePem };
}
