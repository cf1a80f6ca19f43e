/**
 * Events of what the generic CRUD does not record (issue #24, "what is recorded"): sessions created and deleted
 * (by their owner, an admin, with their API session at logout or idle expiry, with their service), API sessions
 * expired; enrollments used and refreshed; MFA enrolled, verified, recovery codes regenerated, removed;
 * authenticators re-enrolled; identity service configs and trace; database snapshots and integrity checks. Each
 * is produced by its operation, written with the change, names who acted, and none carries a secret: the scan at
 * the end looks for every password, token, JWT, TOTP secret and code and recovery code the operations used.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { generate } from 'otplib';
import {
  createIdentity,
  createRecord,
  createUser,
  dialableService,
  startTestServer,
  type ApiClient,
  type TestServer,
} from '../harness/server.js';
import { issueClientCert, newRootCa } from '../harness/third-party-pki.js';

type Ev = Record<string, any>;

let s: TestServer;
let admin: ApiClient;
let adminId: string;
/** Every secret the operations used; none may appear in any event. */
const secrets: string[] = [];
const codes: string[] = [];

before(async () => {
  s = await startTestServer({ clock: 'frozen', backgroundSweep: false });
  admin = await s.admin();
  adminId = (await admin.get('/current-identity')).body.data.id;
  secrets.push(admin.token!);
});
after(() => s?.close());

async function eventsWhere(filter: string): Promise<Ev[]> {
  const res = await admin.get(
    `/events?filter=${encodeURIComponent(filter)}&sort=${encodeURIComponent('timestamp asc')}&limit=500`,
  );
  if (res.status !== 200) throw new Error(`events list failed: ${res.status} ${res.text}`);
  return res.body.data;
}

/** A client user with a new session of a dialable service (fixture: no assertions). */
async function userWithSession(): Promise<{
  user: Awaited<ReturnType<typeof createUser>>;
  service: string;
  id: string;
}> {
  const user = await createUser(s, admin, { password: `Sess-Passw0rd-${secrets.length}!` });
  const service = await dialableService(admin, user.id);
  const res = await user.client.post('/sessions', { serviceId: service, type: 'Dial' });
  if (res.status !== 201) throw new Error(`session create failed: ${res.status} ${res.text}`);
  secrets.push(user.password, user.client.token!, res.body.data.token);
  return { user, service, id: res.body.data.id };
}

test('a new session records `created` with its session, API session, identity and service; a repeat records nothing', async () => {
  const { user, service, id } = await userWithSession();
  const again = await user.client.post('/sessions', { serviceId: service, type: 'Dial' });
  assert.equal(again.status, 201);
  assert.equal(again.body.data.id, id, 'the same session');
  const events = await eventsWhere(`namespace = "session" and entityId = "${id}"`);
  assert.equal(events.length, 1, 'one event: the repeat answered the existing session');
  const [e] = events as [Ev];
  assert.equal(e.event_type, 'created');
  assert.equal(e.version, 1);
  assert.equal(e.session_id, id);
  assert.equal(e.session_type, 'Dial');
  assert.equal(e.identity_id, user.id);
  assert.equal(e.service_id, service);
  assert.equal(e.api_session_id, (await user.client.get('/current-api-session')).body.data.id);
  assert.equal(e.token, undefined, 'never the token');
});

