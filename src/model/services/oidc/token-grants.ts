/**
 * The token endpoint's grants (docs/reference-notes.md §14.6) and the tokens they issue (§14.7): JWTs signed with the controller key
 * (`ctx.pki.controllerJwt`), with the reference's claims.
 *
 * - `authorization_code`: the code is exchanged at most once, with the PKCE verifier; the exchange makes the
 *   login's API session (the `z_asid` chosen at authorize), visible to admins like any other.
 * - `refresh_token`: the presented token must be the current one of its lineage; it is marked rotated and
 *   revoked by `jti` in the same transaction as its successor is recorded, so it works once.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { withTx } from '../../../store/db.js';
import {
  authRequestByCodeHash,
  completeOidcSession,
  deleteAuthRequest,
  insertRefreshToken,
  markRefreshTokenRotated,
  oidcSessionById,
  putRevocation,
  refreshTokenByJti,
  type OidcSessionPrincipal,
} from '../../../store/oidc.js';
import { touchApiSession } from '../../../store/api-sessions.js';
import { recordMfaPassed } from '../../posture/posture-of.js';
import { emitMfaPassed } from '../mfa/mfa-events.js';
import { isPkiError } from '../../../pki/index.js';
import { iso, withDb, type Ctx } from '../../ctx.js';
import { requirePki } from '../../pki.js';
import { isDisabled } from '../../resources/identity.js';
import { tokenHash } from '../../tokens.js';
import { createApiSession } from '../api-session/api-session.js';
import { isAuthenticated, oidcSettings } from './auth-requests.js';
import { OAuthError } from './oidc-errors.js';
import { OIDC_CLIENTS } from './oidc-settings.js';
import { revocationOf, type TokenIds } from './revocations.js';
import { recordOidcSessionEvent, recordOidcStepFailure } from './login-events.js';
import { boundCertificates } from './bearer.js';
import { bindingHolds, certStateClaims, issueOidcSessionCert, withBoundCertificate } from './session-certs.js';
import { DomainError } from '../../errors.js';

export type TokenParams = Record<string, string | undefined>;

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const TOKEN_TYPE = {
  refresh: 'urn:ietf:params:oauth:token-type:refresh_token',
  access: 'urn:ietf:params:oauth:token-type:access_token',
  id: 'urn:ietf:params:oauth:token-type:id_token',
} as const;

/** A token exchange's answer (RFC 8693 §2.2.1; docs/reference-notes.md §14.6). */
export interface ExchangeResponse {
  access_token: string;
  issued_token_type: string;
  token_type: 'Bearer' | 'N_A';
  expires_in: number;
  scope: string;
  refresh_token?: string;
  session_cert?: string;
}

/** The token endpoint's answer (§14.6). */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  id_token: string;
  scope: string;
  /** The API-session certificate signed from the CSR the login or this request gave (PEM). */
  session_cert?: string;
}

/** What every token of one API session carries over (the custom claims of §14.7, kept across refreshes). */
interface SessionClaims {
  clientId: string;
  apiSessionId: string;
  identityId: string;
  scopes: string[];
  amr: string[];
  /** Epoch seconds of the primary login. */
  authTime: number;
  configTypes: string[];
  remoteAddress: string;
  authenticatorId: string | null;
  sdkInfo: Record<string, string> | null;
  envInfo: Record<string, string> | null;
  /** The certificates the tokens are bound to (`z_cfs`) and the one that logged in (`z_acf`); none: unbound. */
  boundCertificates: string[];
  authCertificate: string | null;
  /** The certificate login's client sent an improper chain (`z_iccc`, carried over from the login). */
  improperChain: boolean;
}

/** Where a token request comes from: its address (for events) and its client certificate (for bound tokens). */
export interface GrantSource {
  remoteAddress?: string | undefined;
  certFingerprint?: string | undefined;
  /**
   * Takes one certificate signing of the session's and identity's budgets (the limits of
   * `POST /current-api-session/certificates`), or throws; asked before a refresh or exchange signs a CSR.
   */
  limitIssuance?: ((apiSessionId: string, identityId: string) => void) | undefined;
}

