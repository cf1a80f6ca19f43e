/**
 * Identities (fields, validation, update/patch semantics, default admin, disable/enable, role attributes,
 * identity types) and authenticators (admin CRUD, one per method, self-service with currentPassword).
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

let server: TestServer;
let admin: ApiClient;

before(async () => {
  server = await startTestServer();
  admin = await server.admin();
});
after(() => server.close());

describe('identity CRUD', () => {
  test('create stores every field and the detail shows them with type and auth policy references', async () => {
    const res = await admin.post('/identities', {
      name: 'full-fields',
      type: 'Device',
      isAdmin: false,
      externalId: 'ext-123',
      roleAttributes: ['sales', 'emea'],
      defaultHostingCost: 12,
      defaultHostingPrecedence: 'required',
      serviceHostingCosts: { svc1: 3 },
      serviceHostingPrecedences: { svc1: 'failed' },
      appData: { team: 'blue', n: 1 },
      tags: { env: 'test', flag: true },
    });
    assert.equal(res.status, 201);
    const d = (await admin.get(`/identities/${res.body.data.id}`)).body.data;
    assert.equal(d.name, 'full-fields');
    assert.equal(d.typeId, 'Device');
    assert.equal(d.type.id, 'Device');
    assert.equal(d.type.entity, 'identity-types');
    assert.equal(d.externalId, 'ext-123');
    assert.deepEqual(d.roleAttributes, ['sales', 'emea']);
    assert.equal(d.defaultHostingCost, 12);
    assert.equal(d.defaultHostingPrecedence, 'required');
    assert.deepEqual(d.serviceHostingCosts, { svc1: 3 });
    assert.deepEqual(d.serviceHostingPrecedences, { svc1: 'failed' });
    assert.deepEqual(d.appData, { team: 'blue', n: 1 });
    assert.deepEqual(d.tags, { env: 'test', flag: true });
    assert.equal(d.authPolicyId, 'default');
    assert.equal(d.authPolicy.name, 'Default');
    assert.equal(d.isDefaultAdmin, false);
    assert.equal(d.disabled, false);
    assert.deepEqual(d.authenticators, {});
  });

  test('invalid values are refused with the failing field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ type: 'Robot' }, 'type'],
      [{ defaultHostingCost: -1 }, 'defaultHostingCost'],
      [{ defaultHostingPrecedence: 'sometimes' }, 'defaultHostingPrecedence'],
      [{ serviceHostingCosts: { s: 70000 } }, 'serviceHostingCosts.s'],
      [{ roleAttributes: ['#hash'] }, 'roleAttributes'],
      [{ authPolicyId: 'no-such-policy' }, 'authPolicyId'],
      [{ tags: { nested: { no: 1 } } }, 'tags.nested'],
    ];
    for (const [extra, field] of cases) {
      const res = await admin.post('/identities', { name: `invalid-${field}`, type: 'User', isAdmin: false, ...extra });
      assert.equal(res.status, 400, JSON.stringify(extra));
      assert.equal(res.body.error.code, 'COULD_NOT_VALIDATE');
      assert.equal(res.body.error.cause.field, field);
    }
    assert.equal((await admin.get('/identities?filter=name contains "invalid-"')).body.meta.pagination.totalCount, 0);
  });

  test('patch changes only the fields sent and null clears a nullable field', async () => {
    const id = await createIdentity(admin, { externalId: 'to-clear', roleAttributes: ['keep'], defaultHostingCost: 5 });
    assert.equal((await admin.patch(`/identities/${id}`, { externalId: null, defaultHostingCost: 9 })).status, 200);
    const d = (await admin.get(`/identities/${id}`)).body.data;
    assert.equal(d.externalId, null);
    assert.equal(d.defaultHostingCost, 9);
    assert.deepEqual(d.roleAttributes, ['keep']);
    assert.ok(d.updatedAt >= d.createdAt);
  });

  test('update replaces every mutable field', async () => {
    const id = await createIdentity(admin, { roleAttributes: ['old'], defaultHostingCost: 5, appData: { a: 1 } });
    assert.equal(
      (await admin.put(`/identities/${id}`, { name: `replaced-${id}`, type: 'Service', isAdmin: false })).status,
      200,
    );
    const d = (await admin.get(`/identities/${id}`)).body.data;
    assert.equal(d.name, `replaced-${id}`);
    assert.equal(d.typeId, 'Service');
    assert.deepEqual(d.roleAttributes, []);
    assert.equal(d.defaultHostingCost, 0);
    assert.deepEqual(d.appData, {});
    const missing = await admin.put(`/identities/${id}`, { name: 'no-type', isAdmin: false });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error.cause.field, 'type');
  });

  test('the default admin exists with its flags and cannot be deleted', async () => {
    const res = await admin.get(`/identities?filter=${encodeURIComponent('isDefaultAdmin = true')}`);
    assert.equal(res.body.data.length, 1);
    const d = res.body.data[0];
    assert.equal(d.isAdmin, true);
    assert.equal(d.authenticators.updb.username, ADMIN.username);
    const del = await admin.delete(`/identities/${d.id}`);
    assert.equal(del.status, 400);
    assert.equal(del.body.error.code, 'ENTITY_CAN_NOT_BE_DELETED');
    assert.equal((await admin.get(`/identities/${d.id}`)).status, 200);
    // Nor can it lose its way in: its password authenticator stays and it cannot be disabled.
    const delAuth = await admin.delete(`/authenticators/${d.authenticators.updb.id}`);
    assert.equal(delAuth.status, 400);
    assert.equal(delAuth.body.error.code, 'ENTITY_CAN_NOT_BE_DELETED');
    const disable = await admin.post(`/identities/${d.id}/disable`, { durationMinutes: 0 });
    assert.equal(disable.status, 400);
    assert.equal(disable.body.error.code, 'ENTITY_CAN_NOT_BE_UPDATED');
    assert.equal((await server.client().login(ADMIN.username, ADMIN.password)).status, 200);
  });

  test('deleting an identity removes its authenticators and API sessions', async () => {
    const u = await createUser(server, admin);
    assert.equal((await admin.delete(`/identities/${u.id}`)).status, 200);
    assert.equal((await u.client.get('/current-identity')).status, 401);
    const auths = await admin.get(`/authenticators?filter=${encodeURIComponent(`identity = "${u.id}"`)}`);
    assert.equal(auths.body.meta.pagination.totalCount, 0);
  });

  test('concurrent creates are each answered once stored; a duplicate name among them fails alone', async () => {
    // On both stores these share a group commit (one transaction, a savepoint each).
    const names = Array.from({ length: 6 }, (_, i) => `concurrent-${i}`);
    const results = await Promise.all(
      [...names, 'concurrent-2'].map((name) => admin.post('/identities', { name, type: 'Device', isAdmin: false })),
    );
    const statuses = results.map((r) => r.status);
    assert.deepEqual(
      [...statuses.slice(0, 2), ...statuses.slice(3, 6)],
      [201, 201, 201, 201, 201],
      JSON.stringify(results.map((r) => r.body)),
    );
    assert.deepEqual([statuses[2], statuses[6]].sort(), [201, 400], 'one of the two same names is refused');
    const refused = results[statuses[2] === 400 ? 2 : 6]!;
    assert.equal(refused.body.error.code, 'COULD_NOT_VALIDATE', JSON.stringify(refused.body));
    for (const r of results.filter((r) => r.status === 201))
      assert.equal((await admin.get(`/identities/${r.body.data.id}`)).status, 200, 'stored when answered');
    const listed = await admin.get(`/identities?filter=${encodeURIComponent('name contains "concurrent-"')}`);
    assert.equal(listed.body.meta.pagination.totalCount, 6);
  });

  test('filters on tags, type and dates work', async () => {
    await createIdentity(admin, { name: 'tagged-one', type: 'Service', tags: { team: 'red' } });
    let res = await admin.get(`/identities?filter=${encodeURIComponent('tags.team = "red"')}`);
    assert.deepEqual(
      res.body.data.map((d: any) => d.name),
      ['tagged-one'],
    );
    res = await admin.get(`/identities?filter=${encodeURIComponent('type = "Service" and name = "tagged-one"')}`);
    assert.equal(res.body.data.length, 1);
    res = await admin.get(
      `/identities?filter=${encodeURIComponent('createdAt > datetime(2000-01-01T00:00:00Z) and name = "tagged-one"')}`,
    );
    assert.equal(res.body.data.length, 1);
  });
});

describe('disable and enable', () => {
  test('disable ends API sessions and refuses authentication until enabled', async () => {
    const u = await createUser(server, admin);
    const res = await admin.post(`/identities/${u.id}/disable`, { durationMinutes: 10 });
    assert.equal(res.status, 200);
    assert.equal((await u.client.get('/current-identity')).status, 401);
    const d = (await admin.get(`/identities/${u.id}`)).body.data;
    assert.equal(d.disabled, true);
    assert.ok(d.disabledUntil > d.disabledAt);
    const login = await server
      .client()
      .post('/authenticate?method=password', { username: u.username, password: u.password });
    assert.equal(login.status, 401);
    assert.equal(login.body.error.code, 'INVALID_AUTH');
    assert.equal((await admin.post(`/identities/${u.id}/enable`)).status, 200);
    const e = (await admin.get(`/identities/${u.id}`)).body.data;
    assert.equal(e.disabled, false);
    assert.equal(e.disabledAt, null);
    assert.equal((await server.client().login(u.username, u.password)).status, 200);
  });

  test('durationMinutes 0 disables indefinitely; a missing duration is a validation error', async () => {
    const id = await createIdentity(admin);
    assert.equal((await admin.post(`/identities/${id}/disable`, { durationMinutes: 0 })).status, 200);
    const d = (await admin.get(`/identities/${id}`)).body.data;
    assert.equal(d.disabled, true);
    assert.equal(d.disabledUntil, null);
    const bad = await admin.post(`/identities/${id}/disable`, {});
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.cause.field, 'durationMinutes');
    assert.equal((await admin.post('/identities/unknown-id/disable', { durationMinutes: 1 })).status, 404);
  });
});

describe('role attributes and identity types', () => {
  test('identity role attributes lists the distinct attributes in use', async () => {
    await createIdentity(admin, { roleAttributes: ['ra-one', 'ra-two'] });
    await createIdentity(admin, { roleAttributes: ['ra-two', 'ra-three'] });
    const res = await admin.get(
      `/identity-role-attributes?filter=${encodeURIComponent('id contains "ra-"')}&limit=100`,
    );
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, ['ra-one', 'ra-three', 'ra-two']);
    assert.equal(res.body.meta.pagination.totalCount, 3);
    assert.deepEqual(checkResponse('management', '/identity-role-attributes', 'GET', 200, res.body), []);
  });

  test('identity types are User, Device, Service and Router', async () => {
    const res = await admin.get('/identity-types');
    assert.deepEqual(res.body.data.map((t: any) => t.name).sort(), ['Device', 'Router', 'Service', 'User']);
    assert.equal((await admin.get('/identity-types/User')).body.data.name, 'User');
    assert.deepEqual(checkResponse('management', '/identity-types', 'GET', 200, res.body), []);
  });
});

describe('authenticators', () => {
  test('admin creates an updb authenticator; the password is never returned', async () => {
    const id = await createIdentity(admin);
    const res = await admin.post('/authenticators', {
      identityId: id,
      method: 'updb',
      username: `auth-${id}`,
      password: 'secret-pass-1',
    });
    assert.equal(res.status, 201);
    const d = await admin.get(`/authenticators/${res.body.data.id}`);
    assert.equal(d.body.data.method, 'updb');
    assert.equal(d.body.data.username, `auth-${id}`);
    assert.equal(d.body.data.identity.id, id);
    assert.ok(!JSON.stringify(d.body).includes('secret-pass-1'));
    assert.ok(!('password' in d.body.data) && !('passwordHash' in d.body.data));
    assert.deepEqual(checkResponse('management', '/authenticators/{id}', 'GET', 200, d.body), []);
    const byIdentity = await admin.get(`/identities/${id}/authenticators`);
    assert.equal(byIdentity.body.data.length, 1);
    const ident = (await admin.get(`/identities/${id}`)).body.data;
    assert.equal(ident.authenticators.updb.id, res.body.data.id);
  });

  test('a second authenticator of the same method is 409; lengths are validated', async () => {
    const id = await createIdentity(admin);
    assert.equal(
      (
        await admin.post('/authenticators', {
          identityId: id,
          method: 'updb',
          username: `one-${id}`,
          password: 'password1',
        })
      ).status,
      201,
    );
    const again = await admin.post('/authenticators', {
      identityId: id,
      method: 'updb',
      username: `two-${id}`,
      password: 'password1',
    });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'MAX_AUTHENTICATOR_METHODS_REACHED');
    const id2 = await createIdentity(admin);
    const short = await admin.post('/authenticators', {
      identityId: id2,
      method: 'updb',
      username: 'abc',
      password: 'password1',
    });
    assert.equal(short.status, 400);
    assert.equal(short.body.error.cause.field, 'username');
    const shortPw = await admin.post('/authenticators', {
      identityId: id2,
      method: 'updb',
      username: 'abcd-ok',
      password: 'abcd',
    });
    assert.equal(shortPw.status, 400);
    assert.equal(shortPw.body.error.cause.field, 'password');
    const noIdentity = await admin.post('/authenticators', {
      identityId: 'missing',
      method: 'updb',
      username: 'abcd-ok',
      password: 'abcde1',
    });
    assert.equal(noIdentity.status, 400);
    assert.equal(noIdentity.body.error.cause.field, 'identityId');
    const badMethod = await admin.post('/authenticators', { identityId: id2, method: 'carrier-pigeon' });
    assert.equal(badMethod.status, 400);
  });

  test('admin update changes the password; patch changes only what is sent', async () => {
    const u = await createUser(server, admin);
    const authId = (await admin.get(`/identities/${u.id}`)).body.data.authenticators.updb.id;
    assert.equal(
      (await admin.put(`/authenticators/${authId}`, { username: u.username, password: 'changed-pw-1' })).status,
      200,
    );
    assert.equal((await server.client().login(u.username, u.password)).status, 401);
    assert.equal((await server.client().login(u.username, 'changed-pw-1')).status, 200);
    assert.equal((await admin.patch(`/authenticators/${authId}`, { username: `${u.username}-renamed` })).status, 200);
    assert.equal((await server.client().login(`${u.username}-renamed`, 'changed-pw-1')).status, 200);
    assert.equal((await admin.delete(`/authenticators/${authId}`)).status, 200);
    assert.equal((await server.client().login(`${u.username}-renamed`, 'changed-pw-1')).status, 401);
  });

  test('current identity changes its own password only with the right currentPassword', async () => {
    const u = await createUser(server, admin);
    const list = await u.client.get('/current-identity/authenticators');
    assert.equal(list.status, 200);
    assert.equal(list.body.data.length, 1);
    const authId = list.body.data[0].id;
    assert.equal((await u.client.get(`/current-identity/authenticators/${authId}`)).status, 200);
    const wrong = await u.client.patch(`/current-identity/authenticators/${authId}`, {
      password: 'new-password-1',
      currentPassword: 'not-the-one',
    });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.error.code, 'UNAUTHORIZED');
    assert.equal(wrong.body.error.cause.field, 'currentPassword');
    const missing = await u.client.patch(`/current-identity/authenticators/${authId}`, { password: 'new-password-1' });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error.cause.field, 'currentPassword');
    const ok = await u.client.patch(`/current-identity/authenticators/${authId}`, {
      password: 'new-password-1',
      currentPassword: u.password,
    });
    assert.equal(ok.status, 200);
    assert.equal((await server.client().login(u.username, 'new-password-1')).status, 200);
    const put = await u.client.put(`/current-identity/authenticators/${authId}`, {
      username: u.username,
      password: 'newer-password-2',
      currentPassword: 'new-password-1',
    });
    assert.equal(put.status, 200);
    assert.equal((await server.client().login(u.username, 'newer-password-2')).status, 200);
  });

  test("another identity's authenticator is not found through current-identity", async () => {
    const a = await createUser(server, admin);
    const b = await createUser(server, admin);
    const bAuth = (await admin.get(`/identities/${b.id}`)).body.data.authenticators.updb.id;
    assert.equal((await a.client.get(`/current-identity/authenticators/${bAuth}`)).status, 404);
    const res = await a.client.patch(`/current-identity/authenticators/${bAuth}`, {
      password: 'hijack-pw-1',
      currentPassword: a.password,
    });
    assert.equal(res.status, 404);
  });
});
