/**
 * Enrollment JWTs (docs/reference-notes.md §7.1).
 *
 * Signed with the controller's TLS server key, so a client that trusts the CA bundle (fetched from
 * `/.well-known/est/cacerts`) can verify the token with the server certificate's public key. The algorithm
 * follows the key: RS256 for RSA, ES256/ES384/ES512 for EC P-256/P-384/P-521. The `kid` header is the signing
 * certificate's fingerprint (as the reference's newer versions; older clients ignore it).
 */
import type { KeyObject } from 'node:crypto';
import { errors, exportJWK, jwtVerify, SignJWT } from 'jose';
import { parseCertificate } from './certificate.js';
import type { CertificateInput } from './certificate.js';
import { PkiError } from './errors.js';
import { jwsAlgorithmFor, parsePrivateKeyPem, type JwsAlgorithm } from './keys.js';

/** Enrollment methods carried in `em`: identities (`ott`, `ottca`, `updb`), routers (`erott`, `trott`), CAs (`ca`). */
export type EnrollmentMethod = 'ott' | 'ottca' | 'updb' | 'erott' | 'trott' | 'ca' | 'network';

const METHODS: readonly string[] = ['ott', 'ottca', 'updb', 'erott', 'trott', 'ca'];

/** The claims of an enrollment JWT. */
export interface EnrollmentClaims {
  /** Enrollment method. */
  readonly em: EnrollmentMethod;
  /** Controller URL, e.g. `https://127.0.0.1:1280`; SDKs derive the enroll URL from it. */
  readonly iss: string;
  /** Identity id (router id for routers, CA id for CA JWTs). */
  readonly sub: string;
  /** The enrollment token (UUID v4) used as `?token=`. */
  readonly jti: string;
  /** Expiry (NumericDate); absent on CA JWTs. */
  readonly exp?: number;
  readonly aud?: string | string[];
  /** Controller addresses (newer reference versions). */
  readonly ctrls?: string[];
}

/** Input of {@link signEnrollmentJwt}. */
export interface EnrollmentJwtInput {
  readonly method: EnrollmentMethod;
  readonly issuer: string;
  readonly subject: string;
  /** The enrollment token; becomes `jti`. */
  readonly token: string;
  /** Becomes `exp`; omit for tokens that do not expire (the CA JWT). */
  readonly expiresAt?: Date;
  /** e.g. `['openziti-enroller']` for the CA JWT; omitted by default (as the reference's 0.25 line). */
  readonly audience?: string | string[];
  /** `ctrls`; null is written as null (the network JWT's). */
  readonly controllers?: string[] | null;
}

/** The key that signs enrollment JWTs: the controller's server key and certificate. */
export interface JwtSigner {
  /** Private key as PEM or KeyObject. */
  readonly key: string | KeyObject;
  /** The certificate of that key (PEM, first block used; a chain is fine). */
  readonly cert: CertificateInput;
}

/** Signs an enrollment JWT with the server key; `iat`/`nbf` are not set (parity). */
export async function signEnrollmentJwt(input: EnrollmentJwtInput, signer: JwtSigner): Promise<string> {
  const key = parsePrivateKeyPem(signer.key);
  const cert = parseCertificate(signer.cert);
  const alg = jwsAlgorithmFor(key);
  const payload: Record<string, unknown> = { em: input.method };
  if (input.controllers !== undefined) payload.ctrls = input.controllers;
  let jwt = new SignJWT(payload)
    .setProtectedHeader({ alg, typ: 'JWT', kid: cert.fingerprint })
    .setIssuer(input.issuer)
    .setSubject(input.subject)
    .setJti(input.token);
  if (input.expiresAt !== undefined) jwt = jwt.setExpirationTime(Math.floor(input.expiresAt.getTime() / 1000));
  if (input.audience !== undefined) jwt = jwt.setAudience(input.audience);
  return jwt.sign(key);
}

/** Options of {@link verifyEnrollmentJwt}. */
export interface VerifyEnrollmentJwtOptions {
  /** Judge `exp` at this time; default now. */
  readonly now?: Date;
  /** Require this `iss`. */
  readonly issuer?: string;
}

