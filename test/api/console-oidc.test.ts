/**
 * The reference's web console (ZAC 4.5.2) logging in an admin with TOTP through OIDC, replayed from what it sent
 * to a running edgectl in headless Chromium (test/fixtures/console/oidc-requests.json): each request of its login's
 * redirect chains with its headers and form fields, every page's requests and its forms with the access token as
 * `Authorization: Bearer`, the refresh its timer makes, a refused access token followed by the refresh its 401
 * handler makes, and its logout. The console is served on the controller's origin, so `{origin}` is the server's
 * own URL. Frozen clock; TOTP codes are computed from the enrollment's secret.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createUser, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { claimsOf, enrollTotp, pkce, TOTP_STEP_MS, totpCode } from '../harness/oidc.js';
import type { HttpResponse } from '../harness/http.js';

type Vars = Record<string, string>;
interface Step {
  step: string;
  method: string;
  path: string;
  query?: Vars;
  headers: Vars;
  form?: Vars;
  status: number;
  location?: string;
  body?: unknown;
}
interface Recorded {
  method: string;
  path: string;
  status: number;
}
interface Form {
  collection: string;
  create: { body: unknown; status: number };
  edit: { method: string; body: unknown; status: number };
  delete: { status: number };
}
const FIXTURE = JSON.parse(
  readFileSync(new URL('../fixtures/console/oidc-requests.json', import.meta.url), 'utf8'),
) as {
  login: Step[];
  pages: Record<string, Recorded[]>;
  forms: Form[];
  refresh: Step;
  logout: Step;
  refusals: Step[];
  actions: { action: string; method: string; path: string; status: number }[];
};

let server: TestServer;
let admin: ApiClient;
let user: { id: string; username: string; password: string };
let secret: string;

/** A TOTP code of a step no earlier code used (the replay guard lets each step pass once). */
function nextTotp(): Promise<string> {
  server.clock.advance(TOTP_STEP_MS);
  return totpCode(secret, server.clock);
}

before(async () => {
  server = await startTestServer({ clock: 'frozen' });
  admin = await server.admin();
  const u = await createUser(server, admin, { identity: { isAdmin: true } });
  user = u;
  ({ secret } = await enrollTotp(u.client, server.clock));
});
after(() => server.close());

const fill = (text: string, vars: Vars): string =>
  text.replace(/\{(\w+)\}/g, (m, k: string) => (k in vars ? vars[k]! : m));
const fillAll = (o: unknown, vars: Vars): unknown => JSON.parse(fill(JSON.stringify(o), vars));

/** One recorded step sent as the console sent it: its headers, and its form fields encoded as its fetch does. */
function send(step: Pick<Step, 'method' | 'path' | 'query' | 'headers' | 'form'>, vars: Vars): Promise<HttpResponse> {
  const query = step.query ? `?${new URLSearchParams(fillAll(step.query, vars) as Vars)}` : '';
  const headers = { ...step.headers };
  const contentType = headers['content-type'];
  delete headers['content-type'];
  return server.request(step.method, fill(step.path, vars) + query, {
    headers,
    ...(step.form && {
      raw: new URLSearchParams(fillAll(step.form, vars) as Vars).toString(),
      contentType,
    }),
  });
}

const bearer = (token: string, method: string, path: string, body?: unknown) =>
  server.request(method, path, {
    headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
    ...(body !== undefined && { body }),
  });

/** The values of one login as the console makes them. */
function loginVars(): Vars {
  const p = pkce();
  return {
    origin: server.url,
    state: 'console-state-' + Math.random().toString(36).slice(2),
    nonce: 'console-nonce',
    codeChallenge: p.challenge,
    codeVerifier: p.verifier,
    username: user.username,
    password: user.password,
  };
}

const loginStep = (name: string): Step => FIXTURE.login.find((s) => s.step === name)!;

/** The authorize request, as the console starts every login attempt; sets `authRequestId`. */
async function authorize(vars: Vars): Promise<void> {
  const res = await send(loginStep('authorize'), vars);
  assert.equal(res.status, 302, res.text);
  vars.authRequestId = new URL(String(res.headers.location), server.url).searchParams.get('authRequestID')!;
}