const grantError = (description: string) => new OAuthError('invalid_grant', description);
const seconds = (d: Date | number) => Math.floor((typeof d === 'number' ? d : d.getTime()) / 1000);

/** The token endpoint: one grant, by `grant_type`. `issuer` is this request's (`https://host:port/oidc`). */
export async function tokenGrant(
  ctx: Ctx,
  params: TokenParams,
  issuer: string,
  from: GrantSource = {},
): Promise<TokenResponse | ExchangeResponse> {
  const clientId = params.client_id;
  if (!clientId) throw new OAuthError('invalid_request', 'client_id is required');
  if (!OIDC_CLIENTS.includes(clientId)) throw new OAuthError('invalid_client', 'unknown client');
  switch (params.grant_type) {
    case 'authorization_code':
      return codeGrant(ctx, params, clientId, issuer, from.remoteAddress);
    case 'refresh_token':
      return refreshGrant(ctx, params, clientId, issuer, from);
    case TOKEN_EXCHANGE:
      return exchangeGrant(ctx, params, clientId, issuer, from);
    case undefined:
    case '':
      throw new OAuthError('invalid_request', 'grant_type is required');
    default:
      throw new OAuthError(
        'unsupported_grant_type',
        `the grant type ${params.grant_type.slice(0, 100)} is not supported`,
      );
  }
}

/** base64url(SHA-256(verifier)) against the stored challenge, in constant time (RFC 7636 §4.6). */
function pkceMatches(verifier: string, challenge: string): boolean {
  const computed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

async function codeGrant(
  ctx: Ctx,
  params: TokenParams,
  clientId: string,
  issuer: string,
  remoteAddress: string | undefined,
): Promise<TokenResponse> {
  const { code, code_verifier: verifier, redirect_uri: redirectUri } = params;
  if (!code) throw new OAuthError('invalid_request', 'code is required');
  if (!verifier) throw new OAuthError('invalid_request', 'code_verifier is required (PKCE)');
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier))
    throw new OAuthError('invalid_request', 'code_verifier must be 43 to 128 unreserved characters');
  // Any exchange attempt uses the code up, a refused one too (docs/decisions.md, "OIDC login"): it is deleted in
  // a transaction of its own, which only one of two concurrent exchanges can do.
  const request = await withTx(ctx.db, async (trx) => {
    const found = code.length <= 100 ? await authRequestByCodeHash(trx, tokenHash(code)) : undefined;
    if (!found || !(await deleteAuthRequest(trx, found.idHash))) return undefined;
    return found;
  });
  if (!request || request.expiresAt <= iso(ctx.now())) throw grantError('the code is invalid or has expired');
  // A live code refused is recorded (at most once per code: the attempt used it up); the description, not the
  // code or verifier, is the reason.
  const refuse = async (description: string) => {
    await recordOidcStepFailure(
      ctx,
      { step: 'authorization_code', remoteAddress: remoteAddress ?? '', apiSessionId: request.apiSessionId },
      new DomainError('INVALID_AUTH', {
        audit: { reason: description, identityId: request.identityId ?? undefined },
      }),
    );
    return grantError(description);
  };
  if (request.clientId !== clientId) throw await refuse('the code was issued to another client');
  if (request.redirectUri !== redirectUri) throw await refuse('redirect_uri does not match the authorization request');
  if (!pkceMatches(verifier, request.codeChallenge))
    throw await refuse('the code_verifier does not match the code_challenge');
  const { authenticatorId, authTime } = request;
  if (!isAuthenticated(request) || authenticatorId === null || authTime === null)
    throw await refuse('the login is not complete');
  const passed = { amr: request.amr, apiSessionId: request.apiSessionId, identityId: request.identityId! };
  const answer = await withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    // A TOTP enrollment in the login made the session already (login-enrollment.ts): it is completed instead.
    const early = await completeOidcSession(trx, request.apiSessionId, {
      isMfaRequired: request.amr.includes('totp'),
      configTypes: request.configTypes,
      at: iso(ctx.now()),
    });
    const ipAddress = request.remoteAddress.replace(/:\d+$/, '');
    if (!early)
      await createApiSession(tctx, {
        id: request.apiSessionId,
        identityId: request.identityId!,
        authenticatorId,
        ipAddress,
        configTypes: request.configTypes,
        isMfaRequired: request.amr.includes('totp'),
        isOidc: true,
      });
    await recordOidcSessionEvent(tctx, {
      eventType: early ? 'refreshed' : 'created',
      id: request.apiSessionId,
      identityId: request.identityId!,
      ipAddress,
      ...(early && { reason: 'code exchanged' }),
      fullyAuthenticated: true,
      extra: { amr: request.amr, client_id: clientId },
    });
    const c: SessionClaims = {
      clientId,
      apiSessionId: request.apiSessionId,
      identityId: request.identityId!,
      scopes: request.scopes,
      amr: request.amr,
      authTime: seconds(new Date(authTime)),
      configTypes: request.configTypes,
      remoteAddress: request.remoteAddress,
      authenticatorId,
      sdkInfo: request.sdkInfo,
      envInfo: request.envInfo,
      boundCertificates: request.certFingerprint ? [request.certFingerprint] : [],
      authCertificate: request.certFingerprint,
      improperChain: request.certImproperChain,
    };
    const session = await liveSession(tctx, c.apiSessionId);
    // The login's TOTP step is this session's MFA pass, for MFA posture checks as `/authenticate/mfa` is.
    if (c.amr.includes('totp')) await recordMfaPassed(trx, c.apiSessionId, c.identityId, ctx.now());
    const sessionCert = await signedSessionCert(tctx, c, request.csrPem ?? undefined);
    return issueTokens(tctx, c, session, issuer, { nonce: request.nonce, parentJti: null, sessionCert });
  });
  if (passed.amr.includes('totp')) emitMfaPassed(ctx, passed.apiSessionId, passed.identityId, ctx.now());
  return answer;
}

