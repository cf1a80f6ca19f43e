/**
 * Secondary ext-JWT (parity: docs/reference-notes.md §4.4, §5.4): an identity whose auth policy names a signer in
 * `secondary.requireExtJwtSigner` must show a valid JWT of that signer, for itself, as `Authorization: Bearer` on
 * every request of its API session. Without one the session is partial: it carries the EXT-JWT auth query and
 * reaches only the partial routes.
 *
 * - At authentication, {@link extJwtAuthQueries} gives the query to store with the new session, unless the
 *   authenticate request itself carried such a token (verified beforehand, {@link noteBearerEvidence}).
 * - On every request, {@link withSecondaryExtJwt} replaces the stored EXT-JWT query by what this request shows:
 *   the query when its token is missing or not good enough, none when it is (or the policy no longer asks).
 */
import type { Ctx } from '../../ctx.js';
import { DomainError } from '../../errors.js';
import type { AuthPolicy } from '../../resources/auth-policy.js';
import { policyForIdentity } from '../hooks/auth-policy.js';
import { signerById } from '../../../store/external-jwt-signers.js';
import type { Principal } from '../api-session/api-session.js';
import type { VerifiedToken } from './ext-jwt-keys.js';
import { BearerRefusal, bearerToken, verifyBearer } from './ext-jwt-verify.js';

// A type, not an interface, so it fits auth-queries.ts's open-ended AuthQuery.
export type ExtJwtAuthQuery = {
  typeId: 'EXT-JWT';
  provider: 'url';
  httpUrl?: string;
  id: string;
};

const isExtJwtQuery = (q: unknown): boolean => (q as { typeId?: unknown } | null)?.typeId === 'EXT-JWT';

/** Tokens verified for an authenticate request, by its body object (never by anything the client sent). */
const evidence = new WeakMap<object, VerifiedToken>();

export function attachBearerEvidence(body: object, verified: VerifiedToken): void {
  evidence.set(body, verified);
}

/**
 * Verifies the bearer token of an authenticate request, if it has one, as evidence for a secondary requirement.
 * A token that does not verify is no evidence, not a failed login.
 */
export async function noteBearerEvidence(
  ctx: Ctx,
  body: object,
  authorization: string | string[] | undefined,
): Promise<void> {
  const token = bearerToken(authorization);
  if (!token) return;
  try {
    attachBearerEvidence(body, await verifyBearer(ctx, token));
  } catch (e) {
    if (!(e instanceof BearerRefusal)) throw e;
  }
}

async function queryFor(ctx: Ctx, signerId: string): Promise<ExtJwtAuthQuery | undefined> {
  const signer = await signerById(ctx.db, signerId);
  if (!signer) return undefined;
  return {
    typeId: 'EXT-JWT',
    provider: 'url',
    ...(signer.externalAuthUrl !== null && { httpUrl: signer.externalAuthUrl }),
    id: signer.id,
  };
}

const satisfies = (v: VerifiedToken | undefined, signerId: string, identityId: string): boolean =>
  v !== undefined && v.signerId === signerId && v.identityId === identityId;

/**
 * The EXT-JWT auth query a new API session starts with ([] when none is due; one of auth-queries.ts's providers).
 * Call inside the authentication's transaction. A policy naming a signer that does not exist refuses the login (401).
 */
export async function extJwtAuthQueries(
  ctx: Ctx,
  { identityId, policy, body }: { identityId: string; policy: AuthPolicy; body: object },
): Promise<ExtJwtAuthQuery[]> {
  const required = policy.secondary?.requireExtJwtSigner ?? null;
  if (required === null || satisfies(evidence.get(body), required, identityId)) return [];
  const query = await queryFor(ctx, required);
  if (!query) throw new DomainError('INVALID_AUTH');
  return [query];
}

/** The principal as this request stands: partial unless it carries the bearer JWT its policy asks for. */
export async function withSecondaryExtJwt(
  ctx: Ctx,
  principal: Principal,
  authorization: string | string[] | undefined,
): Promise<Principal> {
  const others = principal.authQueries.filter((q) => !isExtJwtQuery(q));
  // The API-session cache carries the policy's requirement (api-session-cache.ts); look it up otherwise.
  const required =
    principal.extJwtSigner !== undefined
      ? principal.extJwtSigner
      : ((await policyForIdentity(ctx.db, principal.identity.authPolicyId)).secondary?.requireExtJwtSigner ?? null);
  let shown: VerifiedToken | undefined;
  let refusal: BearerRefusal['flavour'] = 'invalid';
  if (required !== null) {
    try {
      shown = await verifyBearer(ctx, bearerToken(authorization));
    } catch (e) {
      if (!(e instanceof BearerRefusal)) throw e;
      refusal = e.flavour;
    }
  }
  if (required === null || satisfies(shown, required, principal.identity.id)) {
    return others.length === principal.authQueries.length ? principal : { ...principal, authQueries: others };
  }
  // A signer gone since (only possible behind the API's back) still leaves the session partial.
  const query = (await queryFor(ctx, required)) ?? { typeId: 'EXT-JWT', provider: 'url', id: required };
  return { ...principal, authQueries: [...others, query], extJwtRefusal: refusal };
}