/** The console's login, step by step as recorded, asserting what it reads from each answer; answers the tokens. */
async function consoleLogin(): Promise<{ access: string; refresh: string; body: any }> {
  const vars = loginVars();
  let body: any;
  for (const step of FIXTURE.login) {
    if (step.step === 'totp') vars.totp = await nextTotp();
    const res = await send(step, vars);
    assert.equal(res.status, step.status, `${step.step}: ${res.text}`);
    const location = res.headers.location === undefined ? undefined : String(res.headers.location);
    if (step.step === 'authorize') {
      // The console reads the request id from the URL its fetch ends at: a login page on the same origin.
      vars.authRequestId = new URL(location!, server.url).searchParams.get('authRequestID')!;
      assert.ok(vars.authRequestId);
    } else if (step.step === 'callback (the redirect followed)') {
      // It ends on the redirect URI, on the console's origin, and reads code and state from that URL.
      const url = new URL(location!);
      assert.equal(`${url.origin}${url.pathname}`, `${server.url}/auth/callback`);
      assert.equal(url.searchParams.get('state'), vars.state);
      vars.code = url.searchParams.get('code')!;
      assert.ok(vars.code);
    } else if (step.step === 'token') {
      body = res.body;
    }
    if (step.location && step.step !== 'callback (the redirect followed)')
      assert.equal(location, fill(step.location, vars));
    if (step.body !== undefined) assert.deepEqual(res.body, step.body);
  }
  return { access: body.access_token, refresh: body.refresh_token, body };
}

