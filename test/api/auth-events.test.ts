/**
 * Authentication and API-session events: each login attempt records one `authentication` event (success or
 * fail, with the method, the identity or username, the reason and the source address), a lockout and a
 * rate-limit refusal are recorded, and API sessions record `created`, `deleted` (logout) and `expired`
 * (the sweep). No token or password appears in any of them.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertError } from '../harness/assert.js';
import { authPolicyBody } from '../harness/bodies.js';
import {
  ADMIN,
  createIdentity,
  createUser,
  startTestServer,
  type ApiClient,
  type TestServer,
} from '../harness/server.js';

type Ev = Record<string, any>;

let s: TestServer;
let admin: ApiClient;

before(async () => {
  s = await startTestServer({
    yaml: 'edge:\n  api:\n    sessionTimeout: 30s\n    rateLimit:\n      auth:\n        failuresPerAccount: { burst: 3, perMinute: 1 }\n',
  });
  admin = await s.admin();
});
after(() => s?.close());

const loginFrom = (from: string, username: string, password: string) =>
  s.request('POST', '/edge/client/v1/authenticate?method=password', { body: { username, password }, from });

async function eventsWhere(filter: string): Promise<Ev[]> {
  const res = await admin.get(
    `/events?filter=${encodeURIComponent(filter)}&sort=${encodeURIComponent('timestamp asc')}&limit=500`,
  );
  if (res.status !== 200) throw new Error(`events list failed: ${res.status} ${res.text}`);
  return res.body.data;
}

test('a successful login records its authentication and its new API session, without the token', async () => {
  const user = await createUser(s, admin, { password: 'Login-Passw0rd-313!' });
  const sessionId = (await user.client.get('/current-api-session')).body.data.id;
  const [success] = await eventsWhere(`namespace = "authentication" and actorId = "${user.id}"`);
  assert.equal(success?.event_type, 'success');
  assert.equal(success.type, 'updb');
  assert.equal(success.identity_id, user.id);
  assert.equal(success.success, true);
  assert.equal(typeof success.remote_address, 'string');
  const [created] = await eventsWhere(`namespace = "apiSession" and entityId = "${sessionId}"`);
  assert.equal(created?.event_type, 'created');
  assert.equal(created.api_session_id, sessionId);
  assert.notEqual(created.id, sessionId, "`id` is the event's own");
  assert.equal(created.identity_id, user.id);
  assert.equal(created.fully_authenticated, true);
  const text = JSON.stringify([success, created]);
  assert.ok(!text.includes(user.client.token!), 'no token');
  assert.ok(!text.includes('Login-Passw0rd-313!'), 'no password');

  assert.equal((await user.client.delete('/current-api-session')).status, 200);
  const ended = await eventsWhere(`namespace = "apiSession" and entityId = "${sessionId}"`);
  assert.deepEqual(
    ended.map((e) => e.event_type),
    ['created', 'deleted'],
  );
});

test('failed logins record the reason, the identity or the username, and the source address', async () => {
  const user = await createUser(s, admin);
  assertError(await loginFrom('127.0.0.7', user.username, 'Wrong-Passw0rd-1!'), 401, 'INVALID_AUTH');
  assertError(await loginFrom('127.0.0.7', 'nobody-here', 'Wrong-Passw0rd-2!'), 401, 'INVALID_AUTH');
  const fails = await eventsWhere(
    `namespace = "authentication" and eventType = "fail" and timestamp >= datetime(${new Date(Date.now() - 60_000).toISOString()})`,
  );
  const wrong = fails.find((e) => e.username === user.username);
  assert.equal(wrong?.reason, 'invalid password');
  assert.equal(wrong.identity_id, user.id);
  assert.equal(wrong.remote_address, '127.0.0.7');
  assert.equal(wrong.success, false);
  const unknown = fails.find((e) => e.username === 'nobody-here');
  assert.equal(unknown?.reason, 'unknown username');
  assert.equal(unknown.identity_id, '');
  assert.ok(!JSON.stringify(fails).includes('Wrong-Passw0rd'), 'no password, even a wrong one');
});

test('a lockout and a rate-limit refusal are recorded', async () => {
  const policy = await admin.post(
    '/auth-policies',
    authPolicyBody(`lock-${Math.random().toString(36).slice(2, 8)}`, { maxAttempts: 2, lockoutDurationMinutes: 5 }),
  );
  assert.equal(policy.status, 201, policy.text);
  const user = await createUser(s, admin, { identity: { authPolicyId: policy.body.data.id } });
  for (let i = 0; i < 2; i++) await loginFrom('127.0.0.8', user.username, `Wrong-Passw0rd-${i}!`);
  const [lockout] = await eventsWhere(
    `namespace = "authentication" and eventType = "lockout" and actorId = "${user.id}"`,
  );
  assert.equal(lockout?.reason, 'too many failed attempts');
  assert.equal(typeof lockout.until, 'string');

  const victim = await createUser(s, admin);
  let limited = 0;
  for (let i = 0; i < 7; i++)
    if ((await loginFrom('127.0.0.9', victim.username, `Wrong-Passw0rd-${i}!`)).status === 429) limited++;
  assert.ok(limited > 0, 'the account budget ran out');
  const refused = (await eventsWhere(`namespace = "authentication" and eventType = "fail"`)).filter(
    (e) => e.username === victim.username && e.reason === 'rate limited',
  );
  // At most one event per source and username a minute: a flood of refusals is not a flood of writes.
  assert.equal(refused.length, 1);
  assert.equal(refused[0]!.suppressed, 0);
  assert.ok(limited >= 2, 'refusals beyond the first went unrecorded');
  s.clock.advance(61_000);
  admin = await s.admin();
  // Past the window the next refusal is recorded again (the account's budget may have refilled a little).
  let refusedAgain = false;
  for (let i = 0; i < 5 && !refusedAgain; i++)
    refusedAgain = (await loginFrom('127.0.0.9', victim.username, `Wrong-Again-${i}!`)).status === 429;
  assert.ok(refusedAgain);
  const later = (await eventsWhere(`namespace = "authentication" and eventType = "fail"`)).filter(
    (e) => e.username === victim.username && e.reason === 'rate limited',
  );
  assert.equal(later.length, 2);
  assert.equal(later[1]!.suppressed, limited - 1, 'the next one says how many were not recorded');
});

test('the sweep records each idle API session it ends as expired', async () => {
  const id = await createIdentity(admin);
  assert.ok(id);
  const idle = s.client('client');
  await idle.login(ADMIN.username, ADMIN.password);
  const sessionId = (await idle.get('/current-api-session')).body.data.id;
  s.clock.advance(31_000);
  admin = await s.admin();
  assert.equal(await s.sweep(), true);
  const events = await eventsWhere(`namespace = "apiSession" and entityId = "${sessionId}"`);
  assert.deepEqual(
    events.map((e) => e.event_type),
    ['created', 'expired'],
  );
});
