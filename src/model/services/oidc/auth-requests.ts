/**
 * Authorization requests of the OIDC provider (docs/reference-notes.md §14.3–§14.5): `/oidc/authorize` stores one, the login steps
 * record who passed which factor on it, the callback gives it a one-time code, and the token endpoint
 * exchanges that code (with the PKCE verifier) once.
 *
 * The request's id travels in URLs and headers and the code in a redirect: the store keeps SHA-256 of each
 * (store/oidc.ts), so a copy of the store holds neither. Requests last 10 minutes, as the reference's.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { withTx } from '../../../store/db.js';
import {
  authRequestByIdHash,
  deleteAuthRequest,
  insertAuthRequest,
  updateAuthRequest,
  type AuthRequestRecord,
} from '../../../store/oidc.js';
import { identityAuthPolicyId, setIdentityClientInfo } from '../../../store/identities.js';
import { policyForIdentity } from '../hooks/auth-policy.js';
import { iso, withDb, type Ctx } from '../../ctx.js';
import { DomainError } from '../../errors.js';
import { tokenHash } from '../../tokens.js';
import { confirmPasswordLogin, infoObject, resolveConfigTypes } from '../authentication/authenticate.js';
import type { AttemptTarget } from '../authentication/password-attempts.js';
import { callerFailures, passLoginTotp } from '../mfa/mfa.js';
import { SESSION_FAILURE_LIMIT } from '../mfa/mfa-failures.js';
import { secondaryFactors, isMfaQuery, type AuthQuery } from '../authentication/auth-queries.js';
import { AuthorizeRedirect, AuthorizeRefusal, withQuery } from './oidc-errors.js';
import { DEFAULT_OIDC_SETTINGS, OIDC_CLIENTS, redirectAllowed, type OidcSettings } from './oidc-settings.js';
import { recordOidcStepSuccess, type OidcStep } from './login-events.js';
import { effectiveOidcSettings } from '../controller/settings.js';
import { GLOBAL_CONTROLLER_ID } from '../../resources/controller-setting.js';

/** How long an authorization request (and its code) may wait (docs/reference-notes.md §14.3). */
export const AUTH_REQUEST_TTL_MS = 10 * 60_000;

/** The scopes the provider knows; others are dropped (§14.3). */
const KNOWN_SCOPES: ReadonlySet<string> = new Set(['openid', 'profile', 'email', 'phone', 'address', 'offline_access']);

/** Primary login methods, by the `method` authorize parameter, and the login page each leads to. */
export const LOGIN_PAGES = { password: 'username', cert: 'cert', 'ext-jwt': 'ext-jwt' } as const;
export type LoginMethod = keyof typeof LOGIN_PAGES;

export const oidcSettings = (ctx: Ctx): OidcSettings => ctx.settings.oidc ?? DEFAULT_OIDC_SETTINGS;

/**
 * The redirect (or post-logout) URI patterns in force on controller `controllerId`: those of `edge.oidc` (or their
 * defaults), then the controller settings' lists (the global record's, then this controller's). Undefined
 * `controllerId` (not registered yet): the global record's only.
 */
export async function allowedUris(
  ctx: Ctx,
  controllerId: string | undefined,
  list: 'redirectUris' | 'postLogoutUris',
): Promise<string[]> {
  const stored = await effectiveOidcSettings(ctx, controllerId ?? GLOBAL_CONTROLLER_ID);
  return [...oidcSettings(ctx)[list], ...stored[list]];
}

/** The TOTP auth query of the OIDC flow (docs/reference-notes.md §14.4), replacing the legacy `MFA` query. */
export const totpQuery = (isTotpEnrolled: boolean): AuthQuery => ({
  typeId: 'TOTP',
  provider: 'ziti',
  format: 'numeric',
  httpMethod: 'POST',
  httpUrl: './oidc/login/totp',
  minLength: 6,
  maxLength: 8,
  isTotpEnrolled,
});

export type AuthorizeParams = Record<string, string | undefined>;

const bounded = (v: string | undefined, max: number): string | undefined =>
  v === undefined || v.length <= max ? v : undefined;

/**
 * Starts an authorization request. Answers its id and the login page the client is sent to (relative to the
 * provider's root, e.g. `login/username`).
 * @throws AuthorizeRefusal (400 text) without a known client and an allowed redirect URI; AuthorizeRedirect for
 *   every other refusal.
 */