describe('the web console logs in an admin with TOTP through OIDC', () => {
  test('/version gives the console what it needs to choose OIDC', async () => {
    const v = (await server.request('GET', '/edge/management/v1/version')).body.data;
    assert.ok(v.capabilities.includes('OIDC_AUTH'));
    assert.equal(v.apiVersions['edge-oidc'].v1.path, '/oidc');
    assert.ok(v.apiVersions.edge.v1, 'the console refuses a controller without apiVersions.edge.v1');
  });

  test('authorize, password, TOTP, callback and the code exchange answer what the console reads', async () => {
    const { access, refresh, body } = await consoleLogin();
    for (const k of ['access_token', 'refresh_token', 'id_token']) assert.equal(typeof body[k], 'string', k);
    assert.equal(typeof body.expires_in, 'number');
    const claims = claimsOf(access);
    // The console schedules its refresh from the access token's exp and iat, and ends the session at the refresh
    // token's exp.
    assert.equal(claims.exp - claims.iat, body.expires_in);
    assert.equal(typeof claimsOf(refresh).exp, 'number');
    assert.deepEqual(claims.amr, ['password', 'totp']);
    assert.equal(claims.sub, user.id);
    assert.equal(claims.iss, `${server.url}/oidc`);
  });

  test('every page gets the recorded answers with the bearer token', async () => {
    const { access } = await consoleLogin();
    for (const [page, requests] of Object.entries(FIXTURE.pages)) {
      for (const { method, path, status } of requests) {
        const res = await bearer(access, method, path);
        assert.equal(res.status, status, `${page}: ${method} ${path}: ${res.text}`);
        if (status === 200 && Array.isArray(res.body.data) && !path.includes('/network-jwts'))
          assert.equal(typeof res.body.meta?.pagination?.totalCount, 'number', `${path}: totalCount`);
      }
    }
  });

  test('the forms create, edit and delete records with the bearer token', async () => {
    const { access } = await consoleLogin();
    for (const f of FIXTURE.forms) {
      const base = `/edge/management/v1${f.collection}`;
      const vars: Vars = { name: `console-oidc-${f.collection.slice(1)}-${Math.random().toString(36).slice(2, 8)}` };
      const created = await bearer(access, 'POST', base, fillAll(f.create.body, vars));
      assert.equal(created.status, f.create.status, `${f.collection}: ${created.text}`);
      vars.id = created.body.data.id;
      const edited = await bearer(access, f.edit.method, `${base}/${vars.id}`, fillAll(f.edit.body, vars));
      assert.equal(edited.status, f.edit.status, `${f.collection} edit: ${edited.text}`);
      assert.equal((await bearer(access, 'GET', `${base}/${vars.id}`)).body.data.name, `${vars.name}-e`);
      const deleted = await bearer(access, 'DELETE', `${base}/${vars.id}`);
      assert.equal(deleted.status, f.delete.status, `${f.collection} delete: ${deleted.text}`);
    }
  });

  test('the refresh timer: new tokens that work, and the refresh token it replaced is refused', async () => {
    const first = await consoleLogin();
    const res = await send(FIXTURE.refresh, { refreshToken: first.refresh });
    assert.equal(res.status, FIXTURE.refresh.status, res.text);
    assert.notEqual(res.body.access_token, first.access);
    assert.notEqual(res.body.refresh_token, first.refresh);
    assert.equal((await bearer(res.body.access_token, 'GET', '/edge/management/v1/current-identity')).status, 200);
    const again = await send(FIXTURE.refresh, { refreshToken: first.refresh });
    assert.equal(again.status, 400);
    assert.equal(again.body.error, 'invalid_grant');
    // The newest refresh token still works.
    assert.equal((await send(FIXTURE.refresh, { refreshToken: res.body.refresh_token })).status, 200);
  });

  test('a revoked access token is refused at once; the refresh the console then makes recovers the session', async () => {
    const t = await consoleLogin();
    assert.equal(
      (
        await server.request('POST', '/oidc/revoke', {
          raw: `token=${t.access}`,
          contentType: 'application/x-www-form-urlencoded',
        })
      ).status,
      200,
    );
    const refused = await bearer(t.access, 'GET', '/edge/management/v1/identities?limit=50&offset=0&sort=name%20asc');
    assert.equal(refused.status, 401);
    assert.match(String(refused.headers['www-authenticate']), /^Bearer .*error="invalid"/);
    const res = await send(FIXTURE.refresh, { refreshToken: t.refresh });
    assert.equal(res.status, 200, res.text);
    assert.equal((await bearer(res.body.access_token, 'GET', '/edge/management/v1/identities')).status, 200);
  });

  test('logout: the revocation the console posts ends its refresh token', async () => {
    const t = await consoleLogin();
    const res = await send(FIXTURE.logout, { refreshToken: t.refresh });
    assert.equal(res.status, FIXTURE.logout.status, res.text);
    const refreshed = await send(FIXTURE.refresh, { refreshToken: t.refresh });
    assert.equal(refreshed.status, 400);
    assert.equal(refreshed.body.error, 'invalid_grant');
  });

  test('the OIDC login is an API session the console lists, with MFA passed', async () => {
    const { access } = await consoleLogin();
    const asid = claimsOf(access).z_asid;
    const res = await bearer(access, 'GET', `/edge/management/v1/api-sessions/${asid}`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.data.identityId, user.id);
    assert.equal(res.body.data.isMfaComplete, true);
  });

  test('a wrong password and a wrong TOTP code answer what the login page shows; the right code then completes', async () => {
    const [badPassword, badTotp] = FIXTURE.refusals as [Step, Step];
    const vars: Vars = { ...loginVars(), wrongPassword: 'not-the-password' };
    await authorize(vars);
    const refused = await send(badPassword, vars);
    assert.equal(refused.status, badPassword.status, refused.text);
    assert.deepEqual(refused.body, badPassword.body);
    // The console's next attempt starts a new authorize.
    await authorize(vars);
    assert.equal((await send(loginStep('password'), vars)).status, 200);
    const wrong = await send(badTotp, vars);
    assert.equal(wrong.status, badTotp.status, wrong.text);
    assert.deepEqual(wrong.body, badTotp.body);
    vars.totp = await nextTotp();
    const done = await send(loginStep('totp'), vars);
    assert.equal(done.status, 302, done.text);
    assert.equal(String(done.headers.location), fill(loginStep('totp').location!, vars));
  });

  test('Reset MFA of another identity from the row menu, with the bearer token', async () => {
    const { access } = await consoleLogin();
    const other = await createUser(server, admin);
    await enrollTotp(other.client, server.clock);
    const action = FIXTURE.actions.find((a) => a.path.endsWith('/mfa'))!;
    const res = await bearer(access, action.method, fill(action.path, { identityId: other.id }));
    assert.equal(res.status, action.status, res.text);
    const identity = await bearer(access, 'GET', `/edge/management/v1/identities/${other.id}`);
    assert.equal(identity.body.data.isMfaEnabled, false);
  });

  test('deleting its own API session ends the console’s tokens at once: 401, then its refresh is refused', async () => {
    const t = await consoleLogin();
    const action = FIXTURE.actions.find((a) => a.path.includes('/api-sessions/'))!;
    const res = await bearer(t.access, action.method, fill(action.path, { apiSessionId: claimsOf(t.access).z_asid }));
    assert.equal(res.status, action.status, res.text);
    const next = await bearer(t.access, 'GET', '/edge/management/v1/api-sessions?limit=50&offset=0&sort=id%20asc');
    assert.equal(next.status, 401);
    const refreshed = await send(FIXTURE.refresh, { refreshToken: t.refresh });
    assert.equal(refreshed.status, 400);
    assert.equal(refreshed.body.error, 'invalid_grant');
  });
});
