/**
 * The TOTP step of an OIDC login (docs/reference-notes.md §14.4, §14.10): a login of an identity with MFA stops at
 * the TOTP query, a current code or an unused recovery code completes it (`amr` gains `totp`), wrong and replayed
 * codes are refused, the 5th wrong code ends the login, and `auth-queries` tells what is due. Frozen clock; codes
 * are computed from the enrollment's secret.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generate } from 'otplib';
import { createRecord, createUser, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import {
  callback,
  claimsOf,
  form,
  locationQuery,
  passwordLogin,
  pkce,
  REDIRECT_URI,
  startLogin,
  tokenRequest,
  RELAXED_FAILURE_LIMITS,
} from '../harness/oidc.js';

const YAML = RELAXED_FAILURE_LIMITS;
const STEP_MS = 30_000;

let server: TestServer;
let admin: ApiClient;
let user: { id: string; username: string; password: string; client: ApiClient };
let secret: string;
let recoveryCodes: string[];

const totp = (steps = 0) =>
  generate({ secret, epoch: Math.floor((server.clock.now().getTime() + steps * STEP_MS) / 1000) });

before(async () => {
  server = await startTestServer({ yaml: YAML, clock: 'frozen' });
  admin = await server.admin();
  user = await createUser(server, admin);
  assert.equal((await user.client.post('/current-identity/mfa')).status, 201);
  const d = (await user.client.get('/current-identity/mfa')).body.data;
  secret = new URL(d.provisioningUrl).searchParams.get('secret')!;
  recoveryCodes = d.recoveryCodes;
  assert.equal((await user.client.post('/current-identity/mfa/verify', { code: await totp() })).status, 200);
});
after(async () => server.close());

/** A login whose password step is done; answers the request id and the password step's answer. */
async function passwordDone() {
  const p = pkce();
  const id = await startLogin(server, p);
  const res = await passwordLogin(server, id, user.username, user.password);
  return { p, id, res };
}

const totpStep = (id: string, code: string) => server.request('POST', '/oidc/login/totp', { body: { id, code } });

describe('the TOTP step', () => {
  test('the password step of an MFA identity answers the TOTP query; a current code completes the login', async () => {
    server.clock.advance(STEP_MS);
    const { p, id, res } = await passwordDone();
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers['totp-required'], 'true');
    assert.deepEqual(res.body.authQueries, [
      {
        typeId: 'TOTP',
        provider: 'ziti',
        format: 'numeric',
        httpMethod: 'POST',
        httpUrl: './oidc/login/totp',
        minLength: 6,
        maxLength: 8,
        isTotpEnrolled: true,
      },
    ]);
    // Not yet: the callback says interaction_required.
    assert.equal(locationQuery((await callback(server, id)).res).get('error'), 'interaction_required');
    const pending = await server.request('GET', `/oidc/login/auth-queries?id=${id}`);
    assert.equal(pending.status, 200);
    assert.equal(pending.body.authQueries[0].typeId, 'TOTP');

    const wrong = await totpStep(id, '000000');
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.code, 'INVALID TOTP CODE');

    const ok = await totpStep(id, await totp());
    assert.equal(ok.status, 302, ok.text);
    assert.equal(ok.headers.location, `${server.url}/oidc/authorize/callback?id=${id}`);
    const { code } = await callback(server, id);
    const tok = await tokenRequest(server, {
      grant_type: 'authorization_code',
      code: code!,
      code_verifier: p.verifier,
      redirect_uri: REDIRECT_URI,
      client_id: 'native',
    });
    assert.equal(tok.status, 200, tok.text);
    assert.deepEqual(claimsOf(tok.body.access_token).amr, ['password', 'totp']);
    const session = await admin.get(`/api-sessions/${claimsOf(tok.body.access_token).z_asid}`);
    assert.equal(session.body.data.isMfaRequired, true);
    assert.equal(session.body.data.isMfaComplete, true);
    assert.deepEqual((await server.request('GET', `/oidc/login/auth-queries?id=${id}`)).status, 401);
  });

  test('the TOTP step is the session’s MFA pass: a bearer session create passes an MFA posture check', async () => {
    const make = (path: string, body: Record<string, unknown>) => createRecord(admin, path, body);
    admin = await server.admin();
    const n = Math.random().toString(36).slice(2, 8);
    const check = await make('/posture-checks', { name: `pc-mfa-${n}`, typeId: 'MFA' });
    const service = await make('/services', { name: `svc-${n}`, encryptionRequired: true });
    const router = await make('/edge-routers', { name: `er-${n}` });
    await make('/service-policies', {
      name: `sp-${n}`,
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: [`@${user.id}`],
      serviceRoles: [`@${service}`],
      postureCheckRoles: [`@${check}`],
    });
    await make('/edge-router-policies', {
      name: `erp-${n}`,
      semantic: 'AnyOf',
      identityRoles: [`@${user.id}`],
      edgeRouterRoles: [`@${router}`],
    });
    await make('/service-edge-router-policies', {
      name: `serp-${n}`,
      semantic: 'AnyOf',
      serviceRoles: [`@${service}`],
      edgeRouterRoles: [`@${router}`],
    });
    server.clock.advance(STEP_MS);
    const { p, id } = await passwordDone();
    assert.equal((await totpStep(id, await totp())).status, 302);
    const { code } = await callback(server, id);
    const tok = await tokenRequest(server, {
      grant_type: 'authorization_code',
      code: code!,
      code_verifier: p.verifier,
      redirect_uri: REDIRECT_URI,
      client_id: 'native',
    });
    const dial = await server.request('POST', '/edge/client/v1/sessions', {
      body: { serviceId: service, type: 'Dial' },
      headers: { authorization: `Bearer ${tok.body.access_token}` },
    });
    assert.equal(dial.status, 201, dial.text);
  });

  test('a code passes once: the same code in another login is refused (replay guard)', async () => {
    server.clock.advance(STEP_MS);
    const code = await totp();
    const a = await passwordDone();
    assert.equal((await totpStep(a.id, code)).status, 302);
    const b = await passwordDone();
    const replay = await totpStep(b.id, code);
    assert.equal(replay.status, 400);
    assert.equal(replay.body.code, 'INVALID TOTP CODE');
  });

  test('an unused recovery code passes, once; a form body works too', async () => {
    const a = await passwordDone();
    const res = await server.request('POST', '/oidc/login/totp', form({ id: a.id, code: recoveryCodes[0]! }));
    assert.equal(res.status, 302, res.text);
    const b = await passwordDone();
    assert.equal((await totpStep(b.id, recoveryCodes[0]!)).status, 400);
  });

  test('the 5th wrong code of a login ends it', async () => {
    const { id } = await passwordDone();
    for (let i = 0; i < 5; i++) assert.equal((await totpStep(id, '000000')).status, 400);
    server.clock.advance(STEP_MS);
    const after5 = await totpStep(id, await totp());
    assert.equal(after5.status, 401);
    assert.equal(after5.body.code, 'UNAUTHORIZED');
  });

  test('a code too long, or a step before the password, is refused', async () => {
    const { id } = await passwordDone();
    assert.equal((await totpStep(id, '12345678901234')).status, 400);
    const fresh = await startLogin(server, pkce());
    assert.equal((await totpStep(fresh, '123456')).status, 401);
    assert.equal((await server.request('GET', '/oidc/login/auth-queries?id=nope')).status, 401);
  });

  test('a policy requiring TOTP of an identity without MFA asks for enrollment', async () => {
    const other = await createUser(server, admin, { identity: { authPolicyId: await totpPolicy() } });
    const id = await startLogin(server, pkce());
    const res = await passwordLogin(server, id, other.username, other.password);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.authQueries[0].isTotpEnrolled, false);
    assert.equal((await totpStep(id, '123456')).status, 400);
  });
});