test('sessions deleted by their owner, by an admin, with their service, at logout and at idle expiry record `deleted`', async () => {
  const own = await userWithSession();
  assert.equal((await own.user.client.delete(`/sessions/${own.id}`)).status, 200);
  const byAdmin = await userWithSession();
  assert.equal((await admin.delete(`/sessions/${byAdmin.id}`)).status, 200);
  const withService = await userWithSession();
  assert.equal((await admin.delete(`/services/${withService.service}`)).status, 200);
  const atLogout = await userWithSession();
  const apiSessionId = (await atLogout.user.client.get('/current-api-session')).body.data.id;
  assert.equal((await atLogout.user.client.delete('/current-api-session')).status, 200);
  const withIdentity = await userWithSession();
  const identityApiSession = (await withIdentity.user.client.get('/current-api-session')).body.data.id;
  assert.equal((await admin.delete(`/identities/${withIdentity.user.id}`)).status, 200);
  const expiring = await userWithSession();
  const expiringApiSession = (await expiring.user.client.get('/current-api-session')).body.data.id;
  s.clock.advance(31 * 60_000);
  admin = await s.admin();
  secrets.push(admin.token!);
  await s.sweep();

  const deleted = async (id: string) => {
    const [e, ...more] = await eventsWhere(`namespace = "session" and entityId = "${id}" and eventType = "deleted"`);
    assert.equal(more.length, 0, `one deleted event for ${id}`);
    return e!;
  };
  assert.equal((await deleted(own.id)).reason, 'deleted');
  assert.equal((await deleted(own.id)).author_id, undefined, 'the owner itself: no other author');
  const adminDeleted = await deleted(byAdmin.id);
  assert.equal(adminDeleted.reason, 'deleted');
  assert.equal(adminDeleted.author_id, adminId, 'the admin who deleted it');
  assert.equal((await deleted(withService.id)).reason, 'service-deleted');
  assert.equal((await deleted(atLogout.id)).reason, 'api-session-deleted');
  assert.equal((await deleted(expiring.id)).reason, 'api-session-expired');
  assert.equal((await deleted(withIdentity.id)).reason, 'identity-deleted', "once, as the identity's");
  const [identityGone] = await eventsWhere(
    `namespace = "apiSession" and entityId = "${identityApiSession}" and eventType = "deleted"`,
  );
  assert.ok(identityGone, "the identity's API session deleted with it");
  const [logout] = await eventsWhere(
    `namespace = "apiSession" and entityId = "${apiSessionId}" and eventType = "deleted"`,
  );
  assert.ok(logout, 'the API session deleted at logout');
  const [expired] = await eventsWhere(
    `namespace = "apiSession" and entityId = "${expiringApiSession}" and eventType = "expired"`,
  );
  assert.ok(expired, 'the API session expired by the sweep');
});

test('MFA enrolled, verified, recovery codes regenerated and removed by its owner are recorded, never a code', async () => {
  const user = await createUser(s, admin, { password: 'Mfa-Passw0rd-0001!' });
  secrets.push(user.password, user.client.token!);
  assert.equal((await user.client.post('/current-identity/mfa')).status, 201);
  const mfa = (await user.client.get('/current-identity/mfa')).body.data;
  const secret = new URL(mfa.provisioningUrl).searchParams.get('secret')!;
  secrets.push(secret, ...(mfa.recoveryCodes as string[]));
  const code = () => generate({ secret, epoch: Math.floor(s.clock.now().getTime() / 1000) });
  const first = await code();
  codes.push(first);
  assert.equal((await user.client.post('/current-identity/mfa/verify', { code: first })).status, 200);
  s.clock.advance(30_000);
  const second = await code();
  codes.push(second);
  const regenerated = await user.client.post('/current-identity/mfa/recovery-codes', { code: second });
  assert.equal(regenerated.status, 200, regenerated.text);
  secrets.push(...((regenerated.body.data?.recoveryCodes as string[] | undefined) ?? []));
  s.clock.advance(30_000);
  const third = await code();
  codes.push(third);
  const removed = await user.client.delete('/current-identity/mfa', { headers: { 'mfa-validation-code': third } });
  assert.equal(removed.status, 200, removed.text);

  const events = await eventsWhere(`entityType = "mfas" and entityId = "${user.id}"`);
  assert.deepEqual(
    events.map((e) => [e.eventType, e.metadata.operation]),
    [
      ['created', 'mfa-enrolled'],
      ['updated', 'mfa-verified'],
      ['updated', 'mfa-recovery-codes-regenerated'],
      ['deleted', 'mfa-removed'],
    ],
  );
  for (const e of events) assert.equal(e.metadata.author.id, user.id, 'the owner acted');
  assert.deepEqual(events[1]!.changes, { isVerified: { before: false, after: true } });
  assert.deepEqual(events[2]!.changes, { recoveryCodes: { redacted: true } }, 'that they changed, not what they are');
});

