/**
 * Password authentication, API sessions (headers, activity, idle expiry, logout, admin management) and
 * authentication policies (method allowed, lockout, password rules).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ADMIN,
  createIdentity,
  createUser,
  startTestServer,
  type ApiClient,
  type TestServer,
} from '../harness/server.js';
import { checkResponse } from '../harness/schemas.js';
import { authPolicyBody } from '../harness/bodies.js';

let server: TestServer;
let admin: ApiClient;

const SHORT_TIMEOUT = 'edge:\n  api:\n    sessionTimeout: 2s\n';

before(async () => {
  // A frozen clock: the short idle timeout never runs out here, however slow the machine is.
  server = await startTestServer({ yaml: SHORT_TIMEOUT, clock: 'frozen' });
  admin = await server.admin();
});
after(() => server.close());

/** A controller of one test's own, for tests that move its clock. */
async function ownServer(t: { after(fn: () => Promise<void>): void }): Promise<TestServer> {
  const s = await startTestServer({ yaml: SHORT_TIMEOUT, clock: 'frozen' });
  t.after(() => s.close());
  return s;
}

describe('authenticate with a password', () => {
  test('answers the API session with the token in the body and both session headers', async () => {
    for (const api of ['client', 'management'] as const) {
      const c = server.client(api);
      const res = await c.post('/authenticate?method=password', { username: ADMIN.username, password: ADMIN.password });
      assert.equal(res.status, 200);
      const s = res.body.data;
      assert.match(s.token, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.equal(res.headers['svc-session'], s.token);
      assert.equal(res.headers['zt-session'], s.token);
      assert.equal(s.expirationSeconds, 2);
      assert.equal(typeof s.expiresAt, 'string');
      assert.equal(typeof s.lastActivityAt, 'string');
      assert.deepEqual(s.authQueries, []);
      assert.equal(s.identity.name, 'Default Admin');
      assert.deepEqual(checkResponse(api, '/authenticate', 'POST', 200, res.body), []);
    }
  });

  test('wrong password, unknown user and missing fields fail without a session', async () => {
    const c = server.client();
    let res = await c.post('/authenticate?method=password', { username: ADMIN.username, password: 'wrong-password' });
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 'INVALID_AUTH');
    assert.equal(res.headers['zt-session'], undefined);
    res = await c.post('/authenticate?method=password', { username: 'nobody-here', password: 'whatever1' });
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 'INVALID_AUTH');
    res = await c.post('/authenticate?method=password', { username: ADMIN.username });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'COULD_NOT_VALIDATE');
  });

  test('an unknown method is 400 INVALID_AUTH_METHOD', async () => {
    const res = await server.client().post('/authenticate?method=magic', {});
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'INVALID_AUTH_METHOD');
  });

  test('envInfo and sdkInfo from the body are stored on the identity', async () => {
    const u = await createUser(server, admin);
    await u.client.login(u.username, u.password, {
      envInfo: { os: 'linux', arch: 'amd64' },
      sdkInfo: { type: 'test-sdk', version: '1.2.3' },
    });
    const d = (await admin.get(`/identities/${u.id}`)).body.data;
    assert.equal(d.envInfo.os, 'linux');
    assert.equal(d.sdkInfo.version, '1.2.3');
    assert.equal(d.hasApiSession, true);
  });
});

