/**
 * OIDC access tokens on the Client and Management APIs (`Authorization: Bearer`, docs/reference-notes.md §14.8),
 * the revocations resource and the checks every bearer request makes (§14.9), userinfo, `/oidc/revoke`,
 * `/oidc/end_session`, and `POST /current-api-session/totp-token`. The clock is frozen.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN, createUser, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import {
  bearer as bearerHeader,
  claimsOf,
  enrollTotp,
  form,
  oidcLogin,
  refreshRequest,
  RELAXED_FAILURE_LIMITS,
  TOTP_STEP_MS as STEP_MS,
  totpCode,
  type Tokens,
} from '../harness/oidc.js';

const YAML = RELAXED_FAILURE_LIMITS;

let server: TestServer;
let admin: ApiClient;
let user: { id: string; username: string; password: string };

before(async () => {
  server = await startTestServer({ yaml: YAML, clock: 'frozen' });
  admin = await server.admin();
  user = await createUser(server, admin);
});
after(async () => server.close());

/** A client of one API sending `token` as a bearer access token (and no session header). */
const bearer = (token: string, api: 'client' | 'management' = 'client') => ({
  get: (path: string) => server.request('GET', `/edge/${api}/v1${path}`, { headers: bearerHeader(token) }),
  post: (path: string, body: unknown) =>
    server.request('POST', `/edge/${api}/v1${path}`, { body, headers: bearerHeader(token) }),
  delete: (path: string) => server.request('DELETE', `/edge/${api}/v1${path}`, { headers: bearerHeader(token) }),
});

const login = (): Promise<Tokens> => oidcLogin(server, user.username, user.password);