/** The API session and identity the tokens speak for; refused when gone or disabled. */
async function liveSession(ctx: Ctx, apiSessionId: string): Promise<OidcSessionPrincipal> {
  const session = await oidcSessionById(ctx.db, apiSessionId);
  if (!session) throw grantError('the API session has ended');
  if (isDisabled(session, ctx.now())) throw grantError('the identity is disabled');
  return session;
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const infoClaim = (v: unknown): Record<string, string> | null =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, string>) : null;

/** A controller-issued token's claims, or the grant's refusal (§14.6: `refresh token expired`, …). */
async function verifiedClaims(ctx: Ctx, token: string): Promise<Record<string, unknown>> {
  try {
    return await requirePki(ctx).controllerJwt.verify(token, ctx.now());
  } catch (e) {
    if (isPkiError(e)) throw grantError(e.reason === 'expired-jwt' ? 'refresh token expired' : 'refresh token invalid');
    throw e;
  }
}

/**
 * A bound session's tokens are refreshed or exchanged only over a connection presenting one of its certificates
 * or an API-session certificate of its session (parity: §14.6, `access_denied`).
 */
async function checkBinding(ctx: Ctx, c: SessionClaims, from: GrantSource): Promise<void> {
  if (!(await bindingHolds(ctx, c.boundCertificates, c.apiSessionId, from.certFingerprint)))
    throw new OAuthError('access_denied', 'the client certificate the tokens are bound to was not presented');
}

/**
 * Signs a CSR given with the grant (the login's `csrPem`, a refresh's or exchange's `csr_pem`) into an API-session
 * certificate, whose fingerprint joins the tokens' binding; answers its PEM (undefined without a CSR).
 */
