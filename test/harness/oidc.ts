/**
 * An OIDC client as the Go SDK and the console drive the provider (docs/reference-notes.md §14.3–§14.6): PKCE, authorize, a login
 * step, the callback and the token endpoint, one request at a time so a test can look at each answer. Fixture
 * helpers: they return values and never assert.
 */
import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import { generateKeyAndCsr } from '../../src/pki/index.js';
import { unique } from './assert.js';
import type { HttpResponse, RequestOptions } from './http.js';
import { newCertSigner, signJwt } from './jwt-issuer.js';
import { generate } from 'otplib';
import { after, before } from 'node:test';
import {
  createIdentity,
  createRecord,
  startTestServer,
  type ApiClient,
  type StartOptions,
  type TestClock,
  type TestServer,
} from './server.js';

export const REDIRECT_URI = 'http://localhost:8080/auth/callback';

/**
 * A test file's server and its default admin's client: started before the file's tests, closed after them. Read
 * `env.server` and `env.admin` inside tests and hooks (they are set once the `before` hook has run).
 */
export function serverForTests(opts: StartOptions = {}): { server: TestServer; admin: ApiClient } {
  const env = {} as { server: TestServer; admin: ApiClient };
  before(async () => {
    env.server = await startTestServer(opts);
    env.admin = await env.server.admin();
  });
  after(async () => env.server?.close());
  return env;
}

export interface Pkce {
  verifier: string;
  challenge: string;
}

export function pkce(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A form body (`application/x-www-form-urlencoded`). */
export function form(fields: Record<string, string | string[]>): RequestOptions {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) p.append(k, one);
  return { raw: p.toString(), contentType: 'application/x-www-form-urlencoded' };
}

/** The query of a Location header (absolute or relative). */
export const locationQuery = (res: HttpResponse): URLSearchParams =>
  new URL(String(res.headers.location), 'https://x.invalid').searchParams;

export interface AuthorizeOptions {
  clientId?: string;
  redirectUri?: string;
  scope?: string;
  state?: string;
  nonce?: string;
  method?: string;
  extra?: Record<string, string>;
}

/** `GET /oidc/authorize`; the answer is not followed. */
export function authorize(server: TestServer, p: Pkce, o: AuthorizeOptions = {}): Promise<HttpResponse> {
  const q = new URLSearchParams({
    client_id: o.clientId ?? 'native',
    redirect_uri: o.redirectUri ?? REDIRECT_URI,
    response_type: 'code',
    scope: o.scope ?? 'openid offline_access',
    code_challenge: p.challenge,
    code_challenge_method: 'S256',
    state: o.state ?? 'st-1',
    ...(o.nonce && { nonce: o.nonce }),
    ...(o.method && { method: o.method }),
    ...o.extra,
  });
  return server.request('GET', `/oidc/authorize?${q}`);
}

/** Starts an authorization request and answers its id (throws when the provider refuses). */
export async function startLogin(server: TestServer, p: Pkce, o: AuthorizeOptions = {}): Promise<string> {
  const res = await authorize(server, p, o);
  const id = locationQuery(res).get('authRequestID');
  if (res.status !== 302 || !id) throw new Error(`authorize failed: ${res.status} ${res.text}`);
  return id;
}

/** `POST /oidc/login/password` with JSON (the Go SDK's way). */
export const passwordLogin = (server: TestServer, id: string, username: string, password: string) =>
  server.request('POST', '/oidc/login/password', { body: { id, username, password } });

/** Follows the callback of a completed login; answers the code and state of the redirect. */
export async function callback(server: TestServer, id: string): Promise<{ res: HttpResponse; code?: string }> {
  const res = await server.request('GET', `/oidc/authorize/callback?id=${encodeURIComponent(id)}`);
  return { res, code: locationQuery(res).get('code') ?? undefined };
}

/** A TLS client certificate (chain PEM) and its key, as a request presents them. */
export interface ClientCert {
  cert: string;
  key: string;
}

/** `POST /oidc/oauth/token` with a form body, over a connection presenting `tls` when given. */
export const tokenRequest = (server: TestServer, fields: Record<string, string>, tls?: ClientCert) =>
  server.request('POST', '/oidc/oauth/token', { ...form(fields), ...tls });

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const TOKEN_TYPES = {
  refresh: 'urn:ietf:params:oauth:token-type:refresh_token',
  access: 'urn:ietf:params:oauth:token-type:access_token',
  id: 'urn:ietf:params:oauth:token-type:id_token',
} as const;

/** A grant of one token (client `native`): its fields for the token, then `extra`'s, over `tls` when given. */
const tokenGrant =
  (fields: (token: string) => Record<string, string>) =>
  (server: TestServer, token: string, tls?: ClientCert, extra: Record<string, string> = {}) =>
    tokenRequest(server, { client_id: 'native', ...fields(token), ...extra }, tls);

