/**
 * The OIDC provider at /oidc (issue 23, docs/reference-notes.md §14): discovery and keys, authorize with PKCE, the password login
 * (JSON and form), the callback, the token endpoint's code and refresh grants with rotation, the tokens' claims
 * and signatures, and each endpoint's refusals in its own shape. The clock is frozen, so expiries happen when a
 * test moves it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { createUser, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import {
  authorize,
  callback,
  claimsOf,
  exchangeCode,
  exchangeRequest,
  form,
  headerOf,
  locationQuery,
  oidcLogin,
  passwordLogin,
  pkce,
  REDIRECT_URI,
  refreshRequest,
  startLogin,
  tokenRequest,
  RELAXED_FAILURE_LIMITS,
} from '../harness/oidc.js';

const YAML = RELAXED_FAILURE_LIMITS;

let server: TestServer;
let admin: ApiClient;
let user: { id: string; username: string; password: string };
let issuer: string;

before(async () => {
  server = await startTestServer({ yaml: YAML, clock: 'frozen' });
  admin = await server.admin();
  user = await createUser(server, admin);
  issuer = `${server.url}/oidc`;
});
after(async () => server.close());

describe('discovery and keys', () => {
  test('the discovery document names the endpoints under the issuer of the request', async () => {
    const res = await server.request('GET', '/oidc/.well-known/openid-configuration');
    assert.equal(res.status, 200);
    assert.equal(res.body.issuer, issuer);
    assert.equal(res.body.token_endpoint, `${issuer}/oauth/token`);
    assert.equal(res.body.authorization_endpoint, `${issuer}/authorize`);
    assert.equal(res.body.jwks_uri, `${issuer}/keys`);
    assert.deepEqual(res.body.code_challenge_methods_supported, ['S256']);
    assert.equal(res.body.openziti_endpoints.password, `${issuer}/login/password`);
    assert.equal(res.body.request_uri_parameter_supported, false);
  });

  test('introspection and the device grant are not served: 404', async () => {
    assert.equal((await server.request('POST', '/oidc/oauth/introspect', form({ token: 'x' }))).status, 404);
    assert.equal(
      (await server.request('POST', '/oidc/device_authorization', form({ client_id: 'native' }))).status,
      404,
    );
  });

  test('the health endpoints answer 200', async () => {
    assert.equal((await server.request('GET', '/oidc/healthz')).status, 200);
    assert.equal((await server.request('GET', '/oidc/ready')).status, 200);
  });

  test('a Host that names no address of the controller is not served', async () => {
    const res = await server.request('GET', '/oidc/.well-known/openid-configuration', {
      headers: { host: 'evil.example:443' },
    });
    assert.equal(res.status, 404);
  });

  test('the JWKS holds the server key, its kid the SHA-1 of the server certificate', async () => {
    const res = await server.request('GET', '/oidc/keys');
    assert.equal(res.status, 200);
    assert.equal(res.body.keys.length, 1);
    const [key] = res.body.keys;
    const fingerprint = new X509Certificate(server.daemon.pki.serverCertPem).fingerprint
      .replace(/:/g, '')
      .toLowerCase();
    assert.equal(key.kid, fingerprint);
    assert.equal(key.use, 'sig');
    assert.match(key.alg, /^(RS256|ES256|ES384|ES512)$/);
    assert.equal(key.d, undefined, 'no private part');
  });
});

describe('the code flow with PKCE', () => {
  test('authorize, login page, password login, callback and code exchange give signed tokens', async () => {
    const p = pkce();
    const auth = await authorize(server, p, { nonce: 'n-1', state: 'st-42' });
    assert.equal(auth.status, 302);
    const location = String(auth.headers.location);
    assert.match(location, /^\/oidc\/login\/username\?authRequestID=/);
    const id = locationQuery(auth).get('authRequestID')!;

    const page = await server.request('GET', location, { headers: { accept: 'text/html' } });
    assert.equal(page.status, 200);
    assert.equal(page.headers['auth-request-id'], id);

    const login = await passwordLogin(server, id, user.username, user.password);
    assert.equal(login.status, 302, login.text);
    assert.equal(login.headers.location, `${issuer}/authorize/callback?id=${id}`);

    const { res: cb, code } = await callback(server, id);
    assert.equal(cb.status, 302);
    assert.ok(String(cb.headers.location).startsWith(`${REDIRECT_URI}?`));
    assert.equal(locationQuery(cb).get('state'), 'st-42');
    assert.ok(code);

    // The callback again: a new code, with which the exchange works.
    const tok = await exchangeCode(server, id, p);
    assert.equal(tok.status, 200, tok.text);
    assert.equal(tok.body.token_type, 'Bearer');
    assert.equal(tok.body.expires_in, 1800);
    assert.equal(tok.body.scope, 'openid offline_access');
    assert.equal(tok.headers['cache-control'], 'no-store');

    const jwks = createLocalJWKSet((await server.request('GET', '/oidc/keys')).body);
    const { payload: access } = await jwtVerify(tok.body.access_token, jwks, { currentDate: server.clock.now() });
    assert.equal(access.iss, issuer);
    assert.equal(access.sub, user.id);
    assert.deepEqual(access.aud, ['native']);
    assert.deepEqual(access.amr, ['password']);
    assert.equal(access.z_t, 'a');
    assert.equal(access.client_id, 'native');
    assert.deepEqual(access.scopes, ['openid', 'offline_access']);
    assert.equal(typeof access.jti, 'string');
    assert.equal(typeof access.auth_time, 'number');
    assert.equal(access.exp! - access.iat!, 1800);
    assert.equal(access.z_ia, undefined, 'not an admin');
    assert.match(String(access.z_asid), /^[0-9a-f-]{36}$/);
    assert.equal(headerOf(tok.body.access_token).kid, (await server.request('GET', '/oidc/keys')).body.keys[0].kid);

    const { payload: refresh } = await jwtVerify(tok.body.refresh_token, jwks, { currentDate: server.clock.now() });
    assert.equal(refresh.z_t, 'r');
    assert.equal(refresh.z_asid, access.z_asid);
    assert.equal(refresh.exp! - refresh.iat!, 24 * 3600);
    assert.notEqual(refresh.jti, access.jti);

    const { payload: idToken } = await jwtVerify(tok.body.id_token, jwks, { currentDate: server.clock.now() });
    assert.equal(idToken.nonce, 'n-1');
    assert.equal(idToken.sub, user.id);
    assert.equal(idToken.name, user.username);
    assert.equal(typeof idToken.at_hash, 'string');

    // The login is an API session like any other, for admins to see.
    const detail = await admin.get(`/api-sessions/${access.z_asid}`);
    assert.equal(detail.status, 200);
    assert.equal(detail.body.data.identityId, user.id);
    // Its legacy token (shown to admins) is not a way into an OIDC session.
    const legacy = await server.client('client').withToken(detail.body.data.token).get('/current-identity');
    assert.equal(legacy.status, 401);
  });

  test('the console’s way works too: form bodies and the openziti client', async () => {
    const p = pkce();
    const consoleClient = { clientId: 'openziti', redirectUri: 'https://localhost:1234/auth/callback' };
    const id = await startLogin(server, p, consoleClient);
    const login = await server.request(
      'POST',
      `/oidc/login/username?authRequestID=${id}`,
      form({ username: user.username, password: user.password }),
    );
    assert.equal(login.status, 302, login.text);
    const tok = await exchangeCode(server, id, p, consoleClient);
    assert.equal(tok.status, 200, tok.text);
    assert.deepEqual(claimsOf(tok.body.access_token).aud, ['openziti']);
  });

  test('without offline_access there is no refresh token', async () => {
    const tokens = await oidcLogin(server, user.username, user.password, { scope: 'openid' });
    assert.equal(tokens.refresh_token, undefined);
    assert.ok(tokens.access_token);
  });

  test('the method parameter chooses the login page', async () => {
    for (const [method, page] of [
      ['password', 'username'],
      ['cert', 'cert'],
      ['ext-jwt', 'ext-jwt'],
    ]) {
      const res = await authorize(server, pkce(), { method });
      assert.equal(res.status, 302);
      assert.match(String(res.headers.location), new RegExp(`^/oidc/login/${page}\\?authRequestID=`));
    }
  });
});

describe('authorize refusals', () => {
  test('no client, an unknown client or a redirect URI not allowed: 400 in plain text', async () => {
    for (const o of [
      { clientId: 'nope' },
      { redirectUri: 'https://evil.example/auth/callback' },
      { redirectUri: 'http://localhost:8080/elsewhere' },
    ]) {
      const res = await authorize(server, pkce(), o);
      assert.equal(res.status, 400, JSON.stringify(o));
      assert.match(String(res.headers['content-type']), /^text\/plain/);
    }
  });

  test('a loopback redirect URI passes whatever its port', async () => {
    const res = await authorize(server, pkce(), { redirectUri: 'http://127.0.0.1:49152/auth/callback' });
    assert.equal(res.status, 302);
  });

  test('the controller settings add redirect and post-logout URIs: the global record and this controller’s', async () => {
    const consoleUri = 'https://console.example.test/auth/callback';
    const ctrlUri = 'https://ctrl.example.test/auth/callback';
    const bye = 'https://console.example.test/auth/logout';
    for (const uri of [consoleUri, ctrlUri])
      assert.equal((await authorize(server, pkce(), { redirectUri: uri })).status, 400);
    const global = await admin.post('/controller-settings', {
      controllerId: 'global',
      oidc: { redirectUris: [consoleUri], postLogoutUris: [bye] },
    });
    assert.equal(global.status, 201, global.text);
    const own = await admin.post('/controller-settings', {
      controllerId: server.daemon.controllerId,
      oidc: { redirectUris: [ctrlUri] },
    });
    assert.equal(own.status, 201, own.text);
    try {
      for (const uri of [consoleUri, ctrlUri]) {
        const res = await authorize(server, pkce(), { redirectUri: uri });
        assert.equal(res.status, 302, `${uri}: ${res.text}`);
      }
      const t = await oidcLogin(server, user.username, user.password, { redirectUri: consoleUri });
      const q = new URLSearchParams({ id_token_hint: t.id_token, post_logout_redirect_uri: bye, state: 's' });
      const out = await server.request('GET', `/oidc/end_session?${q}`);
      assert.equal(out.status, 302);
      assert.equal(out.headers.location, `${bye}?state=s`);
      // Another controller's record adds nothing here.
      const other = await admin.post('/controller-settings', {
        controllerId: 'another-controller',
        oidc: { redirectUris: ['https://other.example.test/auth/callback'] },
      });
      assert.equal(other.status, 201, other.text);
      const res = await authorize(server, pkce(), { redirectUri: 'https://other.example.test/auth/callback' });
      assert.equal(res.status, 400);
      assert.equal((await admin.delete(`/controller-settings/${other.body.data.id}/effective`)).status, 200);
    } finally {
      for (const id of [global.body.data.id, own.body.data.id])
        assert.equal((await admin.delete(`/controller-settings/${id}/effective`)).status, 200);
    }
    assert.equal((await authorize(server, pkce(), { redirectUri: consoleUri })).status, 400, 'removed: refused again');
  });

  test('PKCE is required, with S256: other errors go back to the redirect URI', async () => {
    const noChallenge = await server.request(
      'GET',
      `/oidc/authorize?client_id=native&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&response_type=code&scope=openid&state=s`,
    );
    assert.equal(noChallenge.status, 302);
    assert.ok(String(noChallenge.headers.location).startsWith(REDIRECT_URI));
    assert.equal(locationQuery(noChallenge).get('error'), 'invalid_request');
    assert.equal(locationQuery(noChallenge).get('state'), 's');

    const plain = await authorize(server, pkce(), { extra: { code_challenge_method: 'plain' } });
    assert.equal(locationQuery(plain).get('error'), 'invalid_request');
    const noOpenid = await authorize(server, pkce(), { scope: 'profile' });
    assert.equal(locationQuery(noOpenid).get('error'), 'invalid_scope');
    const token = await authorize(server, pkce(), { extra: { response_type: 'token' } });
    assert.equal(locationQuery(token).get('error'), 'unsupported_response_type');
  });
});

describe('login refusals', () => {
  test('a wrong password is 401 INVALID_AUTH as a bare error object', async () => {
    const id = await startLogin(server, pkce());
    const res = await passwordLogin(server, id, user.username, 'wrong-Passw0rd!');
    assert.equal(res.status, 401);
    assert.equal(res.body.code, 'INVALID_AUTH');
    assert.equal(typeof res.body.message, 'string');
    assert.equal(res.body.error, undefined, 'not the API envelope');
    // The request stays usable: the right password still logs in.
    assert.equal((await passwordLogin(server, id, user.username, user.password)).status, 302);
  });

  test('an unknown auth request is 401 UNAUTHORIZED', async () => {
    const res = await passwordLogin(server, '00000000-0000-4000-8000-000000000000', user.username, user.password);
    assert.equal(res.status, 401);
    assert.equal(res.body.code, 'UNAUTHORIZED');
  });

  test('a body that is neither a form nor JSON is 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const id = await startLogin(server, pkce());
    const res = await server.request('POST', `/oidc/login/password?authRequestID=${id}`, {
      raw: 'username=x',
      contentType: 'text/plain',
    });
    assert.equal(res.status, 415);
    assert.equal(res.body.code, 'UNSUPPORTED_MEDIA_TYPE');
  });

  test('the callback before the login is done sends interaction_required to the client', async () => {
    const id = await startLogin(server, pkce());
    const { res, code } = await callback(server, id);
    assert.equal(res.status, 302);
    assert.equal(code, undefined);
    assert.equal(locationQuery(res).get('error'), 'interaction_required');
  });

  test('an auth request lasts 10 minutes', async () => {
    const id = await startLogin(server, pkce());
    server.clock.advance(10 * 60_000 + 1000);
    const res = await passwordLogin(server, id, user.username, user.password);
    assert.equal(res.status, 401);
    assert.equal(res.body.code, 'UNAUTHORIZED');
  });
});

/** A completed login's code, ready for exchange. */
async function codeFor(p = pkce(), o: { redirectUri?: string; clientId?: string } = {}) {
  const id = await startLogin(server, p, o);
  await passwordLogin(server, id, user.username, user.password);
  const { code } = await callback(server, id);
  return { p, code: code! };
}