describe('API session tokens', () => {
  test('svc-session and zt-session headers are both accepted', async () => {
    const c = server.client('management');
    await c.login(ADMIN.username, ADMIN.password);
    const viaZt = await c.get('/current-api-session');
    c.header = 'svc-session';
    const viaSvc = await c.get('/current-api-session');
    assert.equal(viaZt.status, 200);
    assert.equal(viaSvc.status, 200);
    assert.equal(viaSvc.body.data.token, c.token);
    assert.deepEqual(checkResponse('management', '/current-api-session', 'GET', 200, viaSvc.body), []);
  });

  test('missing, malformed and unknown tokens are 401 UNAUTHORIZED', async () => {
    const c = server.client('management');
    for (const token of [undefined, 'not-a-uuid', '9b2f3c1e-0000-4000-8000-000000000000']) {
      const res = await c.withToken(token).get('/current-api-session');
      assert.equal(res.status, 401, String(token));
      assert.equal(res.body.error.code, 'UNAUTHORIZED');
    }
  });

  test('logout ends the session on both APIs', async () => {
    const c = server.client('client');
    await c.login(ADMIN.username, ADMIN.password);
    assert.equal((await c.delete('/current-api-session')).status, 200);
    assert.equal((await c.get('/current-api-session')).status, 401);
    assert.equal((await c.other('management').get('/identities')).status, 401);
  });

  test('admins list, show and delete API sessions; others may not', async () => {
    const u = await createUser(server, admin);
    const list = await admin.get(`/api-sessions?filter=${encodeURIComponent(`identity = "${u.id}"`)}`);
    assert.equal(list.status, 200);
    assert.equal(list.body.data.length, 1);
    const s = list.body.data[0];
    assert.equal(s.identityId, u.id);
    assert.deepEqual(checkResponse('management', '/api-sessions', 'GET', 200, list.body), []);
    const detail = await admin.get(`/api-sessions/${s.id}`);
    assert.equal(detail.status, 200);
    assert.deepEqual(checkResponse('management', '/api-sessions/{id}', 'GET', 200, detail.body), []);
    const asUser = u.client.other('management');
    assert.equal((await asUser.get('/api-sessions')).status, 401);
    assert.equal((await asUser.delete(`/api-sessions/${s.id}`)).status, 401);
    assert.equal((await admin.delete(`/api-sessions/${s.id}`)).status, 200);
    assert.equal((await u.client.get('/current-identity')).status, 401);
  });
});

describe('API session expiry (each test moves its own controller clock)', () => {
  test('requests are activity: a session used within the timeout stays alive', async (t) => {
    const s = await ownServer(t);
    const c = s.client('client');
    await c.login(ADMIN.username, ADMIN.password);
    for (let i = 0; i < 5; i++) {
      s.clock.advance(1500);
      assert.equal((await c.get('/current-identity')).status, 200, `request ${i}`);
    }
    const session = (await c.get('/current-api-session')).body.data;
    assert.equal(
      new Date(session.lastActivityAt).getTime() - new Date(session.createdAt).getTime(),
      7500,
      'lastActivityAt is the last request',
    );
  });

  test('an idle session stops working at once', async (t) => {
    const s = await ownServer(t);
    const c = s.client('client');
    await c.login(ADMIN.username, ADMIN.password);
    s.clock.advance(1999);
    assert.equal((await c.get('/current-api-session')).status, 200, 'alive just before the timeout');
    s.clock.advance(2000);
    assert.equal((await c.get('/current-api-session')).status, 401, 'expired once idle for the timeout');
  });

  test('the sweeper removes idle sessions and keeps live ones', async (t) => {
    const s = await ownServer(t);
    const idle = s.client('client');
    await idle.login(ADMIN.username, ADMIN.password);
    const id = (await idle.get('/current-api-session')).body.data.id;
    s.clock.advance(2500);
    const other = await s.admin();
    assert.equal((await other.get(`/api-sessions/${id}`)).status, 200, 'an expired session is stored until the sweep');
    await s.sweep();
    assert.equal((await other.get(`/api-sessions/${id}`)).status, 404);
    assert.equal((await other.get('/current-api-session')).status, 200, 'a live session survives the sweep');
    assert.equal((await idle.get('/current-api-session')).status, 401);
  });

  test('a lockout ends after lockoutDurationMinutes', async (t) => {
    const s = await ownServer(t);
    const a = await s.admin();
    const pol = await a.post(
      '/auth-policies',
      authPolicyBody('lockout-ends', { maxAttempts: 1, lockoutDurationMinutes: 5 }),
    );
    assert.equal(pol.status, 201, pol.text);
    const u = await createUser(s, a, { identity: { authPolicyId: pol.body.data.id } });
    const c = s.client();
    assert.equal(
      (await c.post('/authenticate?method=password', { username: u.username, password: 'wrong-pass' })).status,
      401,
    );
    s.clock.advance(5 * 60_000 - 1000);
    assert.equal(
      (await c.post('/authenticate?method=password', { username: u.username, password: u.password })).status,
      401,
      'locked for the duration',
    );
    s.clock.advance(1000);
    assert.equal(
      (await c.post('/authenticate?method=password', { username: u.username, password: u.password })).status,
      200,
      'unlocked after it',
    );
  });
});