/** The `refresh_token` grant. */
export const refreshRequest = tokenGrant((t) => ({ grant_type: 'refresh_token', refresh_token: t }));

/** A token exchange of a refresh token (of another kind with `subject_token_type` in `extra`). */
export const exchangeRequest = tokenGrant((t) => ({
  grant_type: TOKEN_EXCHANGE,
  subject_token: t,
  subject_token_type: TOKEN_TYPES.refresh,
}));

/** Follows the callback of a completed login and exchanges its code; answers the token endpoint's response. */
export async function exchangeCode(
  server: TestServer,
  id: string,
  p: Pkce,
  o: AuthorizeOptions = {},
  tls?: ClientCert,
): Promise<HttpResponse> {
  const { code } = await callback(server, id);
  if (!code) throw new Error('no code');
  const fields = {
    grant_type: 'authorization_code',
    code,
    code_verifier: p.verifier,
    redirect_uri: o.redirectUri ?? REDIRECT_URI,
    client_id: o.clientId ?? 'native',
  };
  return tokenRequest(server, fields, tls);
}

/** The `Authorization` header of a bearer token. */
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The lowercase hex SHA-1 of a PEM certificate (its first), as `z_cfs` and `z_acf` name it. */
export const sha1Fingerprint = (pem: string): string =>
  new X509Certificate(pem).fingerprint.replace(/:/g, '').toLowerCase();

/** An identity enrolled by ott: its id, its cert authenticator's id, its certificate chain and key. */
export async function enrolledCertIdentity(
  server: TestServer,
  admin: ApiClient,
  body: Record<string, unknown> = {},
): Promise<ClientCert & { id: string; authenticatorId: string; fingerprint: string }> {
  const id = await createIdentity(admin, { ...body, enrollment: { ott: true } });
  const token = (await admin.get(`/identities/${id}`)).body.data.enrollment.ott.token;
  const { privateKeyPem, csrPem } = await generateKeyAndCsr({ commonName: unique('oidc-cert') });
  const res = await server.request('POST', `/edge/client/v1/enroll/ott?token=${token}`, {
    raw: csrPem,
    contentType: 'application/pkcs10',
    headers: { accept: 'application/x-x509-user-cert' },
  });
  if (res.status !== 200) throw new Error(`enroll failed: ${res.status} ${res.text}`);
  const authenticatorId = (await admin.get(`/identities/${id}`)).body.data.authenticators.cert.id;
  return { id, authenticatorId, cert: res.text, key: privateKeyPem, fingerprint: sha1Fingerprint(res.text) };
}

/**
 * Starts an authorization request and posts a certificate login to it (body fields as given); answers the login's
 * response with the request's id and PKCE pair, for the caller to judge and exchange.
 */
export async function postCertLogin(
  server: TestServer,
  tls: ClientCert,
  body: Record<string, unknown> = {},
  o: AuthorizeOptions = {},
): Promise<{ id: string; p: Pkce; res: HttpResponse }> {
  const p = pkce();
  const id = await startLogin(server, p, { method: 'cert', ...o });
  const res = await server.request('POST', `/oidc/login/cert?authRequestID=${id}`, { body, ...tls });
  return { id, p, res };
}

/** The whole code flow with a certificate; answers the token response (throws on any refusal). */
export async function oidcCertLogin(
  server: TestServer,
  tls: ClientCert,
  body: Record<string, unknown> = {},
  o: AuthorizeOptions = {},
): Promise<Tokens> {
  const { id, p, res } = await postCertLogin(server, tls, body, o);
  if (res.status !== 302) throw new Error(`login failed: ${res.status} ${res.text}`);
  return tokensOf(await exchangeCode(server, id, p, o));
}

const tokensOf = (res: HttpResponse): Tokens => {
  if (res.status !== 200) throw new Error(`token exchange failed: ${res.status} ${res.text}`);
  return res.body as Tokens;
};

export interface Tokens {
  access_token: string;
  refresh_token?: string;
  id_token: string;
  expires_in: number;
  token_type: string;
  scope: string;
  session_cert?: string;
}

/** The whole code flow with a password; answers the token response (throws on any refusal). */
export async function oidcLogin(
  server: TestServer,
  username: string,
  password: string,
  o: AuthorizeOptions = {},
  extra: Record<string, unknown> = {},
): Promise<Tokens> {
  const p = pkce();
  const id = await startLogin(server, p, o);
  const login = await server.request('POST', '/oidc/login/password', { body: { id, username, password, ...extra } });
  if (login.status !== 302) throw new Error(`login failed: ${login.status} ${login.text}`);
  return tokensOf(await exchangeCode(server, id, p, o));
}

/** The payload of a JWT, unverified. */
export const claimsOf = (jwt: string): Record<string, any> =>
  JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8'));

