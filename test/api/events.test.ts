/**
 * Events of changes (docs/design.md, "Events"): every create, update and delete through the Management API is
 * recorded with the change, with who made it, from where, and what changed (secrets left out); a refused change
 * records nothing; `GET /events` lists them with the filter language and paging, to admins only.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertError } from '../harness/assert.js';
import { createIdentity, createUser, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { readStore } from '../harness/raw-store.js';

let s: TestServer;
let admin: ApiClient;
let adminId: string;

before(async () => {
  s = await startTestServer();
  admin = await s.admin();
  adminId = (await admin.get('/current-identity')).body.data.id;
});
after(() => s?.close());

/** The events whose filter is `filter` (fixture: no assertions), oldest first. */
type Ev = Record<string, any>;

async function eventsWhere(filter: string): Promise<Ev[]> {
  const res = await admin.get(
    `/events?filter=${encodeURIComponent(filter)}&sort=${encodeURIComponent('timestamp asc')}&limit=500`,
  );
  if (res.status !== 200) throw new Error(`events list failed: ${res.status} ${res.text}`);
  return res.body.data;
}

test('a create, a patch and a delete each record an entityChange event with author, source and states', async () => {
  const name = `svc-${Math.random().toString(36).slice(2, 8)}`;
  const created = await admin.post('/services', { name, encryptionRequired: true, roleAttributes: ['a'] });
  assert.equal(created.status, 201, created.text);
  const id = created.body.data.id;
  const patched = await admin.patch(`/services/${id}`, { roleAttributes: ['a', 'b'] });
  assert.equal(patched.status, 200, patched.text);
  assert.equal((await admin.delete(`/services/${id}`)).status, 200);

  const events = await eventsWhere(`entityId = "${id}"`);
  assert.deepEqual(
    events.map((e) => e.eventType),
    ['created', 'updated', 'deleted'],
  );
  for (const e of events) {
    assert.equal(e.namespace, 'entityChange');
    assert.equal(e.version, 1);
    assert.match(e.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a UUID v7');
    assert.ok(!Number.isNaN(Date.parse(e.timestamp)));
    assert.equal(e.entityType, 'services');
    assert.equal(e.metadata.author.type, 'identity');
    assert.equal(e.metadata.author.id, adminId);
    assert.equal(e.metadata.author.apiSessionId, (await admin.get('/current-api-session')).body.data.id);
    assert.equal(e.metadata.source.type, 'rest');
    assert.equal(e.metadata.source.api, 'management');
    assert.equal(typeof e.metadata.source.remoteAddr, 'string');
  }
  assert.deepEqual(
    events.map((e) => e.metadata.source.method),
    ['POST', 'PATCH', 'DELETE'],
  );
  const [c, u, d] = events as [Ev, Ev, Ev];
  assert.equal(c.initialState, null);
  assert.equal(c.finalState.name, name);
  assert.deepEqual(c.finalState.roleAttributes, ['a']);
  assert.equal(u.initialState.updatedAt, c.finalState.updatedAt);
  assert.deepEqual(u.changes, { roleAttributes: { before: ['a'], after: ['a', 'b'] } }, 'only what changed');
  assert.deepEqual(d.initialState.roleAttributes, ['a', 'b']);
  assert.equal(d.finalState, null);
  assert.ok(new Set(events.map((e) => e.id)).size === 3, 'ids are unique');
});

test("a create's event shows the record as a read of it shows it", async () => {
  // The create builds its event from the values it inserted (src/store/crud.ts, insertedRecord); the update's
  // `initialState` is the row read back. Repeated attributes, tags, JSON maps, a default and a null among them.
  const name = `id-${Math.random().toString(36).slice(2, 8)}`;
  const writes: [string, Record<string, unknown>][] = [
    [
      '/identities',
      {
        name,
        type: 'Device',
        isAdmin: false,
        roleAttributes: ['b', 'a', 'b'],
        tags: { k: 'v', n: 1, t: true, z: null },
        appData: { nested: { list: [1, 'x'] } },
        serviceHostingCosts: { svc: 5 },
        externalId: `ext-${name}`,
        enrollment: { ott: true },
      },
    ],
    ['/identities', { name: `${name}-2`, type: 'User', isAdmin: true }],
    ['/services', { name: `svc-${name}`, encryptionRequired: false, roleAttributes: ['x', 'x'] }],
  ];
  for (const [path, body] of writes) {
    const created = await admin.post(path, body);
    assert.equal(created.status, 201, created.text);
    const id = created.body.data.id;
    assert.equal((await admin.patch(`${path}/${id}`, { tags: { later: 'yes' } })).status, 200);
    const [c, u] = (await eventsWhere(`entityId = "${id}"`)) as [Ev, Ev];
    assert.deepEqual(c.finalState, u.initialState, path);
    assert.ok(c.finalState.createdAt && c.finalState.id === id);
  }
});

test('an event is stored shortened and listed whole, as the text it was built as', async () => {
  const name = `short-${Math.random().toString(36).slice(2, 8)}`;
  const created = await admin.post('/identities', { name, type: 'Device', isAdmin: false, roleAttributes: ['a'] });
  assert.equal(created.status, 201, created.text);
  const id = created.body.data.id;
  const [row] = await readStore<{ body: string }>(s, 'select body from events where "entityId" = ?', [id]);
  const res = await admin.get(`/events?filter=${encodeURIComponent(`entityId = "${id}"`)}`);
  assert.equal(res.status, 200, res.text);
  const [event] = res.body.data as [Ev];
  assert.equal(event.finalState.name, name);
  // The event's text is built by JSON.stringify: written again from what was listed, it is the same bytes.
  const whole = JSON.stringify(event);
  assert.ok(res.text.includes(`[${whole}]`), 'listed as built');
  assert.ok(row!.body.length < whole.length / 3, `stored in ${row!.body.length} of ${whole.length} bytes`);
});

test('a refused change records no event', async () => {
  const name = `dup-${Math.random().toString(36).slice(2, 8)}`;
  await admin.post('/services', { name, encryptionRequired: true });
  const before = (await admin.get('/events?limit=1')).body.meta.pagination.totalCount;
  assert.equal((await admin.post('/services', { name, encryptionRequired: true })).status, 400, 'duplicate name');
  assert.equal((await admin.patch('/services/nope', { name: 'x' })).status, 404);
  const id = await createIdentity(admin);
  const policy = await admin.post('/service-policies', {
    name: `p-${name}`,
    type: 'Dial',
    semantic: 'AnyOf',
    identityRoles: [`@${id}`],
    serviceRoles: ['#all'],
  });
  assert.equal(policy.status, 201, policy.text);
  const afterWrites = (await admin.get('/events?limit=1')).body.meta.pagination.totalCount;
  assert.equal(afterWrites, before + 2, 'the identity and the policy, nothing for the refusals');
});

test('secrets stay out: an authenticator password and its hash, a changed password only named', async () => {
  const password = 'Secret-Passw0rd-991!';
  const user = await createUser(s, admin, { password });
  const auth = (await admin.get(`/authenticators?filter=${encodeURIComponent(`identityId = "${user.id}"`)}`)).body
    .data[0];
  const newPassword = 'Other-Secret-Passw0rd-992!';
  const changed = await admin.patch(`/authenticators/${auth.id}`, { password: newPassword });
  assert.equal(changed.status, 200, changed.text);
  const events = await eventsWhere(`entityId = "${auth.id}"`);
  assert.deepEqual(
    events.map((e) => e.eventType),
    ['created', 'updated'],
  );
  const text = JSON.stringify(events);
  for (const secret of [password, newPassword, 'passwordHash":"', '$argon2'])
    assert.ok(!text.includes(secret), `no ${secret} in ${text}`);
  const [created, updated] = events as [Ev, Ev];
  assert.equal(created.finalState.username, user.username);
  assert.deepEqual(updated.changes.passwordHash, { redacted: true }, 'a changed secret is named, without values');
});

test('the listing filters by type, actor, resource and time, pages, and is for admins only', async () => {
  const since = new Date().toISOString();
  const id = await createIdentity(admin);
  const mine = await eventsWhere(
    `namespace = "entityChange" and eventType = "created" and entityType = "identities" and actorId = "${adminId}" and timestamp >= datetime(${since})`,
  );
  assert.ok(mine.some((e) => e.entityId === id));
  const page = await admin.get('/events?limit=2&offset=1');
  assert.equal(page.status, 200);
  assert.equal(page.body.data.length, 2);
  assert.equal(page.body.meta.pagination.limit, 2);
  assert.equal(page.body.meta.pagination.offset, 1);
  assert.ok(page.body.meta.filterableFields.includes('actorId'));
  const newest = (await admin.get('/events?limit=1')).body.data[0];
  assert.equal(newest.entityId, id, 'newest first by default');

  assertError(await admin.get(`/events?filter=${encodeURIComponent('nope = 1')}`), 400, 'INVALID_FILTER');
  const user = await createUser(s, admin, { api: 'management' });
  assertError(await user.client.get('/events'), 401, 'UNAUTHORIZED');
  assertError(await s.client().get('/events'), 401, 'UNAUTHORIZED');
});

test('disabling and enabling an identity, and removing its MFA, are recorded with their author', async () => {
  const user = await createUser(s, admin);
  assert.equal((await admin.post(`/identities/${user.id}/disable`, { durationMinutes: 5 })).status, 200);
  assert.equal((await admin.post(`/identities/${user.id}/enable`)).status, 200);
  const changes = await eventsWhere(`entityType = "identities" and entityId = "${user.id}" and eventType = "updated"`);
  assert.equal(changes.length, 2);
  const [disabled, enabled] = changes as [Ev, Ev];
  assert.equal(disabled.changes.disabledAt.before, null);
  assert.equal(typeof disabled.changes.disabledAt.after, 'string');
  assert.equal(enabled.changes.disabledAt.after, null);
  assert.equal(enabled.metadata.author.id, adminId);

  const c = s.client('client');
  await c.login(user.username, user.password);
  assert.equal((await c.post('/current-identity/mfa')).status, 201);
  assert.equal((await admin.delete(`/identities/${user.id}/mfa`)).status, 200);
  const [removed] = await eventsWhere(`entityType = "mfas" and entityId = "${user.id}" and eventType = "deleted"`);
  assert.equal(removed?.eventType, 'deleted');
  assert.equal(removed.metadata.author.id, adminId);
  assert.deepEqual(removed.initialState, { identityId: user.id });
});