export async function startAuthorization(
  ctx: Ctx,
  params: AuthorizeParams,
  configTypeNames: readonly string[],
  from: { remoteAddress: string; hasClientCert: boolean; controllerId?: string | undefined },
): Promise<{ id: string; loginPage: string }> {
  const clientId = params.client_id;
  const redirectUri = params.redirect_uri;
  if (!clientId) throw new AuthorizeRefusal('client_id is required');
  if (!OIDC_CLIENTS.includes(clientId)) throw new AuthorizeRefusal('unknown client');
  if (!redirectUri) throw new AuthorizeRefusal('redirect_uri is required');
  if (!redirectAllowed(redirectUri, await allowedUris(ctx, from.controllerId, 'redirectUris')))
    throw new AuthorizeRefusal('the redirect_uri is not allowed for this client');
  const state = bounded(params.state, 2048) ?? null;
  const refuse = (error: string, description: string) => new AuthorizeRedirect(redirectUri, state, error, description);
  if (params.state !== undefined && state === null) throw refuse('invalid_request', 'state is too long');
  if (params.response_type !== 'code')
    throw refuse('unsupported_response_type', 'only the response type code is supported');
  const scopes = [...new Set((params.scope ?? '').split(' ').filter((s) => KNOWN_SCOPES.has(s)))];
  if (!scopes.includes('openid')) throw refuse('invalid_scope', 'the scope must include openid');
  if (params.prompt?.split(' ').includes('none')) throw refuse('login_required', 'the user must log in');
  // PKCE is mandatory, and S256 the only method (docs/decisions.md, "OIDC login").
  const challenge = params.code_challenge;
  if (!challenge || !/^[A-Za-z0-9_-]{43,128}$/.test(challenge))
    throw refuse('invalid_request', 'code_challenge is required (PKCE)');
  if ((params.code_challenge_method ?? 'plain') !== 'S256')
    throw refuse('invalid_request', 'code_challenge_method must be S256');
  const nonce = bounded(params.nonce, 1024) ?? null;
  if (params.nonce !== undefined && nonce === null) throw refuse('invalid_request', 'nonce is too long');
  const method = params.method;
  if (method !== undefined && !(method in LOGIN_PAGES))
    throw refuse('invalid_request', 'method must be password, cert or ext-jwt');
  const now = ctx.now();
  const id = randomUUID();
  await insertAuthRequest(ctx.db, {
    idHash: tokenHash(id),
    createdAt: iso(now),
    expiresAt: iso(new Date(now.getTime() + AUTH_REQUEST_TTL_MS)),
    clientId,
    redirectUri,
    scopes,
    state,
    nonce,
    codeChallenge: challenge,
    codeChallengeMethod: 'S256',
    apiSessionId: randomUUID(),
    remoteAddress: from.remoteAddress.slice(0, 100),
    method: method ?? null,
    configTypes: configTypeNames.slice(0, 100).map((c) => c.slice(0, 255)),
    identityId: null,
    authenticatorId: null,
    amr: [],
    authTime: null,
    authQueries: [],
    sdkInfo: null,
    envInfo: null,
    codeHash: null,
    certFingerprint: null,
    csrPem: null,
    certImproperChain: false,
  });
  const chosen: LoginMethod = (method as LoginMethod | undefined) ?? (from.hasClientCert ? 'cert' : 'password');
  return { id, loginPage: `login/${LOGIN_PAGES[chosen]}` };
}

/** A live authorization request, by the id the client holds. */
export interface OpenAuthRequest extends AuthRequestRecord {
  id: string;
}

/**
 * The authorization request `id` names, if it exists and has not expired.
 * @throws DomainError UNAUTHORIZED otherwise (the login endpoints' answer to an unknown request, §14.4).
 */
export async function openAuthRequest(ctx: Ctx, id: string | undefined): Promise<OpenAuthRequest> {
  // The reason is for the step's failure event, never on the wire (login-events.ts).
  const unknown = () => new DomainError('UNAUTHORIZED', { audit: { reason: 'unknown auth request' } });
  if (!id || id.length > 40) throw unknown();
  const found = await authRequestByIdHash(ctx.db, tokenHash(id));
  if (!found || found.expiresAt <= iso(ctx.now())) throw unknown();
  return { ...found, id };
}