describe('bearer access tokens on both APIs', () => {
  test('an access token works where a session does, on the Client and the Management API', async () => {
    const t = await login();
    const me = await bearer(t.access_token).get('/current-identity');
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.data.id, user.id);
    const mgmt = await bearer(t.access_token, 'management').get('/current-identity');
    assert.equal(mgmt.status, 200);
  });

  test('admin rights come from the store: an admin’s token reaches admin operations, a user’s does not', async () => {
    const a = await oidcLogin(server, ADMIN.username, ADMIN.password);
    assert.equal(claimsOf(a.access_token).z_ia, true);
    assert.equal((await bearer(a.access_token, 'management').get('/identities')).status, 200);
    const u = await login();
    assert.equal((await bearer(u.access_token, 'management').get('/identities')).status, 401);
  });

  test('the current API session of a bearer request is its OIDC session, its token the access JWT', async () => {
    const t = await login();
    const res = await bearer(t.access_token).get('/current-api-session');
    assert.equal(res.status, 200);
    assert.equal(res.body.data.id, claimsOf(t.access_token).z_asid);
    assert.equal(res.body.data.token, t.access_token);
    assert.equal(res.body.data.expirationSeconds, 1800);
  });

  test('a zt-session header wins over a bearer token', async () => {
    const t = await login();
    const res = await server.request('GET', '/edge/client/v1/current-identity', {
      headers: { authorization: `Bearer ${t.access_token}`, 'zt-session': '00000000-0000-4000-8000-000000000000' },
    });
    assert.equal(res.status, 401);
  });

  test('a tampered token is refused as invalid, an expired one as expired', async () => {
    const t = await login();
    const [h, , s] = t.access_token.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claimsOf(t.access_token), sub: admin.token })).toString('base64url')}.${s}`;
    const bad = await bearer(forged).get('/current-identity');
    assert.equal(bad.status, 401);
    assert.equal(bad.body.error.code, 'UNAUTHORIZED');
    assert.equal(bad.headers['www-authenticate'], 'Bearer realm="openziti-oidc" error="invalid"');
    server.clock.advance(30 * 60_000 + 1000);
    const expired = await bearer(t.access_token).get('/current-identity');
    assert.equal(expired.status, 401);
    assert.equal(expired.headers['www-authenticate'], 'Bearer realm="openziti-oidc" error="expired"');
    admin = await server.admin();
  });

  test('a token of another controller (another key) is refused, as a bearer and as a refresh token', async () => {
    const other = await startTestServer({ clock: 'frozen' });
    try {
      const u = await createUser(other, await other.admin());
      const foreign = await oidcLogin(other, u.username, u.password);
      const res = await bearer(foreign.access_token).get('/current-identity');
      assert.equal(res.status, 401);
      assert.equal(res.headers['www-authenticate'], 'Bearer realm="openziti-oidc" error="invalid"');
      const r = await refreshRequest(server, foreign.refresh_token!);
      assert.equal(r.body.error, 'invalid_grant');
    } finally {
      await other.close();
    }
  });

  test('a deleted API session, a disabled identity or a logout refuses the token at once', async () => {
    const t = await login();
    assert.equal((await admin.delete(`/api-sessions/${claimsOf(t.access_token).z_asid}`)).status, 200);
    assert.equal((await bearer(t.access_token).get('/current-identity')).status, 401);

    const out = await login();
    assert.equal((await bearer(out.access_token).delete('/current-api-session')).status, 200);
    assert.equal((await bearer(out.access_token).get('/current-identity')).status, 401);

    const other = await createUser(server, admin);
    const o = await oidcLogin(server, other.username, other.password);
    assert.equal((await bearer(o.access_token).get('/current-identity')).status, 200);
    assert.equal((await admin.post(`/identities/${other.id}/disable`, { durationMinutes: 0 })).status, 200);
    assert.equal((await bearer(o.access_token).get('/current-identity')).status, 401);
  });

  test('removing the authenticator a login used ends its OIDC sessions', async () => {
    const other = await createUser(server, admin);
    const t = await oidcLogin(server, other.username, other.password);
    const authenticatorId = claimsOf(t.access_token).z_authid;
    assert.equal(typeof authenticatorId, 'string');
    assert.equal((await admin.delete(`/authenticators/${authenticatorId}`)).status, 200);
    assert.equal((await bearer(t.access_token).get('/current-identity')).status, 401);
    // Legacy sessions are left as they were.
    assert.equal((await other.client.get('/current-identity')).status, 200);
  });

  test('an OIDC session idle past the timeout ends', async () => {
    const t = await login();
    server.clock.advance(29 * 60_000);
    assert.equal((await refreshRequest(server, t.refresh_token!)).status, 200);
    server.clock.advance(29 * 60_000);
    // The refresh counted as activity: the session lives on; a new refresh would too, but idling does not.
    admin = await server.admin();
    assert.equal((await admin.get(`/api-sessions/${claimsOf(t.access_token).z_asid}`)).status, 200);
    server.clock.advance(31 * 60_000);
    admin = await server.admin();
    assert.equal((await bearer(t.access_token).get('/current-identity')).status, 401);
  });
});

describe('revocations', () => {
  test('a JTI revocation refuses that access token only; it is listed and readable', async () => {
    const t = await login();
    const other = await login();
    const jti = claimsOf(t.access_token).jti;
    const res = await admin.post('/revocations', { id: jti, type: 'JTI' });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.data.id, jti);
    assert.equal((await bearer(t.access_token).get('/current-identity')).status, 401);
    assert.equal((await bearer(other.access_token).get('/current-identity')).status, 200);

    const detail = await admin.get(`/revocations/${jti}`);
    assert.equal(detail.status, 200);
    assert.equal(detail.body.data.type, 'JTI');
    assert.equal(detail.body.data.issuedBefore, undefined);
    assert.equal(Date.parse(detail.body.data.expiresAt) - server.clock.now().getTime(), 24 * 3600_000);
    const list = await admin.get(`/revocations?filter=${encodeURIComponent(`id = "${jti}"`)}`);
    assert.equal(list.status, 200);
    assert.equal(list.body.data.length, 1);
    assert.equal((await admin.get('/revocations/00000000-0000-4000-8000-000000000000')).status, 404);
  });

  test('an API_SESSION revocation refuses every token of that login, refresh included', async () => {
    const t = await login();
    const asid = claimsOf(t.access_token).z_asid;
    assert.equal((await admin.post('/revocations', { id: asid, type: 'API_SESSION' })).status, 201);
    assert.equal((await bearer(t.access_token).get('/current-identity')).status, 401);
    const r = await refreshRequest(server, t.refresh_token!);
    assert.equal(r.body.error, 'invalid_grant');
  });

  test('an IDENTITY revocation refuses tokens issued before it, not after', async () => {
    const other = await createUser(server, admin);
    const before = await oidcLogin(server, other.username, other.password);
    // The cutoff has one-second granularity: a token issued in the revocation's second survives it.
    server.clock.advance(1000);
    assert.equal((await admin.post('/revocations', { id: other.id, type: 'IDENTITY' })).status, 201);
    assert.equal((await bearer(before.access_token).get('/current-identity')).status, 401);
    server.clock.advance(1000);
    const afterwards = await oidcLogin(server, other.username, other.password);
    assert.equal((await bearer(afterwards.access_token).get('/current-identity')).status, 200);
  });

  test('bad revocations are refused with their codes, and only admins may post', async () => {
    const jti = await admin.post('/revocations', { id: 'not-a-uuid', type: 'JTI' });
    assert.equal(jti.status, 400);
    assert.equal(jti.body.error.code, 'INVALID_FIELD');
    assert.equal(jti.body.error.cause.field, 'id');
    const asid = await admin.post('/revocations', { id: 'x', type: 'API_SESSION' });
    assert.equal(asid.body.error.code, 'INVALID_FIELD');
    assert.equal((await admin.post('/revocations', { id: 'no-such-identity', type: 'IDENTITY' })).status, 404);
    assert.equal((await admin.post('/revocations', { id: user.id })).status, 400);
    assert.equal((await admin.post('/revocations', { id: user.id, type: 'OTHER' })).status, 400);
    const t = await login();
    assert.equal(
      (await bearer(t.access_token, 'management').post('/revocations', { id: user.id, type: 'IDENTITY' })).status,
      401,
    );
    assert.equal((await bearer(t.access_token, 'management').get('/revocations')).status, 401);
  });

  test('legacy sessions are not affected by revocations', async () => {
    const other = await createUser(server, admin);
    assert.equal((await admin.post('/revocations', { id: other.id, type: 'IDENTITY' })).status, 201);
    assert.equal((await other.client.get('/current-identity')).status, 200);
  });
});

describe('userinfo, revoke and end_session', () => {
  test('userinfo answers for a valid access token, 401 with a challenge otherwise', async () => {
    const t = await login();
    const res = await server.request('GET', '/oidc/userinfo', {
      headers: bearerHeader(t.access_token),
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.sub, user.id);
    assert.equal(res.body.name, user.username);
    const none = await server.request('GET', '/oidc/userinfo');
    assert.equal(none.status, 401);
    assert.match(String(none.headers['www-authenticate']), /error="missing"/);
  });

  test('/oidc/revoke revokes a refresh token and an access token; anything else is ignored with 200', async () => {
    const t = await login();
    assert.equal(
      (await server.request('POST', '/oidc/revoke', form({ token: t.refresh_token!, client_id: 'native' }))).status,
      200,
    );
    const r = await refreshRequest(server, t.refresh_token!);
    assert.equal(r.body.error, 'invalid_grant');
    assert.equal(
      (await server.request('POST', '/oidc/revoke', form({ token: t.access_token, client_id: 'native' }))).status,
      200,
    );
    assert.equal((await bearer(t.access_token).get('/current-identity')).status, 401);
    assert.equal(
      (await server.request('POST', '/oidc/revoke', form({ token: 'garbage', client_id: 'native' }))).status,
      200,
    );
  });

  test('/oidc/end_session ends the hinted session and sends the client to an allowed logout URI', async () => {
    const t = await login();
    const q = new URLSearchParams({
      id_token_hint: t.id_token,
      post_logout_redirect_uri: 'http://localhost:8080/auth/logout',
      state: 'bye',
    });
    const res = await server.request('GET', `/oidc/end_session?${q}`);
    assert.equal(res.status, 302);
    assert.equal(res.headers.location, 'http://localhost:8080/auth/logout?state=bye');
    assert.equal((await bearer(t.access_token).get('/current-identity')).status, 401);
    assert.equal((await admin.get(`/api-sessions/${claimsOf(t.access_token).z_asid}`)).status, 404);

    const other = await login();
    const elsewhere = await server.request(
      'GET',
      `/oidc/end_session?${new URLSearchParams({ id_token_hint: other.id_token, post_logout_redirect_uri: 'https://evil.example/' })}`,
    );
    assert.equal(elsewhere.status, 302);
    assert.equal(elsewhere.headers.location, `${server.url}/oidc/logged-out`);
  });
});

describe('TOTP tokens', () => {
  const totp = (secret: string) => totpCode(secret, server.clock);

  test('a legacy session is 400 INVALID_BACKING_TOKEN_TYPE; no enrollment is 409 MFA_NOT_ENROLLED', async () => {
    const c = server.client('client');
    await c.login(user.username, user.password);
    const res = await c.post('/current-api-session/totp-token', { code: '123456' });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'INVALID_BACKING_TOKEN_TYPE');
    const t = await login();
    const none = await bearer(t.access_token).post('/current-api-session/totp-token', { code: '123456' });
    assert.equal(none.status, 409);
    assert.equal(none.body.error.code, 'MFA_NOT_ENROLLED');
  });

  test('a current code earns a TOTP token of the session; a wrong or replayed code is 400', async () => {
    const other = await createUser(server, admin);
    const t = await oidcLogin(server, other.username, other.password);
    const b = bearer(t.access_token);
    const { secret } = await enrollTotp(b, server.clock);
    server.clock.advance(STEP_MS);

    const code = await totp(secret);
    const res = await b.post('/current-api-session/totp-token', { code });
    assert.equal(res.status, 200, res.text);
    const claims = claimsOf(res.body.data.token);
    assert.equal(claims.z_t, 't');
    assert.equal(claims.sub, other.id);
    assert.equal(claims.z_asid, claimsOf(t.access_token).z_asid);
    assert.equal(claims.exp, undefined);
    assert.equal(typeof res.body.data.issuedAt, 'string');

    const replay = await b.post('/current-api-session/totp-token', { code });
    assert.equal(replay.status, 400);
    assert.equal(replay.body.error.code, 'MFA_INVALID_TOKEN');
    assert.equal((await b.post('/current-api-session/totp-token', { code: '000000' })).status, 400);
    assert.equal((await b.post('/current-api-session/totp-token', {})).status, 400);
  });
});