export const headerOf = (jwt: string): Record<string, any> =>
  JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString('utf8'));

/** Login failure limits out of the way of tests that fail logins on purpose (the limits have tests of their own). */
export const RELAXED_FAILURE_LIMITS = `edge:
  api:
    rateLimit:
      auth:
        failuresPerSource: { burst: 1000, perMinute: 1000 }
        failuresPerAccount: { burst: 1000, perMinute: 1000 }
`;

/** Creates an auth policy allowing passwords (no lockout), certificates as `cert` says, and TOTP as asked; answers its id. */
export async function createAuthPolicy(
  admin: ApiClient,
  o: { cert?: { allowed: boolean; allowExpiredCerts: boolean }; requireTotp?: boolean } = {},
): Promise<string> {
  const policy = await admin.post('/auth-policies', {
    name: unique('oidc-policy'),
    primary: {
      cert: o.cert ?? { allowed: false, allowExpiredCerts: false },
      extJwt: { allowed: false, allowedSigners: [] },
      oidc: { allowed: true, requireTotp: false },
      updb: {
        allowed: true,
        lockoutDurationMinutes: 0,
        maxAttempts: 0,
        minPasswordLength: 5,
        requireMixedCase: false,
        requireNumberChar: false,
        requireSpecialChar: false,
      },
    },
    secondary: { requireTotp: o.requireTotp ?? false },
  });
  if (policy.status !== 201) throw new Error(`auth policy refused: ${policy.status} ${policy.text}`);
  return policy.body.data.id;
}

/** An external JWT signer registered with the controller (audience `edge`, kid `k1`): `jwtFor(sub)` signs its token. */
export async function createExtJwtSigner(admin: ApiClient): Promise<{
  issuer: string;
  jwtFor: (sub: string) => Promise<string>;
  foreignJwtFor: (sub: string) => Promise<string>;
}> {
  const signer = await newCertSigner(unique('idp'));
  const issuer = `https://${unique('idp')}.example`;
  await createRecord(admin, '/external-jwt-signers', {
    name: unique('signer'),
    issuer,
    audience: 'edge',
    enabled: true,
    certPem: signer.certPem,
    kid: 'k1',
  });
  const other = await newCertSigner(unique('other'));
  const claims = (sub: string) => ({ iss: issuer, aud: 'edge', kid: 'k1', claims: { sub } });
  return {
    issuer,
    jwtFor: (sub) => signJwt(signer.key, claims(sub)),
    // The same claims signed by a key the controller does not know.
    foreignJwtFor: (sub) => signJwt(other.key, claims(sub)),
  };
}

/** `POST /oidc/login/ext-jwt` for auth request `id` with `jwt` as its bearer (none when undefined). */
export const postExtJwtLogin = (server: TestServer, id: string, jwt?: string) =>
  server.request('POST', `/oidc/login/ext-jwt?authRequestID=${id}`, {
    body: {},
    ...(jwt !== undefined && { headers: bearer(jwt) }),
  });

/** A TOTP step is 30 seconds. */
export const TOTP_STEP_MS = 30_000;

/** The TOTP code of `secret` at the controller's now, `steps` steps later (or earlier). */
export const totpCode = (secret: string, clock: TestClock, steps = 0): Promise<string> =>
  generate({ secret, epoch: Math.floor((clock.now().getTime() + steps * TOTP_STEP_MS) / 1000) });

/** The secret of a TOTP provisioning URL (`otpauth://…?secret=`). */
export const totpSecretOf = (provisioningUrl: string): string => new URL(provisioningUrl).searchParams.get('secret')!;

/** Any client of the Client API with the caller's session (an ApiClient, or one sending a bearer token). */
export interface TotpClient {
  get(path: string): Promise<HttpResponse>;
  post(path: string, body: unknown): Promise<HttpResponse>;
}

/**
 * Enrolls the caller of `client` in TOTP and verifies the enrollment with a current code; answers the secret and the
 * recovery codes. The code used is spent (the replay guard): advance the clock a step before the next one.
 */
export async function enrollTotp(
  client: Pick<ApiClient, 'get' | 'post'> | TotpClient,
  clock: TestClock,
): Promise<{ secret: string; recoveryCodes: string[] }> {
  const started = await client.post('/current-identity/mfa', {});
  if (started.status !== 201) throw new Error(`mfa enroll failed: ${started.status} ${started.text}`);
  const d = (await client.get('/current-identity/mfa')).body.data;
  const secret = totpSecretOf(d.provisioningUrl);
  const verified = await client.post('/current-identity/mfa/verify', { code: await totpCode(secret, clock) });
  if (verified.status !== 200) throw new Error(`mfa verify failed: ${verified.status} ${verified.text}`);
  return { secret, recoveryCodes: d.recoveryCodes };
}
