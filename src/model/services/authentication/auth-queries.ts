/**
 * Secondary factors after a primary authentication (password, certificate, external JWT): each provider
 * answers the auth queries its factor still needs; a session with any query left is partially authenticated
 * and reaches only the routes of docs/reference-notes.md §4.4. Providers are a plain list: a new factor
 * (e.g. an external JWT signer the auth policy requires) adds one.
 */
import type { Ctx } from '../../ctx.js';
import { extJwtAuthQueries } from '../ext-jwt/ext-jwt-secondary.js';
import { identityAuthPolicyId } from '../../../store/identities.js';
import { mfaOfIdentity } from '../../../store/mfas.js';
import type { AuthPolicy } from '../../resources/auth-policy.js';
import { policyForIdentity } from '../hooks/auth-policy.js';

export interface AuthQuery {
  typeId: string;
  provider: string;
  format?: string;
  httpMethod?: string;
  httpUrl?: string;
  minLength?: number;
  maxLength?: number;
  [extra: string]: unknown;
}

export interface AuthSubject {
  identityId: string;
  policy: AuthPolicy;
  /** The authenticate request's body: what was verified for it (e.g. a bearer JWT) is keyed by it. */
  body: object;
}

export interface FactorAnswer {
  queries: AuthQuery[];
  /** The identity had a verified TOTP enrollment at authentication time (parity: §4.3). */
  isMfaRequired?: boolean;
}

export type QueryProvider = (ctx: Ctx, subject: AuthSubject) => Promise<FactorAnswer>;

/** parity: §4.4's TOTP query, with the provider `svc` (docs/decisions.md, "Partial sessions"). */
export const MFA_QUERY: AuthQuery = {
  typeId: 'MFA',
  provider: 'svc',
  format: 'alphaNumeric',
  httpMethod: 'POST',
  httpUrl: './authenticate/mfa',
  minLength: 4,
  maxLength: 6,
};

export const isMfaQuery = (q: unknown): boolean =>
  typeof q === 'object' && q !== null && (q as AuthQuery).typeId === MFA_QUERY.typeId;

/** TOTP: asked when the identity has a verified enrollment, or its policy requires TOTP (enrolled or not). */
const mfaProvider: QueryProvider = async (ctx, { identityId, policy }) => {
  const mfa = await mfaOfIdentity(ctx.db, identityId);
  const verified = mfa?.isVerified === true;
  return { queries: verified || policy.secondary.requireTotp ? [{ ...MFA_QUERY }] : [], isMfaRequired: verified };
};

/** A secondary ext-JWT requirement (ext-jwt-secondary.ts). */
const extJwtProvider: QueryProvider = async (ctx, subject) => ({ queries: await extJwtAuthQueries(ctx, subject) });

export const QUERY_PROVIDERS: QueryProvider[] = [mfaProvider, extJwtProvider];

export interface SecondaryFactors {
  authQueries: AuthQuery[];
  isMfaRequired: boolean;
}

/** The auth queries a new API session of this identity starts with (empty: fully authenticated). */
export async function secondaryFactors(ctx: Ctx, identityId: string, body: object): Promise<SecondaryFactors> {
  const policy = await policyForIdentity(ctx.db, await identityAuthPolicyId(ctx.db, identityId));
  const subject = { identityId, policy, body };
  const out: SecondaryFactors = { authQueries: [], isMfaRequired: false };
  for (const provider of QUERY_PROVIDERS) {
    const answer = await provider(ctx, subject);
    out.authQueries.push(...answer.queries);
    out.isMfaRequired ||= answer.isMfaRequired ?? false;
  }
  return out;
}
