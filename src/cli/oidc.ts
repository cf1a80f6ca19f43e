/**
 * `edgectl login --oidc`: the controller's OIDC login without a browser, as the Go SDK does it (parity:
 * docs/reference-notes.md §14): PKCE (S256) against `/oidc/authorize` with the public client `native` and its
 * loopback redirect URI, the password, certificate or external-JWT step over HTTP, the TOTP step when the login
 * asks for one, the callback's code exchanged at `/oidc/oauth/token`. Nothing listens on the redirect URI: the
 * code is read from the callback's `Location`.
 *
 * The access and refresh tokens are saved with the login; {@link OidcBearer} sends the access token as
 * `Authorization: Bearer` and refreshes it (refresh-token rotation: each refresh saves the new pair) when it has
 * expired, or when the controller answers 401 `error="expired"` (its clock decides).
 */
import { createHash, randomBytes } from 'node:crypto';
import { CliError } from './io.js';
import type { OidcTokens, SavedLogin, SessionStore } from './session-store.js';
import { rawRequest, type ClientCertificate, type RawResponse } from './transport/http.js';

export const OIDC_CLIENT_ID = 'native';
/** The Go SDK's redirect URI: a loopback URI every controller allows by default. Never listened on. */
export const OIDC_REDIRECT_URI = 'http://localhost:8080/auth/callback';

export type OidcMethod = 'password' | 'cert' | 'ext-jwt';

export interface OidcLoginInput {
  url: string;
  ca: string | undefined;
  clientCert: ClientCertificate | undefined;
  method: OidcMethod;
  username?: string;
  password?: string;
  jwt?: string;
  /** Asked only when the login needs a TOTP code. */
  totpCode: () => Promise<string>;
}

/** What an OAuth or login endpoint answered, as one line. */
function answerOf(res: RawResponse): string {
  try {
    const b = JSON.parse(res.text) as {
      error?: unknown;
      error_description?: unknown;
      code?: unknown;
      message?: unknown;
    };
    if (typeof b.error === 'string')
      return `${b.error}${b.error_description ? `: ${String(b.error_description)}` : ''}`;
    if (typeof b.code === 'string') return `${b.code}${b.message ? `: ${String(b.message)}` : ''}`;
  } catch {
    /* not JSON */
  }
  return `HTTP ${res.status}${res.text.trim() ? `: ${res.text.trim().slice(0, 200)}` : ''}`;
}

const location = (res: RawResponse): URL | undefined => {
  const l = res.headers?.location;
  return typeof l === 'string' ? new URL(l, 'https://relative.invalid') : undefined;
};

const formBody = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const FORM = 'application/x-www-form-urlencoded';

/** Tokens as saved: the JWTs and when each expires (from their `exp`). */
export function savedTokens(body: { access_token?: unknown; refresh_token?: unknown; id_token?: unknown }): OidcTokens {
  if (typeof body.access_token !== 'string')
    throw new CliError('error: the controller answered without an access token', 1);
  const expOf = (jwt: string): string | undefined => {
    try {
      const exp = (JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp?: unknown })
        .exp;
      return typeof exp === 'number' ? new Date(exp * 1000).toISOString() : undefined;
    } catch {
      return undefined;
    }
  };
  const refresh = typeof body.refresh_token === 'string' ? body.refresh_token : undefined;
  return {
    accessToken: body.access_token,
    accessExpiresAt: expOf(body.access_token) ?? new Date(Date.now() + 60_000).toISOString(),
    ...(refresh !== undefined && { refreshToken: refresh, refreshExpiresAt: expOf(refresh) }),
    ...(typeof body.id_token === 'string' && { idToken: body.id_token }),
    clientId: OIDC_CLIENT_ID,
  };
}