test('an enrollment used (updb) and refreshed are recorded with its identity, never its token or JWT', async () => {
  const username = `enr-${Math.random().toString(36).slice(2, 8)}`;
  const identityId = await createIdentity(admin, { enrollment: { updb: username } });
  const ott = await createIdentity(admin, { enrollment: { ott: true } });
  const shown = (await admin.get(`/identities/${identityId}`)).body.data.enrollment.updb;
  const ottShown = (await admin.get(`/identities/${ott}`)).body.data.enrollment.ott;
  secrets.push(shown.token, shown.jwt, ottShown.token, ottShown.jwt);
  const refreshed = await admin.post(`/enrollments/${ottShown.id}/refresh`, { expiresAt: s.clock.in(3_600_000) });
  assert.equal(refreshed.status, 200, refreshed.text);
  const jwt = (await admin.get(`/enrollments/${ottShown.id}`)).body.data.jwt;
  secrets.push(jwt);
  const used = await s.request('POST', `/edge/client/v1/enroll/updb?token=${shown.token}`, {
    body: { password: 'Enr-Passw0rd-0001!' },
  });
  assert.equal(used.status, 200, used.text);
  secrets.push('Enr-Passw0rd-0001!');

  const [gone] = await eventsWhere(`entityType = "enrollments" and entityId = "${shown.id}" and eventType = "deleted"`);
  assert.equal(gone?.metadata.operation, 'enrollment-used');
  assert.equal(gone.initialState.identityId, identityId);
  assert.equal(gone.initialState.method, 'updb');
  assert.equal(gone.metadata.source.type, 'rest');
  const [authenticator] = await eventsWhere(
    `entityType = "authenticators" and eventType = "created" and actorId = null and entityId != null`,
  ).then((es) => es.filter((e) => e.finalState?.identityId === identityId));
  assert.ok(authenticator, 'the authenticator it made');
  const [update] = await eventsWhere(
    `entityType = "enrollments" and entityId = "${ottShown.id}" and eventType = "updated"`,
  );
  assert.ok(update?.changes.expiresAt, 'the refresh: a new expiry');
  assert.equal(update.metadata.author.id, adminId);
});

test('an authenticator re-enrolled, service configs and a trace are recorded as the operations they are', async () => {
  const user = await createUser(s, admin, { password: 'Re-Passw0rd-0001!' });
  secrets.push(user.password, user.client.token!);
  const auth = (await admin.get(`/authenticators?filter=${encodeURIComponent(`identityId = "${user.id}"`)}`)).body
    .data[0];
  const re = await admin.post(`/authenticators/${auth.id}/re-enroll`, { expiresAt: s.clock.in(3_600_000) });
  assert.equal(re.status, 201, re.text);
  const [deleted] = await eventsWhere(
    `entityType = "authenticators" and entityId = "${auth.id}" and eventType = "deleted"`,
  );
  assert.equal(deleted?.metadata.operation, 'authenticator-re-enrolled');
  assert.equal(deleted.metadata.author.id, adminId);
  const [made] = await eventsWhere(`entityType = "enrollments" and entityId = "${re.body.data.id}"`);
  assert.equal(made?.eventType, 'created');

  const type = await createRecord(admin, '/config-types', { name: `ct-${Math.random().toString(36).slice(2, 8)}` });
  const config = await createRecord(admin, '/configs', { name: `c-${type}`, configTypeId: type, data: { port: 1 } });
  const service = await dialableService(admin, user.id);
  assert.equal(
    (await admin.post(`/identities/${user.id}/service-configs`, [{ serviceId: service, configId: config }])).status,
    200,
  );
  assert.equal((await admin.delete(`/identities/${user.id}/service-configs`)).status, 200);
  const assigned = await eventsWhere(
    `entityType = "identities" and entityId = "${user.id}" and eventType = "updated"`,
  ).then((es) => es.filter((e) => e.metadata.operation === 'identity-service-configs'));
  assert.deepEqual(
    assigned.map((e) => e.finalState.serviceConfigs),
    [[{ serviceId: service, configId: config }], []],
  );

  assert.equal((await admin.put(`/identities/${user.id}/trace`, { enabled: true, duration: '5m' })).status, 200);
  const [trace] = await eventsWhere(
    `entityType = "identities" and entityId = "${user.id}" and eventType = "updated"`,
  ).then((es) => es.filter((e) => e.metadata.operation === 'identity-trace'));
  assert.equal(trace?.finalState.tracing.until, s.clock.in(5 * 60_000));
});