/** What a primary login established. */
export interface PrimaryLogin {
  identityId: string;
  authenticatorId: string;
  /** `password`, `cert` or `ext-jwt` (docs/reference-notes.md §14.7). */
  method: string;
  /** The login request's source address, for its event. */
  remoteAddress?: string | undefined;
  /** A certificate login's client certificate (lowercase hex SHA-1): its tokens are bound to it. */
  certFingerprint?: string | undefined;
  /** A certificate login whose client sent an improper chain (the `z_iccc` claim). */
  improperChain?: boolean | undefined;
}

/** The login body fields kept for the tokens and the identity (§14.4). */
export interface LoginBody {
  /** A CSR already checked (session-certs.ts `loginCsr`), signed at the code exchange. */
  csrPem?: string | undefined;
  configTypes?: unknown;
  envInfo?: unknown;
  sdkInfo?: unknown;
  [other: string]: unknown;
}

/**
 * Records a successful primary login on its request, inside `ctx`'s transaction: the identity's SDK and
 * environment info are stored, the config types resolved, and the second factors still due computed.
 * Answers those (empty: the login is complete and the callback will issue a code).
 */
export async function recordPrimaryLogin(
  ctx: Ctx,
  request: OpenAuthRequest,
  login: PrimaryLogin,
  body: LoginBody,
): Promise<AuthQuery[]> {
  return withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    const envInfo = infoObject(body.envInfo);
    const sdkInfo = infoObject(body.sdkInfo);
    await setIdentityClientInfo(trx, login.identityId, { envInfo, sdkInfo });
    const bodyTypes = Array.isArray(body.configTypes)
      ? body.configTypes.filter((c): c is string => typeof c === 'string')
      : [];
    const configTypes = await resolveConfigTypes(tctx, [...request.configTypes, ...bodyTypes]);
    const factors = await secondaryFactors(tctx, login.identityId, body);
    // The legacy MFA query becomes the OIDC flow's TOTP query; `isTotpEnrolled` tells a policy's demand apart.
    const queries = factors.authQueries.map((q) => (isMfaQuery(q) ? totpQuery(factors.isMfaRequired) : q));
    // A secondary ext-JWT the login already answered (a bearer JWT beside it) is recorded as `ejs:<signer>`.
    const policy = await policyForIdentity(trx, await identityAuthPolicyId(trx, login.identityId));
    const signer = policy.secondary.requireExtJwtSigner ?? null;
    const extJwtDone = signer !== null && !queries.some((q) => q.typeId === 'EXT-JWT');
    await updateAuthRequest(trx, request.idHash, {
      identityId: login.identityId,
      authenticatorId: login.authenticatorId,
      amr: extJwtDone ? [login.method, `ejs:${signer}`] : [login.method],
      authTime: iso(ctx.now()),
      authQueries: queries,
      configTypes,
      envInfo: envInfo ?? null,
      sdkInfo: sdkInfo ?? null,
      certFingerprint: login.certFingerprint ?? null,
      certImproperChain: login.improperChain ?? false,
      csrPem: body.csrPem ?? null,
    });
    await recordOidcStepSuccess(tctx, {
      step: login.method as OidcStep,
      identityId: login.identityId,
      authenticatorId: login.authenticatorId,
      remoteAddress: login.remoteAddress,
      apiSessionId: request.apiSessionId,
      complete: queries.length === 0,
    });
    return queries;
  });
}

/** Whether every factor of the request is done: a primary login and no query left (docs/reference-notes.md §14.10). */
export const isAuthenticated = (r: AuthRequestRecord): boolean => r.identityId !== null && r.authQueries.length === 0;

/**
 * The callback (§14.5): a request whose login is complete gets a new one-time code (any earlier one stops
 * working) and the client is sent to its redirect URI with it; otherwise `interaction_required`.
 * Answers the redirect's location.
 */
export async function issueCode(ctx: Ctx, id: string | undefined): Promise<string> {
  const request = await openAuthRequest(ctx, id);
  if (!isAuthenticated(request))
    throw new AuthorizeRedirect(
      request.redirectUri,
      request.state,
      'interaction_required',
      'the login is not complete',
    );
  const code = randomBytes(32).toString('base64url');
  await updateAuthRequest(ctx.db, request.idHash, { codeHash: tokenHash(code) });
  return withQuery(request.redirectUri, { code, ...(request.state !== null && { state: request.state }) });
}

