/**
 * External JWTs (parity: docs/reference-notes.md §5.4): verifying a bearer token against the signer its `iss`
 * names. Verification needs no transaction (it may fetch a JWKS), so callers run it before theirs opens.
 *
 * Every refusal is a {@link BearerRefusal}: a 401 that says which kind of failure it was (`missing`, `invalid`,
 * `expired`) for the `WWW-Authenticate` header, and nothing about the token itself.
 */
import { decodeJwt, decodeProtectedHeader, errors, importJWK, importX509, jwtVerify, type JWTPayload } from 'jose';
import type { KeyObject } from 'node:crypto';
import type { Ctx } from '../../ctx.js';
import { DomainError, type ErrorCode } from '../../errors.js';
import { signerCertificate } from '../hooks/external-jwt-signer.js';
import {
  anySignerEnabled,
  signerById,
  signerByIssuer,
  type StoredSigner,
} from '../../../store/external-jwt-signers.js';
import { identityIdByExternalId, identityStanding } from '../../../store/identities.js';
import { principalGeneration } from '../api-session/api-session-cache.js';
import { claimAt } from './ext-jwt-claims.js';
import type { VerifiedToken } from './ext-jwt-keys.js';

export type BearerFlavour = 'missing' | 'invalid' | 'expired';

/** A refused bearer token: 401 with the flavour the `WWW-Authenticate` header reports. */
export class BearerRefusal extends DomainError {
  readonly flavour: BearerFlavour;
  /** The challenge's realm: `openziti-oidc` for the controller's own access tokens; none for ext-jwt. */
  readonly realm: string | undefined;
  constructor(flavour: BearerFlavour, code: ErrorCode = 'INVALID_AUTH', realm?: string) {
    super(code);
    this.flavour = flavour;
    this.realm = realm;
  }
}

/** The `WWW-Authenticate` value for a refused bearer token (RFC 6750 form; no token, no signer named). */
export const wwwAuthenticate = (e: unknown): string => {
  const realm = e instanceof BearerRefusal && e.realm !== undefined ? `realm="${e.realm}" ` : '';
  return `Bearer ${realm}error="${e instanceof BearerRefusal ? e.flavour : 'invalid'}"`;
};

/** Signature algorithms accepted from external signers: asymmetric only, so no key can double as a shared secret. */
const ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];

/** Longer than any real identity token; refused unparsed. */
const MAX_TOKEN_CHARS = 16 * 1024;

/** The token of an `Authorization: Bearer …` header, if there is one. */
export function bearerToken(header: string | string[] | undefined): string | undefined {
  const h = Array.isArray(header) ? header[0] : header;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h ?? '');
  return m?.[1];
}

export const invalid = () => new BearerRefusal('invalid');