/**
 * Verifies an enrollment JWT against the server certificate that should have signed it (PEM, first block used)
 * and returns its claims.
 * @throws PkiError `expired-jwt` when `exp` has passed, `invalid-jwt` for anything else that is wrong.
 */
export async function verifyEnrollmentJwt(
  jwt: string,
  serverCert: CertificateInput,
  options: VerifyEnrollmentJwtOptions = {},
): Promise<EnrollmentClaims> {
  const cert = parseCertificate(serverCert);
  const alg = jwsAlgorithmFor(cert.publicKey);
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(jwt, cert.publicKey, {
      algorithms: [alg],
      ...(options.now !== undefined ? { currentDate: options.now } : {}),
      ...(options.issuer !== undefined ? { issuer: options.issuer } : {}),
    }));
  } catch (cause) {
    if (cause instanceof errors.JWTExpired)
      throw new PkiError('expired-jwt', 'the enrollment token has expired', { cause });
    throw new PkiError('invalid-jwt', 'the enrollment token is not valid', { cause });
  }
  const { em, iss, sub, jti, exp, aud, ctrls } = payload;
  if (typeof em !== 'string' || !METHODS.includes(em))
    throw new PkiError('invalid-jwt', 'the token has no valid `em` claim');
  if (typeof iss !== 'string' || typeof sub !== 'string' || typeof jti !== 'string') {
    throw new PkiError('invalid-jwt', 'the token lacks `iss`, `sub` or `jti`');
  }
  return {
    em: em as EnrollmentMethod,
    iss,
    sub,
    jti,
    ...(typeof exp === 'number' ? { exp } : {}),
    ...(typeof aud === 'string' || Array.isArray(aud) ? { aud: aud as string | string[] } : {}),
    ...(Array.isArray(ctrls) ? { ctrls: ctrls.filter((c): c is string => typeof c === 'string') } : {}),
  };
}

/**
 * A key that signs the controller's own JWTs (OIDC access, refresh and ID tokens): the server key, named by the
 * server certificate's fingerprint as `kid` (docs/reference-notes.md §14.7). Parsed once.
 */
export interface ControllerJwtKey {
  readonly alg: JwsAlgorithm;
  readonly kid: string;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
}

/** The controller JWT key of a server key and its certificate. */
export function controllerJwtKey(signer: JwtSigner): ControllerJwtKey {
  const privateKey = parsePrivateKeyPem(signer.key);
  const cert = parseCertificate(signer.cert);
  return { alg: jwsAlgorithmFor(privateKey), kid: cert.fingerprint, privateKey, publicKey: cert.publicKey };
}

/** Signs `claims` as they are (the caller sets `iat`, `exp` and the rest) with the controller key. */
export async function signControllerJwt(claims: Record<string, unknown>, key: ControllerJwtKey): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: key.alg, typ: 'JWT', kid: key.kid }).sign(key.privateKey);
}

/**
 * Verifies a JWT signed by the controller key: signature, `exp` and `nbf` at `now` (no leeway). The `kid` is not
 * compared: the key is the controller's for good, while its certificate (and so the fingerprint) may be
 * re-issued (docs/decisions.md, "OIDC login").
 * @throws PkiError `expired-jwt` when `exp` has passed, `invalid-jwt` for anything else that is wrong.
 */
export async function verifyControllerJwt(
  jwt: string,
  key: ControllerJwtKey,
  now: Date,
): Promise<Record<string, unknown>> {
  try {
    const { payload } = await jwtVerify(jwt, key.publicKey, { algorithms: [key.alg], currentDate: now });
    return payload as Record<string, unknown>;
  } catch (cause) {
    if (cause instanceof errors.JWTExpired) throw new PkiError('expired-jwt', 'the token has expired', { cause });
    throw new PkiError('invalid-jwt', 'the token is not valid', { cause });
  }
}

/** The public half as a JWK with `use`, `kid` and `alg`: the one entry of `/oidc/keys`. */
export async function controllerJwk(key: ControllerJwtKey): Promise<Record<string, unknown>> {
  const jwk = await exportJWK(key.publicKey);
  return { use: 'sig', kid: key.kid, alg: key.alg, ...jwk };
}