/**
 * Completes a password login whose credential `checkPassword` accepted: in one transaction the identity is
 * checked again and its failure counter cleared, and the login recorded on its request. Answers the second
 * factors still due.
 */
export async function finishPasswordLogin(
  ctx: Ctx,
  request: OpenAuthRequest,
  target: AttemptTarget,
  body: LoginBody,
  remoteAddress?: string,
): Promise<AuthQuery[]> {
  return withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    await confirmPasswordLogin(tctx, target);
    return recordPrimaryLogin(
      tctx,
      request,
      { identityId: target.identityId, authenticatorId: target.authenticatorId, method: 'password', remoteAddress },
      body,
    );
  });
}

/** The queries still due on a request whose primary login is done (401 UNAUTHORIZED before it). */
export async function pendingQueries(ctx: Ctx, id: string | undefined): Promise<AuthQuery[]> {
  const request = await openAuthRequest(ctx, id);
  if (request.identityId === null) throw new DomainError('UNAUTHORIZED');
  return request.authQueries as AuthQuery[];
}

const isTotp = (q: unknown): boolean => typeof q === 'object' && q !== null && (q as AuthQuery).typeId === 'TOTP';

/** parity: the TOTP step's refusal code has spaces (docs/reference-notes.md §14.4). */
const invalidTotp = (identityId: string, causeMessage?: string) =>
  new DomainError('INVALID TOTP CODE', {
    ...(causeMessage !== undefined && { causeMessage }),
    audit: { reason: 'invalid totp code', identityId },
  });

/**
 * The TOTP step (`POST /oidc/login/totp`): a current code or an unused recovery code (consumed) passes the
 * factor, and `totp` joins the login's `amr`. Wrong codes count as on every other code check; a login's 5th
 * wrong code ends its request (the client starts again with the password). Answers the queries still due.
 */
export async function passTotpStep(
  ctx: Ctx,
  id: string | undefined,
  code: string | undefined,
  remoteAddress?: string,
): Promise<AuthQuery[]> {
  const request = await openAuthRequest(ctx, id);
  if (request.identityId === null) throw new DomainError('UNAUTHORIZED', { audit: { reason: 'no primary login yet' } });
  const identityId = request.identityId;
  const queries = request.authQueries as AuthQuery[];
  if (!queries.some(isTotp)) return queries;
  if (typeof code !== 'string' || code.length > 13) throw invalidTotp(identityId);
  const caller = { apiSessionId: request.apiSessionId, identityId };
  const rest = queries.filter((q) => !isTotp(q));
  try {
    await passLoginTotp(ctx, caller, code, async (trx) => {
      await updateAuthRequest(trx, request.idHash, { authQueries: rest, amr: [...request.amr, 'totp'] });
      await recordOidcStepSuccess(withDb(ctx, trx), {
        step: 'totp',
        identityId,
        remoteAddress,
        apiSessionId: request.apiSessionId,
        complete: rest.length === 0,
      });
    });
  } catch (e) {
    if (!(e instanceof DomainError) || (e.code !== 'MFA_INVALID_TOKEN' && e.code !== 'MFA_NOT_ENROLLED')) throw e;
    if ((await callerFailures(ctx, caller)) >= SESSION_FAILURE_LIMIT) await deleteAuthRequest(ctx.db, request.idHash);
    throw invalidTotp(identityId, e.code === 'MFA_INVALID_TOKEN' ? e.causeMessage : undefined);
  }
  return rest;
}

/**
 * Completes a certificate (`cert`) or external JWT (`ext-jwt`) login: in one transaction `check` names the
 * identity (refusing as the legacy login does) and the login is recorded on its request.
 */
export async function finishLogin(
  ctx: Ctx,
  request: OpenAuthRequest,
  method: 'cert' | 'ext-jwt',
  check: (
    ctx: Ctx,
  ) => Promise<{ identityId: string; authenticatorId: string; certFingerprint?: string; improperChain?: boolean }>,
  body: LoginBody,
  remoteAddress?: string,
): Promise<AuthQuery[]> {
  return withTx(ctx.db, async (trx) => {
    const tctx = withDb(ctx, trx);
    const login = await check(tctx);
    return recordPrimaryLogin(tctx, request, { ...login, method, remoteAddress }, body);
  });
}