async function signedSessionCert(
  ctx: Ctx,
  c: SessionClaims,
  csr: string | undefined,
  from: GrantSource = {},
): Promise<string | undefined> {
  if (csr === undefined || csr === '') return undefined;
  from.limitIssuance?.(c.apiSessionId, c.identityId);
  const issued = await issueOidcSessionCert(ctx, { apiSessionId: c.apiSessionId, identityId: c.identityId }, csr);
  c.boundCertificates = withBoundCertificate(c.boundCertificates, issued.fingerprint);
  return issued.certificate;
}

async function refreshGrant(
  ctx: Ctx,
  params: TokenParams,
  clientId: string,
  issuer: string,
  from: GrantSource,
): Promise<TokenResponse> {
  const token = params.refresh_token;
  if (!token) throw new OAuthError('invalid_request', 'refresh_token is required');
  if (token.length > 16_384) throw grantError('refresh token invalid');
  const claims = await verifiedClaims(ctx, token);
  const jti = claims.jti;
  const asid = claims.z_asid;
  const sub = claims.sub;
  if (claims.z_t !== 'r' || typeof jti !== 'string' || typeof asid !== 'string' || typeof sub !== 'string')
    throw grantError('refresh token invalid');
  if (claims.client_id !== clientId) throw grantError('the refresh token was issued to another client');
  const c = sessionClaimsOf(ctx, claims, clientId);
  await checkBinding(ctx, c, from);
  const requested = params.scope?.split(' ').filter(Boolean);
  if (requested && requested.some((s) => !c.scopes.includes(s)))
    throw new OAuthError('invalid_scope', 'a refresh cannot widen the scope');
  if (requested && requested.length > 0) c.scopes = requested;
  return withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    const ids: TokenIds = { jti, identityId: sub, apiSessionId: asid, issuedAt: Number(claims.iat) };
    if (await revocationOf(tctx, ids)) throw grantError('refresh token revoked');
    const now = ctx.now();
    const lineage = await refreshTokenByJti(trx, jti);
    if (!lineage || lineage.apiSessionId !== asid || !(await markRefreshTokenRotated(trx, jti, iso(now))))
      throw grantError('refresh token revoked');
    const live = await liveSession(tctx, asid);
    if (live.identityId !== sub) throw grantError('refresh token invalid');
    // The replaced token stays refused until it would have expired anyway (docs/reference-notes.md §14.9).
    const exp = typeof claims.exp === 'number' ? new Date(claims.exp * 1000) : now;
    await putRevocation(trx, {
      id: jti,
      type: 'JTI',
      updatedAt: iso(now),
      tags: {},
      expiresAt: iso(exp),
      issuedBefore: iso(now),
    });
    await sessionRefreshed(tctx, asid, sub, clientId, 'token refresh');
    const sessionCert = await signedSessionCert(tctx, c, params.csr_pem, from);
    return issueTokens(tctx, c, live, issuer, { nonce: null, parentJti: jti, sessionCert });
  });
}

/**
 * A refresh or exchange continues the API session: it is activity (the idle timeout applies to OIDC sessions
 * too) and records the session `refreshed`; `ctx.db` is the grant's transaction.
 */
async function sessionRefreshed(
  ctx: Ctx,
  asid: string,
  identityId: string,
  clientId: string,
  reason: string,
): Promise<void> {
  await touchApiSession(ctx.db, asid, iso(ctx.now()));
  await recordOidcSessionEvent(ctx, {
    eventType: 'refreshed',
    id: asid,
    identityId,
    reason,
    fullyAuthenticated: true,
    extra: { client_id: clientId },
  });
}

/** The session claims a controller-issued token carries over to the tokens issued for it. */
function sessionClaimsOf(ctx: Ctx, claims: Record<string, unknown>, clientId: string): SessionClaims {
  return {
    clientId,
    apiSessionId: String(claims.z_asid),
    identityId: String(claims.sub),
    scopes: strings(claims.scopes),
    amr: strings(claims.amr),
    authTime: typeof claims.auth_time === 'number' ? claims.auth_time : seconds(ctx.now()),
    configTypes: strings(claims.z_ct),
    remoteAddress: typeof claims.z_ra === 'string' ? claims.z_ra : '',
    authenticatorId: typeof claims.z_authid === 'string' ? claims.z_authid : null,
    sdkInfo: infoClaim(claims.z_sdk),
    envInfo: infoClaim(claims.z_env),
    boundCertificates: boundCertificates(claims),
    authCertificate: typeof claims.z_acf === 'string' ? claims.z_acf : null,
    improperChain: claims.z_iccc === true,
  };
}

