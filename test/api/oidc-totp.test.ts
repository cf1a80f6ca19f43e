/**
 * The TOTP step of an OIDC login (docs/reference-notes.md §14.4, §14.10): a login of an identity with MFA stops at
 * the TOTP query, a current code or an unused recovery code completes it (`amr` gains `totp`), wrong and replayed
 * codes are refused, the 5th wrong code ends the login, and `auth-queries` tells what is due. Frozen clock; codes
 * are computed from the enrollment's secret.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRecord, createUser, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import {
  bearer,
  callback,
  claimsOf,
  createAuthPolicy,
  enrollTotp,
  exchangeCode,
  form,
  locationQuery,
  passwordLogin,
  pkce,
  startLogin,
  RELAXED_FAILURE_LIMITS,
  TOTP_STEP_MS as STEP_MS,
  totpCode,
  totpSecretOf,
} from '../harness/oidc.js';

const YAML = RELAXED_FAILURE_LIMITS;

let server: TestServer;
let admin: ApiClient;
let user: { id: string; username: string; password: string; client: ApiClient };
let secret: string;
let recoveryCodes: string[];

const totp = (steps = 0) => totpCode(secret, server.clock, steps);

before(async () => {
  server = await startTestServer({ yaml: YAML, clock: 'frozen' });
  admin = await server.admin();
  user = await createUser(server, admin);
  ({ secret, recoveryCodes } = await enrollTotp(user.client, server.clock));
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
    const tok = await exchangeCode(server, id, p);
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
    const tok = await exchangeCode(server, id, p);
    const dial = await server.request('POST', '/edge/client/v1/sessions', {
      body: { serviceId: service, type: 'Dial' },
      headers: bearer(tok.body.access_token),
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
const totpPolicy = () => createAuthPolicy(admin, { requireTotp: true });

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
    const own = totpSecretOf(enrolled.body.provisioningUrl);
    assert.equal((await server.request('POST', '/oidc/login/totp/enroll', { body: { id } })).body.code, 'MFA_EXISTS');

    const code = () => totpCode(own, server.clock);
    const wrong = await server.request('POST', '/oidc/login/totp/enroll/verify', { body: { id, code: '000000' } });
    assert.equal(wrong.body.code, 'MFA_INVALID_TOKEN');
    const ok = await server.request('POST', '/oidc/login/totp/enroll/verify', { body: { id, code: await code() } });
    assert.equal(ok.status, 302, ok.text);
    const tok = await exchangeCode(server, id, p);
    assert.equal(tok.status, 200, tok.text);
    const claims = claimsOf(tok.body.access_token);
    assert.deepEqual(claims.amr, ['password', 'totp']);
    const session = await admin.get(`/api-sessions/${claims.z_asid}`);
    assert.equal(session.status, 200);
    assert.equal(session.body.data.isMfaComplete, true);
    const me = await server.request('GET', '/edge/client/v1/current-identity', {
      headers: bearer(tok.body.access_token),
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