const exchange = (code: string, verifier: string, extra: Record<string, string> = {}) =>
  tokenRequest(server, {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT_URI,
    client_id: 'native',
    ...extra,
  });

describe('code exchange refusals', () => {
  test('a wrong verifier is invalid_grant, and the code is used up', async () => {
    const { p, code } = await codeFor();
    const wrong = await exchange(code, pkce().verifier);
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.error, 'invalid_grant');
    assert.equal(typeof wrong.body.error_description, 'string');
    const again = await exchange(code, p.verifier);
    assert.equal(again.body.error, 'invalid_grant');
  });

  test('a code works once', async () => {
    const { p, code } = await codeFor();
    assert.equal((await exchange(code, p.verifier)).status, 200);
    const reused = await exchange(code, p.verifier);
    assert.equal(reused.status, 400);
    assert.equal(reused.body.error, 'invalid_grant');
  });

  test('another redirect URI or client than at authorize is invalid_grant', async () => {
    const a = await codeFor();
    assert.equal(
      (await exchange(a.code, a.p.verifier, { redirect_uri: 'http://localhost:9999/auth/callback' })).body.error,
      'invalid_grant',
    );
    const b = await codeFor();
    assert.equal((await exchange(b.code, b.p.verifier, { client_id: 'openziti' })).body.error, 'invalid_grant');
  });

  test('missing fields, unknown grants and clients have their own codes', async () => {
    const { code } = await codeFor();
    assert.equal((await exchange(code, '')).body.error, 'invalid_request');
    assert.equal(
      (await tokenRequest(server, { grant_type: 'password', client_id: 'native' })).body.error,
      'unsupported_grant_type',
    );
    const unknown = await tokenRequest(server, { grant_type: 'authorization_code', client_id: 'other' });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error, 'invalid_client');
  });

  test('a code expires with its request', async () => {
    const { p, code } = await codeFor();
    server.clock.advance(10 * 60_000 + 1000);
    assert.equal((await exchange(code, p.verifier)).body.error, 'invalid_grant');
  });

  test('parameters in the query with an empty JSON body are read (BrowZer)', async () => {
    const { p, code } = await codeFor();
    const q = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      code_verifier: p.verifier,
      redirect_uri: REDIRECT_URI,
      client_id: 'native',
    });
    const res = await server.request('POST', `/oidc/oauth/token?${q}`, { body: {} });
    assert.equal(res.status, 200, res.text);
  });
});