/**
 * Token exchange (RFC 8693, the Go SDK's refresh): a live access or refresh token of this controller becomes a
 * refresh token (the default; with a new access token beside it), an access token or an ID token of the same
 * API session. The subject token is not revoked.
 */
async function exchangeGrant(
  ctx: Ctx,
  params: TokenParams,
  clientId: string,
  issuer: string,
  from: GrantSource,
): Promise<ExchangeResponse> {
  const subject = params.subject_token;
  const subjectType = params.subject_token_type;
  if (!subject) throw new OAuthError('invalid_request', 'subject_token is required');
  if (subjectType !== TOKEN_TYPE.refresh && subjectType !== TOKEN_TYPE.access)
    throw new OAuthError('invalid_request', 'subject_token_type must be a refresh or access token type');
  const requested = params.requested_token_type ?? TOKEN_TYPE.refresh;
  if (!Object.values(TOKEN_TYPE).includes(requested as (typeof TOKEN_TYPE)[keyof typeof TOKEN_TYPE]))
    throw new OAuthError('invalid_request', 'requested_token_type is not supported');
  if (params.audience !== undefined && !OIDC_CLIENTS.includes(params.audience))
    throw new OAuthError('invalid_target', 'unknown audience');
  if (subject.length > 16_384) throw grantError('subject token invalid');
  const claims = await verifiedClaims(ctx, subject);
  const { jti, sub, z_asid: asid } = claims;
  if (
    claims.z_t !== (subjectType === TOKEN_TYPE.refresh ? 'r' : 'a') ||
    typeof jti !== 'string' ||
    typeof sub !== 'string' ||
    typeof asid !== 'string'
  )
    throw grantError('subject token invalid');
  if (claims.client_id !== clientId) throw grantError('the subject token was issued to another client');
  const c = sessionClaimsOf(ctx, claims, clientId);
  await checkBinding(ctx, c, from);
  const scopes = params.scope?.split(' ').filter(Boolean);
  if (scopes?.some((s) => !['openid', 'offline_access'].includes(s)))
    throw new OAuthError('invalid_scope', 'only openid and offline_access may be asked for');
  if (scopes && scopes.length > 0) c.scopes = scopes;
  // A refresh token is issued only when asked for; the scope says so to issueTokens.
  c.scopes = c.scopes.filter((s) => s !== 'offline_access');
  if (requested === TOKEN_TYPE.refresh) c.scopes.push('offline_access');
  return withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    if (await revocationOf(tctx, { jti, identityId: sub, apiSessionId: asid, issuedAt: Number(claims.iat) }))
      throw grantError('subject token revoked');
    const live = await liveSession(tctx, asid);
    if (live.identityId !== sub) throw grantError('subject token invalid');
    await sessionRefreshed(tctx, asid, sub, clientId, 'token exchange');
    const sessionCert = await signedSessionCert(tctx, c, params.csr_pem, from);
    const t = await issueTokens(tctx, c, live, issuer, { nonce: null, parentJti: jti, sessionCert });
    if (requested === TOKEN_TYPE.id)
      return {
        access_token: t.id_token,
        issued_token_type: TOKEN_TYPE.id,
        token_type: 'N_A',
        expires_in: Math.floor(oidcSettings(ctx).idTokenMs / 1000),
        scope: t.scope,
        ...(t.session_cert !== undefined && { session_cert: t.session_cert }),
      };
    return {
      access_token: t.access_token,
      issued_token_type: requested,
      token_type: 'Bearer',
      expires_in: t.expires_in,
      scope: t.scope,
      ...(t.refresh_token !== undefined && { refresh_token: t.refresh_token }),
      ...(t.session_cert !== undefined && { session_cert: t.session_cert }),
    };
  });
}