test('a CA verified is recorded as the operation it is, never a key', async () => {
  const ca = await newRootCa(`events root ${Math.random().toString(36).slice(2, 8)}`);
  secrets.push(ca.keyPem);
  const id = await createRecord(admin, '/cas', {
    name: `ca-${Math.random().toString(36).slice(2, 8)}`,
    certPem: ca.certPem,
    isAuthEnabled: true,
    isAutoCaEnrollmentEnabled: false,
    isOttCaEnrollmentEnabled: false,
    identityRoles: [],
  });
  const proof = await issueClientCert(ca, (await admin.get(`/cas/${id}`)).body.data.verificationToken);
  secrets.push(proof.keyPem);
  const verified = await admin.post(`/cas/${id}/verify`, undefined, { raw: proof.certPem, contentType: 'text/plain' });
  assert.equal(verified.status, 200, verified.text);
  const [e] = await eventsWhere(`entityType = "cas" and entityId = "${id}" and eventType = "updated"`);
  assert.equal(e?.metadata.operation, 'ca-verified');
  assert.deepEqual(e.changes.isVerified, { before: false, after: true });
  assert.equal(e.metadata.author.id, adminId);
});

test('a database snapshot and an integrity check are recorded with who asked', async () => {
  assert.equal((await admin.post('/database/snapshot')).status, 200);
  assert.equal((await admin.post('/database/check-data-integrity')).status, 202);
  for (let i = 0; i < 400 && (await admin.get('/database/data-integrity-results')).body.data.inProgress; i++)
    await new Promise((r) => setTimeout(r, 25));
  const events = await eventsWhere('namespace = "database"');
  const snapshot = events.find((e) => e.event_type === 'snapshot');
  assert.equal(snapshot?.author_id, adminId);
  assert.equal(snapshot.source, 'rest');
  assert.equal(typeof snapshot.path, 'string');
  let check = events.find((e) => e.event_type === 'integrity-check');
  for (let i = 0; i < 40 && !check; i++) {
    await new Promise((r) => setTimeout(r, 25));
    check = (await eventsWhere('namespace = "database"')).find((e) => e.event_type === 'integrity-check');
  }
  assert.equal(check?.author_id, adminId);
  assert.equal(check.findings, 0);
  assert.equal(check.error, '');
});

test('no secret of these operations appears in any event', async () => {
  const events: Ev[] = [];
  for (let offset = 0; ; offset += 500) {
    const res = await admin.get(`/events?limit=500&offset=${offset}`);
    assert.equal(res.status, 200, res.text);
    events.push(...res.body.data);
    if (events.length >= res.body.meta.pagination.totalCount) break;
  }
  const text = JSON.stringify(events);
  assert.ok(secrets.length > 20, 'the secrets were collected');
  for (const secret of secrets.filter((x) => typeof x === 'string' && x !== ''))
    assert.ok(!text.includes(secret), `${secret.slice(0, 12)}… found in an event`);
  for (const c of codes) assert.doesNotMatch(text, new RegExp(`(^|[^0-9a-f])${c}([^0-9a-f]|$)`), 'a TOTP code');
  assert.doesNotMatch(text, /\$argon2/, 'a password hash');
  assert.doesNotMatch(text, /PRIVATE KEY/, 'a private key');
});