describe('admin operations', () => {
  test('a non-admin identity gets 401 on admin operations but may read itself', async () => {
    const u = await createUser(server, admin);
    const m = u.client.other('management');
    for (const res of [
      await m.get('/identities'),
      await m.post('/identities', { name: 'x', type: 'User', isAdmin: false }),
      await m.get('/auth-policies'),
    ]) {
      assert.equal(res.status, 401);
      assert.equal(res.body.error.code, 'UNAUTHORIZED');
    }
    const me = await m.get('/current-identity');
    assert.equal(me.status, 200);
    assert.equal(me.body.data.id, u.id);
    assert.deepEqual(checkResponse('management', '/current-identity', 'GET', 200, me.body), []);
  });
});

describe('authentication policies', () => {
  test('the default policy exists and can be neither deleted nor changed', async () => {
    const d = await admin.get('/auth-policies/default');
    assert.equal(d.status, 200);
    assert.equal(d.body.data.name, 'Default');
    assert.deepEqual(checkResponse('management', '/auth-policies/{id}', 'GET', 200, d.body), []);
    const del = await admin.delete('/auth-policies/default');
    assert.equal(del.status, 400);
    assert.equal(del.body.error.code, 'ENTITY_CAN_NOT_BE_DELETED');
    const upd = await admin.patch('/auth-policies/default', { name: 'Changed' });
    assert.equal(upd.status, 400);
    assert.equal(upd.body.error.code, 'ENTITY_CAN_NOT_BE_UPDATED');
  });

  test('create, patch (nested), update, list and delete', async () => {
    const res = await admin.post('/auth-policies', authPolicyBody('crud-policy', { maxAttempts: 3 }));
    assert.equal(res.status, 201);
    const id = res.body.data.id;
    assert.equal((await admin.patch(`/auth-policies/${id}`, { primary: { updb: { maxAttempts: 7 } } })).status, 200);
    let d = (await admin.get(`/auth-policies/${id}`)).body.data;
    assert.equal(d.primary.updb.maxAttempts, 7);
    assert.equal(d.primary.updb.allowed, true, 'other nested fields kept');
    assert.equal(d.primary.cert.allowed, true);
    assert.equal(
      (
        await admin.put(
          `/auth-policies/${id}`,
          authPolicyBody('crud-policy-2', { minPasswordLength: 2, maxAttempts: -4 }),
        )
      ).status,
      200,
    );
    d = (await admin.get(`/auth-policies/${id}`)).body.data;
    assert.equal(d.name, 'crud-policy-2');
    assert.equal(d.primary.updb.minPasswordLength, 5, 'clamped to at least 5');
    assert.equal(d.primary.updb.maxAttempts, 0, 'negative becomes 0');
    const list = await admin.get('/auth-policies');
    assert.ok(list.body.data.some((p: any) => p.id === id));
    assert.deepEqual(checkResponse('management', '/auth-policies', 'GET', 200, list.body), []);
    const bad = await admin.post('/auth-policies', { name: 'incomplete', primary: {} });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'COULD_NOT_VALIDATE');
    assert.equal((await admin.delete(`/auth-policies/${id}`)).status, 200);
    assert.equal((await admin.get(`/auth-policies/${id}`)).status, 404);
  });

  test('primary.updb.allowed false refuses password login', async () => {
    const pol = await admin.post('/auth-policies', authPolicyBody('no-updb', { allowed: false }));
    const u = await createUser(server, admin);
    assert.equal((await admin.patch(`/identities/${u.id}`, { authPolicyId: pol.body.data.id })).status, 200);
    const res = await server
      .client()
      .post('/authenticate?method=password', { username: u.username, password: u.password });
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 'INVALID_AUTH');
  });

  test('maxAttempts locks the identity for lockoutDurationMinutes; a success resets the count', async () => {
    const pol = await admin.post(
      '/auth-policies',
      authPolicyBody('lockout', { maxAttempts: 3, lockoutDurationMinutes: 5 }),
    );
    const u = await createUser(server, admin, { identity: { authPolicyId: pol.body.data.id } });
    const c = server.client();
    // Two failures, a success (resets), two more failures: still not locked.
    for (const pw of ['bad-1-pass', 'bad-2-pass', u.password, 'bad-3-pass', 'bad-4-pass'])
      await c.post('/authenticate?method=password', { username: u.username, password: pw });
    assert.equal(
      (await c.post('/authenticate?method=password', { username: u.username, password: u.password })).status,
      200,
    );
    for (let i = 0; i < 3; i++) {
      const res = await c.post('/authenticate?method=password', { username: u.username, password: `bad-${i}-again` });
      assert.equal(res.status, 401);
    }
    const d = (await admin.get(`/identities/${u.id}`)).body.data;
    assert.equal(d.disabled, true);
    assert.equal(typeof d.disabledAt, 'string');
    const minutes = (new Date(d.disabledUntil).getTime() - new Date(d.disabledAt).getTime()) / 60000;
    assert.ok(Math.abs(minutes - 5) < 0.1, `locked for 5 minutes (was ${minutes})`);
    const locked = await c.post('/authenticate?method=password', { username: u.username, password: u.password });
    assert.equal(locked.status, 401, 'the right password no longer works while locked');
    assert.equal((await admin.post(`/identities/${u.id}/enable`, {})).status, 200);
    assert.equal(
      (await c.post('/authenticate?method=password', { username: u.username, password: u.password })).status,
      200,
    );
  });

  test('lockoutDurationMinutes 0 locks indefinitely', async () => {
    const pol = await admin.post(
      '/auth-policies',
      authPolicyBody('lockout-forever', { maxAttempts: 1, lockoutDurationMinutes: 0 }),
    );
    const u = await createUser(server, admin, { identity: { authPolicyId: pol.body.data.id } });
    await server.client().post('/authenticate?method=password', { username: u.username, password: 'nope-nope' });
    const d = (await admin.get(`/identities/${u.id}`)).body.data;
    assert.equal(d.disabled, true);
    assert.equal(d.disabledUntil, null);
  });

  test('password rules are enforced wherever a password is set, naming the rule', async () => {
    const pol = await admin.post(
      '/auth-policies',
      authPolicyBody('strict', {
        minPasswordLength: 10,
        requireMixedCase: true,
        requireNumberChar: true,
        requireSpecialChar: true,
      }),
    );
    const id = await createIdentity(admin, { authPolicyId: pol.body.data.id });
    const cases: [string, RegExp][] = [
      ['Short1!', /minPasswordLength/],
      ['alllowercase1!', /requireMixedCase/],
      ['NoNumbersHere!', /requireNumberChar/],
      ['NoSpecials123', /requireSpecialChar/],
    ];
    for (const [password, rule] of cases) {
      const res = await admin.post('/authenticators', {
        identityId: id,
        method: 'updb',
        username: `strict-${id}`,
        password,
      });
      assert.equal(res.status, 400, password);
      assert.equal(res.body.error.code, 'COULD_NOT_VALIDATE');
      assert.equal(res.body.error.cause.field, 'password');
      assert.match(res.body.error.cause.reason, rule);
      assert.notEqual(res.body.error.cause.value, password, 'the password is not echoed back');
    }
    const ok = await admin.post('/authenticators', {
      identityId: id,
      method: 'updb',
      username: `strict-${id}`,
      password: 'Good-Passw0rd',
    });
    assert.equal(ok.status, 201);
    const weak = await admin.patch(`/authenticators/${ok.body.data.id}`, { password: 'weakweakweak' });
    assert.equal(weak.status, 400);
    assert.match(weak.body.error.cause.reason, /requireMixedCase|requireNumberChar|requireSpecialChar/);
  });
});