/** Runs the whole login; answers the tokens. Every refusal is a CliError naming the step. */
export async function oidcLogin(input: OidcLoginInput): Promise<OidcTokens> {
  const { url, ca, clientCert } = input;
  const oidc = `${url}/oidc`;
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const q = new URLSearchParams({
    client_id: OIDC_CLIENT_ID,
    redirect_uri: OIDC_REDIRECT_URI,
    response_type: 'code',
    scope: 'openid offline_access',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state,
    method: input.method,
  });
  const started = await rawRequest('GET', `${oidc}/authorize?${q}`, { ca, clientCert });
  const id = started.status === 302 ? location(started)?.searchParams.get('authRequestID') : undefined;
  if (!id) {
    if (started.status === 404)
      throw new CliError(`error: ${url} serves no OIDC login (404 at /oidc/authorize): log in without --oidc`, 1);
    throw new CliError(`error: the controller refused to start an OIDC login: ${answerOf(started)}`, 1);
  }

  const post = (path: string, body: Record<string, unknown>, headers?: Record<string, string>) =>
    rawRequest('POST', `${oidc}/${path}`, { ca, clientCert, body: JSON.stringify(body), headers });
  let step: RawResponse;
  if (input.method === 'password')
    step = await post('login/password', { id, username: input.username, password: input.password });
  else if (input.method === 'cert') step = await post('login/cert', { id });
  else step = await post('login/ext-jwt', { id }, { authorization: `Bearer ${input.jwt}` });
  if (step.status !== 302 && step.status !== 200)
    throw new CliError(`error: the OIDC login was refused: ${answerOf(step)}`, 1);

  if (step.status === 200) {
    const queries = ((JSON.parse(step.text) as { authQueries?: unknown[] }).authQueries ?? []) as {
      typeId?: string;
      isTotpEnrolled?: boolean;
    }[];
    const totp = queries.find((x) => x.typeId === 'TOTP');
    const other = queries.find((x) => x.typeId !== 'TOTP');
    if (other)
      throw new CliError(
        `error: the login also asks for a ${other.typeId ?? 'secondary'} factor, which edgectl cannot answer`,
        1,
      );
    if (totp?.isTotpEnrolled === false)
      throw new CliError(
        'error: the auth policy requires TOTP MFA and this identity has none: enroll it first (`edgectl mfa enable` after a login without --oidc)',
        1,
      );
    if (totp) {
      step = await post('login/totp', { id, code: await input.totpCode() });
      if (step.status !== 302)
        throw new CliError(
          `error: the TOTP code was not accepted: ${answerOf(step)}\nhint: a code is accepted once; wait for the next one`,
          1,
        );
    }
  }

  // The callback, on this controller whatever host its Location names, gives the code in its redirect.
  const cb = location(step);
  if (!cb || !cb.pathname.endsWith('/authorize/callback'))
    throw new CliError(`error: the OIDC login answered no callback: ${answerOf(step)}`, 1);
  const redirected = await rawRequest('GET', `${url}${cb.pathname}${cb.search}`, { ca, clientCert });
  const target = location(redirected);
  const code = target?.searchParams.get('code');
  if (redirected.status !== 302 || !code)
    throw new CliError(
      `error: the OIDC login issued no code: ${target?.searchParams.get('error_description') ?? answerOf(redirected)}`,
      1,
    );
  if (target!.searchParams.get('state') !== state)
    throw new CliError('error: the OIDC callback carried another state', 1);

  const tokens = await rawRequest('POST', `${oidc}/oauth/token`, {
    ca,
    clientCert,
    contentType: FORM,
    body: formBody({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: OIDC_REDIRECT_URI,
      client_id: OIDC_CLIENT_ID,
    }),
  });
  if (tokens.status !== 200) throw new CliError(`error: the code exchange was refused: ${answerOf(tokens)}`, 1);
  return savedTokens(JSON.parse(tokens.text) as Record<string, unknown>);
}

/** Refreshes a little before `exp`, so a token does not lapse between the check and the controller's. */
const EXPIRY_MARGIN_MS = 10_000;

/**
 * The bearer of a saved OIDC login: its access token, refreshed (and the login saved again) when it has expired.
 * A refused refresh (revoked, expired, the session ended) says to log in again.
 */
export class OidcBearer {
  constructor(
    private readonly login: SavedLogin & { oidc: OidcTokens },
    private readonly store: SessionStore,
    private readonly context: string,
    private readonly clientCert: ClientCertificate | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  async token(): Promise<string> {
    if (Date.parse(this.login.oidc.accessExpiresAt) - EXPIRY_MARGIN_MS <= this.now()) await this.refresh();
    return this.login.oidc.accessToken;
  }

  /** One refresh with rotation: the new access and refresh tokens replace the saved ones. */
  async refresh(): Promise<void> {
    const relogin = `run \`edgectl login ${this.login.url} --oidc${this.login.method === 'password' ? ` -u ${this.login.username}` : ''}\` again`;
    const refreshToken = this.login.oidc.refreshToken;
    if (!refreshToken)
      throw new CliError(`error: the OIDC access token has expired and there is no refresh token: ${relogin}`, 1);
    const res = await rawRequest('POST', `${this.login.url}/oidc/oauth/token`, {
      ca: this.login.caCert,
      clientCert: this.clientCert,
      contentType: FORM,
      body: formBody({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: this.login.oidc.clientId }),
    });
    if (res.status !== 200)
      throw new CliError(
        `error: the OIDC session of ${this.login.username} at ${this.login.url} cannot be refreshed (${answerOf(res)}): ${relogin}`,
        1,
      );
    const fresh = savedTokens(JSON.parse(res.text) as Record<string, unknown>);
    // A refresh answer without a refresh token keeps the one saved (as the console does).
    this.login.oidc = fresh.refreshToken
      ? fresh
      : { ...this.login.oidc, ...fresh, refreshToken, refreshExpiresAt: this.login.oidc.refreshExpiresAt };
    this.store.save(this.login, this.context);
  }
}

/** Ends an OIDC login's tokens at the controller: revokes the refresh token (RFC 7009). Best effort. */
export async function revokeRefreshToken(login: SavedLogin, clientCert: ClientCertificate | undefined): Promise<void> {
  const token = login.oidc?.refreshToken;
  if (!token) return;
  const res = await rawRequest('POST', `${login.url}/oidc/revoke`, {
    ca: login.caCert,
    clientCert,
    contentType: FORM,
    body: formBody({ token, token_type_hint: 'refresh_token', client_id: login.oidc!.clientId }),
  });
  if (res.status !== 200) throw new CliError(`error: the refresh token was not revoked: ${answerOf(res)}`, 1);
}