async function signerKey(ctx: Ctx, signer: StoredSigner, kid: string | undefined, alg: string) {
  if (kid === undefined) throw invalid();
  if (signer.certPem !== null) {
    // Registered under the signer's kid, or the certificate's fingerprint when it has none (parity: §5.4).
    if (kid !== (signer.kid ?? signer.fingerprint)) throw invalid();
    return signerCertificate(signer.certPem).publicKey as KeyObject;
  }
  if (signer.jwksEndpoint === null || !ctx.extJwt) throw invalid();
  const jwk = await ctx.extJwt.jwk(signer.id, signer.jwksEndpoint, kid);
  if (!jwk) throw invalid();
  try {
    // The first x5c certificate is preferred over the key parameters (parity: §5.4).
    if (Array.isArray(jwk.x5c) && typeof jwk.x5c[0] === 'string') {
      const pem = `-----BEGIN CERTIFICATE-----\n${jwk.x5c[0].match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;
      return await importX509(pem, alg);
    }
    return await importJWK(jwk, alg);
  } catch {
    throw invalid();
  }
}

function unverifiedClaims(token: string): { iss: string; alg: string; kid: string | undefined } {
  try {
    const payload = decodeJwt(token);
    const header = decodeProtectedHeader(token);
    if (typeof payload.iss !== 'string' || typeof header.alg !== 'string') throw invalid();
    return { iss: payload.iss, alg: header.alg, kid: typeof header.kid === 'string' ? header.kid : undefined };
  } catch {
    throw invalid();
  }
}

async function identityFor(ctx: Ctx, signer: StoredSigner, payload: JWTPayload): Promise<string> {
  const claim = claimAt(payload, signer.claimsProperty);
  if (typeof claim !== 'string' || claim === '') throw invalid();
  const id = signer.useExternalId
    ? await identityIdByExternalId(ctx.db, claim)
    : (await identityStanding(ctx.db, claim))?.id;
  if (!id) throw invalid();
  return id;
}

/** Verifies `token` with `signer`'s key: the signature, `exp` (required) and `nbf`, `iss`, `aud`; its claims. */
async function verifyWithSigner(
  ctx: Ctx,
  signer: StoredSigner,
  token: string,
  alg: string,
  kid: string | undefined,
): Promise<JWTPayload> {
  const key = await signerKey(ctx, signer, kid, alg);
  try {
    const { payload } = await jwtVerify(token, key, {
      issuer: signer.issuer,
      audience: signer.audience,
      algorithms: [alg],
      currentDate: ctx.now(),
      // A token that never expires would stay a credential for good once leaked.
      requiredClaims: ['exp'],
    });
    return payload;
  } catch (e) {
    if (e instanceof errors.JWTExpired) throw new BearerRefusal('expired');
    throw invalid();
  }
}

/**
 * A token presented for enrollment (`POST /enroll/token`) verified as a login token is, by the signer
 * `signerId` names (it must exist and be enabled), else by the enabled signer whose `issuer` is the token's `iss`.
 * No identity is looked up: the token is to make one. Refusals are {@link BearerRefusal}s.
 */
export async function verifyEnrollmentBearer(
  ctx: Ctx,
  token: string,
  signerId: string | undefined,
): Promise<{ signer: StoredSigner; claims: JWTPayload }> {
  if (token.length > MAX_TOKEN_CHARS) throw invalid();
  const { iss, alg, kid } = unverifiedClaims(token);
  if (!ALGORITHMS.includes(alg)) throw invalid();
  const signer = signerId !== undefined ? await signerById(ctx.db, signerId) : await signerByIssuer(ctx.db, iss);
  if (!signer?.enabled) throw invalid();
  return { signer, claims: await verifyWithSigner(ctx, signer, token, alg, kid) };
}

/**
 * Verifies a bearer JWT: the signer named by `iss` (enabled), its key, the signature, `exp` (required) and `nbf`,
 * `iss`, `aud`, and the identity its claim names. A token verified recently is answered from the cache, unless
 * its identity was found by `externalId` and an identity was written since (the claim may name another now).
 */
export async function verifyBearer(ctx: Ctx, token: string | undefined): Promise<VerifiedToken> {
  if (!token) throw new BearerRefusal('missing');
  const nowMs = ctx.now().getTime();
  // Read before the identity lookup below: a write after it makes the remembered answer stale, never one before.
  const gen = principalGeneration(ctx.db);
  const known = ctx.extJwt?.recall(token, nowMs, gen);
  if (known) return known;
  if (token.length > MAX_TOKEN_CHARS) throw invalid();
  const { iss, alg, kid } = unverifiedClaims(token);
  if (!ALGORITHMS.includes(alg)) throw invalid();
  const signer = await signerByIssuer(ctx.db, iss);
  if (!signer?.enabled) {
    if (!(await anySignerEnabled(ctx.db))) throw new BearerRefusal('invalid', 'UNAUTHORIZED');
    throw invalid();
  }
  const payload = await verifyWithSigner(ctx, signer, token, alg, kid);
  const identityId = await identityFor(ctx, signer, payload);
  const verified = { signerId: signer.id, identityId };
  const expMs = payload.exp! * 1000;
  ctx.extJwt?.remember(token, verified, expMs, nowMs, signer.useExternalId ? gen : undefined);
  return { ...verified, untilMs: Math.min(expMs, nowMs + (ctx.extJwt?.opts.verifiedTtlMs ?? 0)) };
}