/** An auth policy that requires TOTP. */
async function totpPolicy(): Promise<string> {
  const policy = await admin.post('/auth-policies', {
    name: `totp-${Math.random().toString(36).slice(2, 10)}`,
    primary: {
      cert: { allowed: false, allowExpiredCerts: false },
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
    secondary: { requireTotp: true },
  });
  if (policy.status !== 201) throw new Error(policy.text);
  return policy.body.data.id;
}

describe('TOTP enrollment inside a login', () => {
  test('enroll, verify, and the login completes with totp in amr', async () => {
    admin = await server.admin();
    const other = await createUser(server, admin, { identity: { authPolicyId: await totpPolicy() } });
    const p = pkce();
    const id = await startLogin(server, p);
    assert.equal((await passwordLogin(server, id, other.username, other.password)).status, 200);

    const enrolled = await server.request('POST', '/oidc/login/totp/enroll', { body: { id } });
    assert.equal(enrolled.status, 201, enrolled.text);
    assert.equal(enrolled.body.isVerified, false);
    assert.equal(enrolled.body.recoveryCodes.length, 20);
    const own = new URL(enrolled.body.provisioningUrl).searchParams.get('secret')!;
    assert.equal((await server.request('POST', '/oidc/login/totp/enroll', { body: { id } })).body.code, 'MFA_EXISTS');

    const code = (steps = 0) =>
      generate({ secret: own, epoch: Math.floor((server.clock.now().getTime() + steps * STEP_MS) / 1000) });
    const wrong = await server.request('POST', '/oidc/login/totp/enroll/verify', { body: { id, code: '000000' } });
    assert.equal(wrong.body.code, 'MFA_INVALID_TOKEN');
    const ok = await server.request('POST', '/oidc/login/totp/enroll/verify', { body: { id, code: await code() } });
    assert.equal(ok.status, 302, ok.text);
    const { code: authCode } = await callback(server, id);
    const tok = await tokenRequest(server, {
      grant_type: 'authorization_code',
      code: authCode!,
      code_verifier: p.verifier,
      redirect_uri: REDIRECT_URI,
      client_id: 'native',
    });
    assert.equal(tok.status, 200, tok.text);
    const claims = claimsOf(tok.body.access_token);
    assert.deepEqual(claims.amr, ['password', 'totp']);
    const session = await admin.get(`/api-sessions/${claims.z_asid}`);
    assert.equal(session.status, 200);
    assert.equal(session.body.data.isMfaComplete, true);
    const me = await server.request('GET', '/edge/client/v1/current-identity', {
      headers: { authorization: `Bearer ${tok.body.access_token}` },
    });
    assert.equal(me.status, 200);
    assert.equal(me.body.data.isMfaEnabled, true);
  });

  test('a pending enrollment can be removed within the login; none left is 404', async () => {
    const other = await createUser(server, admin, { identity: { authPolicyId: await totpPolicy() } });
    const id = await startLogin(server, pkce());
    await passwordLogin(server, id, other.username, other.password);
    assert.equal((await server.request('POST', '/oidc/login/totp/enroll', { body: { id } })).status, 201);
    const del = await server.request('DELETE', '/oidc/login/totp/enroll', { body: { id } });
    assert.equal(del.status, 200, del.text);
    assert.deepEqual(del.body, {});
    assert.equal((await server.request('DELETE', '/oidc/login/totp/enroll', { body: { id } })).status, 404);
  });

  test('enrollment before the password step is refused', async () => {
    const id = await startLogin(server, pkce());
    assert.equal((await server.request('POST', '/oidc/login/totp/enroll', { body: { id } })).status, 401);
  });
});