const refresh = (token: string, clientId = 'native') =>
  refreshRequest(server, token, undefined, { client_id: clientId });

describe('refresh with rotation', () => {
  test('a refresh gives new tokens of the same API session; the old refresh token is refused afterwards', async () => {
    const first = await oidcLogin(server, user.username, user.password);
    server.clock.advance(5000);
    const res = await refresh(first.refresh_token!);
    assert.equal(res.status, 200, res.text);
    const a0 = claimsOf(first.access_token);
    const a1 = claimsOf(res.body.access_token);
    assert.equal(a1.z_asid, a0.z_asid);
    assert.equal(a1.auth_time, a0.auth_time);
    assert.notEqual(a1.jti, a0.jti);
    assert.notEqual(res.body.refresh_token, first.refresh_token);
    assert.equal(claimsOf(res.body.refresh_token).exp - claimsOf(res.body.refresh_token).iat, 24 * 3600);

    const old = await refresh(first.refresh_token!);
    assert.equal(old.status, 400);
    assert.equal(old.body.error, 'invalid_grant');
    // The rotation is listed as a JTI revocation of the replaced token.
    assert.equal((await refresh(res.body.refresh_token)).status, 200);
  });

  test('tampered, expired, foreign-client and access tokens are refused', async () => {
    const t = await oidcLogin(server, user.username, user.password);
    const [h, p, s] = t.refresh_token!.split('.');
    const payload = claimsOf(t.refresh_token!);
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...payload, sub: 'someone-else' })).toString('base64url')}.${s}`;
    assert.equal((await refresh(forged)).body.error, 'invalid_grant');
    assert.equal((await refresh(`${h}.${p}.${s!.slice(0, -4)}AAAA`)).body.error, 'invalid_grant');
    assert.equal((await refresh(t.access_token)).body.error, 'invalid_grant');
    assert.equal((await refresh(t.refresh_token!, 'openziti')).body.error, 'invalid_grant');
    server.clock.advance(24 * 3600_000 + 1000);
    const expired = await refresh(t.refresh_token!);
    assert.equal(expired.body.error, 'invalid_grant');
    assert.match(expired.body.error_description, /expired/);
  });

  test('a refresh is refused once the API session is deleted or the identity disabled', async () => {
    // Earlier tests moved the clock past the admin session's idle timeout.
    admin = await server.admin();
    const t = await oidcLogin(server, user.username, user.password);
    assert.equal((await admin.delete(`/api-sessions/${claimsOf(t.access_token).z_asid}`)).status, 200);
    assert.equal((await refresh(t.refresh_token!)).body.error, 'invalid_grant');

    const other = await createUser(server, admin);
    const u = await oidcLogin(server, other.username, other.password);
    assert.equal((await admin.post(`/identities/${other.id}/disable`, { durationMinutes: 0 })).status, 200);
    assert.equal((await refresh(u.refresh_token!)).body.error, 'invalid_grant');
  });
});

describe('lifetimes', () => {
  test('token lifetimes come from edge.oidc', async () => {
    const s = await startTestServer({
      clock: 'frozen',
      yaml: 'edge:\n  oidc:\n    accessTokenDuration: 5m\n    refreshTokenDuration: 1h\n    idTokenDuration: 2m\n',
    });
    try {
      const a = await s.admin();
      const u = await createUser(s, a);
      const t = await oidcLogin(s, u.username, u.password);
      assert.equal(t.expires_in, 300);
      const r = claimsOf(t.refresh_token!);
      assert.equal(r.exp - r.iat, 3600);
      const i = claimsOf(t.id_token);
      assert.equal(i.exp - i.iat, 120);
    } finally {
      await s.close();
    }
  });

  test('a refresh lifetime shorter than the access lifetime plus a minute is refused at start', async () => {
    await assert.rejects(
      startTestServer({ yaml: 'edge:\n  oidc:\n    accessTokenDuration: 30m\n    refreshTokenDuration: 30m\n' }),
      /refreshTokenDuration/,
    );
  });
});

const TT = (t: string) => `urn:ietf:params:oauth:token-type:${t}`;

describe('token exchange', () => {
  const exchangeToken = (subject: string, subjectType: string, requested?: string) =>
    exchangeRequest(server, subject, undefined, {
      subject_token_type: TT(subjectType),
      ...(requested && { requested_token_type: TT(requested) }),
    });

  test('a refresh token becomes a new refresh and access token of the same session, and stays usable', async () => {
    admin = await server.admin();
    const t = await oidcLogin(server, user.username, user.password);
    const res = await exchangeToken(t.refresh_token!, 'refresh_token');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.issued_token_type, TT('refresh_token'));
    assert.equal(res.body.token_type, 'Bearer');
    assert.equal(claimsOf(res.body.refresh_token).z_t, 'r');
    assert.equal(claimsOf(res.body.access_token).z_t, 'a');
    assert.equal(claimsOf(res.body.access_token).z_asid, claimsOf(t.access_token).z_asid);
    // The subject is not revoked by an exchange.
    assert.equal((await refresh(t.refresh_token!)).status, 200);
  });

  test('an access token becomes an access token; an ID token can be asked for', async () => {
    const t = await oidcLogin(server, user.username, user.password);
    const access = await exchangeToken(t.access_token, 'access_token', 'access_token');
    assert.equal(access.status, 200, access.text);
    assert.equal(access.body.issued_token_type, TT('access_token'));
    assert.equal(access.body.refresh_token, undefined);
    const id = await exchangeToken(t.refresh_token!, 'refresh_token', 'id_token');
    assert.equal(id.status, 200, id.text);
    assert.equal(id.body.token_type, 'N_A');
    assert.equal(claimsOf(id.body.access_token).z_t, undefined);
    assert.equal(claimsOf(id.body.access_token).sub, user.id);
  });

  test('an ID token subject, a mismatched type or a revoked subject is refused', async () => {
    const t = await oidcLogin(server, user.username, user.password);
    assert.equal((await exchangeToken(t.id_token, 'id_token')).body.error, 'invalid_request');
    assert.equal((await exchangeToken(t.access_token, 'refresh_token')).body.error, 'invalid_grant');
    assert.equal(
      (await admin.post('/revocations', { id: claimsOf(t.access_token).z_asid, type: 'API_SESSION' })).status,
      201,
    );
    assert.equal((await exchangeToken(t.refresh_token!, 'refresh_token')).body.error, 'invalid_grant');
  });
});