/** The left half of the hash of `token`, base64url: `at_hash` (OIDC Core §3.1.3.6), by the signing algorithm. */
function leftHalfHash(alg: string, token: string): string {
  const bits = alg.endsWith('384') ? 'sha384' : alg.endsWith('512') ? 'sha512' : 'sha256';
  const digest = createHash(bits).update(token, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

/**
 * Signs the access, ID and (with `offline_access`) refresh tokens of a session and records the refresh token
 * in its lineage, inside the grant's transaction (a grant either issues and records everything or nothing). Admin rights and names are read from the store at issue; requests read them again.
 */
async function issueTokens(
  ctx: Ctx,
  c: SessionClaims,
  session: OidcSessionPrincipal,
  issuer: string,
  opts: { nonce: string | null; parentJti: string | null; sessionCert?: string | undefined },
): Promise<TokenResponse> {
  const jwt = requirePki(ctx).controllerJwt;
  const settings = oidcSettings(ctx);
  const now = ctx.now();
  const iat = seconds(now);
  const common: Record<string, unknown> = {
    iss: issuer,
    sub: c.identityId,
    aud: [c.clientId],
    iat,
    nbf: iat,
    client_id: c.clientId,
    amr: c.amr,
    auth_time: c.authTime,
    scopes: c.scopes,
    z_asid: c.apiSessionId,
    ...(session.isAdmin && { z_ia: true }),
    ...(session.externalId && { z_eid: session.externalId }),
    ...(c.configTypes.length > 0 && { z_ct: c.configTypes }),
    z_aid: c.clientId,
    z_ra: c.remoteAddress,
    z_sdk: c.sdkInfo,
    z_env: c.envInfo,
    z_cfs: c.boundCertificates.length > 0 ? c.boundCertificates : null,
    ...(c.authCertificate && { z_acf: c.authCertificate }),
    ...(c.authenticatorId && { z_authid: c.authenticatorId }),
    ...(await certStateClaims(ctx, c, session.authPolicyId)),
  };
  const accessExp = iat + Math.floor(settings.accessTokenMs / 1000);
  const accessToken = await jwt.sign({ ...common, exp: accessExp, jti: randomUUID(), z_t: 'a' });
  const idToken = await jwt.sign({
    iss: issuer,
    sub: c.identityId,
    aud: [c.clientId],
    azp: c.clientId,
    client_id: c.clientId,
    iat,
    exp: iat + Math.floor(settings.idTokenMs / 1000),
    auth_time: c.authTime,
    ...(opts.nonce !== null && { nonce: opts.nonce }),
    amr: c.amr,
    at_hash: leftHalfHash(jwt.alg, accessToken),
    // So that an ID token given as `id_token_hint` names the session `end_session` ends.
    z_asid: c.apiSessionId,
    ...(c.scopes.includes('openid') && { name: session.name }),
    ...(session.isAdmin && { z_ia: true }),
    ...(session.externalId && { z_eid: session.externalId }),
  });
  const out: TokenResponse = {
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: accessExp - iat,
    id_token: idToken,
    scope: c.scopes.join(' '),
    ...(opts.sessionCert !== undefined && { session_cert: opts.sessionCert }),
  };
  if (c.scopes.includes('offline_access')) {
    // Distinct from the access token's jti, so revoking a replaced refresh token leaves access tokens alone.
    const refreshJti = randomUUID();
    const refreshExp = new Date(now.getTime() + settings.refreshTokenMs);
    out.refresh_token = await jwt.sign({ ...common, exp: seconds(refreshExp), jti: refreshJti, z_t: 'r' });
    await insertRefreshToken(ctx.db, {
      jti: refreshJti,
      apiSessionId: c.apiSessionId,
      parentJti: opts.parentJti,
      clientId: c.clientId,
      createdAt: iso(now),
      expiresAt: iso(refreshExp),
      rotatedAt: null,
    });
  }
  return out;
}
