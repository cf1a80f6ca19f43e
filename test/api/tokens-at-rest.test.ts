/**
 * Tokens at rest (docs/decisions.md, "Token storage"): the store and its WAL hold no API-session, session or
 * enrollment token nor any enrollment JWT, yet the APIs show the same tokens on every read, accept them, filter
 * by them, and keep doing so across a restart. A replaced token key ends API sessions and re-keys enrollments;
 * a store from before migration 0006 is converted the same way.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Migration } from 'kysely';
import { loadConfig } from '../../src/daemon/config.js';
import { DB_FILE, startDaemon, type RunningDaemon } from '../../src/daemon/daemon.js';
import { dynamic, openStore } from '../../src/store/db.js';
import { runMigrations } from '../../src/store/migrations/index.js';
import * as m0001 from '../../src/store/migrations/0001-foundation.js';
import * as m0002 from '../../src/store/migrations/0002-services-policies.js';
import * as m0003 from '../../src/store/migrations/0003-enrollments.js';
import * as m0004 from '../../src/store/migrations/0004-cas-session-certs.js';
import * as m0005 from '../../src/store/migrations/0005-access-sessions.js';
import { verifyEnrollmentJwt } from '../../src/pki/index.js';
import {
  ADMIN,
  ApiClient,
  createIdentity,
  createRecord,
  createUser,
  startTestServer,
  storedBytes,
  type TestServer,
} from '../harness/server.js';
import { assertError, filterParam, unique } from '../harness/assert.js';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function assertNoneStored(server: TestServer, secrets: string[], when: string): Promise<Buffer> {
  const stored = await storedBytes(server);
  assert.ok(stored.size > 0);
  for (const [name, bytes] of stored) {
    for (const s of secrets)
      assert.equal(bytes.indexOf(Buffer.from(s, 'utf8')), -1, `${when}: ${name} must not contain ${s.slice(0, 12)}…`);
  }
  return Buffer.concat([...stored.values()]);
}

describe('tokens at rest', () => {
  let server: TestServer;
  let admin: ApiClient;
  before(async () => {
    server = await startTestServer();
    admin = await server.admin();
  });
  after(() => server.close());

  /** A user with Dial access to a service through one router, and a session for it. */
  async function sessionFixture() {
    const u = await createUser(server, admin);
    const s = await createRecord(admin, '/services', { name: unique('svc'), encryptionRequired: true });
    const r = await createRecord(admin, '/edge-routers', { name: unique('er') });
    await createRecord(admin, '/service-policies', {
      name: unique('sp'),
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: [`@${u.id}`],
      serviceRoles: [`@${s}`],
    });
    await createRecord(admin, '/edge-router-policies', {
      name: unique('erp'),
      semantic: 'AnyOf',
      identityRoles: [`@${u.id}`],
      edgeRouterRoles: [`@${r}`],
    });
    await createRecord(admin, '/service-edge-router-policies', {
      name: unique('serp'),
      semantic: 'AnyOf',
      serviceRoles: [`@${s}`],
      edgeRouterRoles: [`@${r}`],
    });
    const created = await u.client.post('/sessions', { serviceId: s });
    assert.equal(created.status, 201, created.text);
    return { user: u, serviceId: s, routerId: r, session: created.body.data };
  }

  test('the store and its WAL hold none of the tokens and JWTs the APIs show, only their hashes', async () => {
    const { user, session, routerId } = await sessionFixture();
    const identity = await admin.post('/identities', {
      name: unique('enr'),
      type: 'User',
      isAdmin: false,
      enrollment: { ott: true, updb: unique('name') },
    });
    assert.equal(identity.status, 201, identity.text);
    const shown = (await admin.get(`/identities/${identity.body.data.id}`)).body.data.enrollment;
    const router = (await admin.get(`/edge-routers/${routerId}`)).body.data;
    const secrets = [
      admin.token!,
      user.client.token!,
      session.token,
      shown.ott.token,
      shown.ott.jwt,
      shown.updb.token,
      shown.updb.jwt,
      router.enrollmentToken,
      router.enrollmentJwt,
    ];
    for (const s of secrets) assert.equal(typeof s, 'string');
    for (const t of [
      admin.token!,
      user.client.token!,
      session.token,
      shown.ott.token,
      shown.updb.token,
      router.enrollmentToken,
    ])
      assert.match(t, UUID_V4);

    let stored = await assertNoneStored(server, secrets, 'before a checkpoint');
    if (server.daemon.store.kind === 'sqlite') {
      server.daemon.store.raw.pragma('wal_checkpoint(TRUNCATE)');
      stored = await assertNoneStored(server, secrets, 'after a checkpoint');
      assert.ok((await storedBytes(server)).has(DB_FILE));
    }
    // What is kept instead: SHA-256 of each token.
    const db = stored;
    for (const t of [admin.token!, session.token, shown.ott.token, router.enrollmentToken])
      assert.notEqual(db.indexOf(Buffer.from(sha256(t))), -1, 'the hash is stored');
    const key = statSync(join(server.dataDir, 'token.key'));
    assert.equal(key.mode & 0o777, 0o600, 'the token key is readable by its owner only');
  });

  test('API-session tokens are shown, accepted and filterable as before', async () => {
    const u = await createUser(server, admin, { api: 'management' });
    const current = await u.client.get('/current-api-session');
    assert.equal(current.status, 200);
    assert.equal(current.body.data.token, u.client.token);
    const id = current.body.data.id;
    assert.equal((await admin.get(`/api-sessions/${id}`)).body.data.token, u.client.token);
    const byToken = await admin.get(`/api-sessions?${filterParam(`token = "${u.client.token}"`)}`);
    assert.equal(byToken.status, 200);
    assert.deepEqual(
      byToken.body.data.map((s: { id: string }) => s.id),
      [id],
    );
    assert.ok(byToken.body.meta.filterableFields.includes('token'));
    const inList = await admin.get(
      `/api-sessions?${filterParam(`token in ["${u.client.token}", "${admin.token}"] and id = "${id}"`)}`,
    );
    assert.deepEqual(
      inList.body.data.map((s: { id: string }) => s.id),
      [id],
    );
    const notEqual = await admin.get(
      `/api-sessions?${filterParam(`token != "${u.client.token}" and identity = "${u.id}"`)}`,
    );
    assert.deepEqual(notEqual.body.data, []);
    // Only equality tests can be answered from a hash.
    assertError(await admin.get(`/api-sessions?${filterParam(`token contains "a"`)}`), 400, 'INVALID_FILTER');
    assertError(await admin.get(`/api-sessions?${filterParam(`token < "a"`)}`), 400, 'INVALID_FILTER');
    // A token that was never issued, or one of another kind, is no API session.
    assert.equal(
      (await u.client.withToken('00000000-0000-4000-8000-000000000000').get('/current-api-session')).status,
      401,
    );
  });

  test('a session shows the same token on a repeated create and on reads, and is found by it', async () => {
    const { user, serviceId, session } = await sessionFixture();
    const again = await user.client.post('/sessions', { serviceId });
    assert.equal(again.status, 201);
    assert.deepEqual([again.body.data.id, again.body.data.token], [session.id, session.token]);
    assert.equal((await user.client.get(`/sessions/${session.id}`)).body.data.token, session.token);
    assert.equal((await admin.get(`/sessions/${session.id}`)).body.data.token, session.token);
    const found = await admin.get(`/sessions?${filterParam(`token = "${session.token}"`)}`);
    assert.deepEqual(
      found.body.data.map((s: { id: string; token: string }) => [s.id, s.token]),
      [[session.id, session.token]],
    );
    // The session token is not an API-session token.
    assert.equal((await user.client.withToken(session.token).get('/current-api-session')).status, 401);
  });

  test('an enrollment shows one token and one JWT on every read; refresh keeps the token with a new JWT', async () => {
    const identityId = await createIdentity(admin);
    const created = await admin.post('/enrollments', {
      method: 'ott',
      identityId,
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.data.id;
    const first = (await admin.get(`/enrollments/${id}`)).body.data;
    const second = (await admin.get(`/enrollments/${id}`)).body.data;
    assert.deepEqual([second.token, second.jwt], [first.token, first.jwt], 'the same JWT, byte for byte');
    const serverCert = server.daemon.pki.serverCertChainPem;
    const claims = await verifyEnrollmentJwt(first.jwt, serverCert);
    assert.deepEqual([claims.jti, claims.sub, claims.em], [first.token, identityId, 'ott']);
    const listed = await admin.get(`/enrollments?${filterParam(`token = "${first.token}"`)}`);
    assert.deepEqual(
      listed.body.data.map((e: { id: string; jwt: string }) => [e.id, e.jwt]),
      [[id, first.jwt]],
    );
    const summary = (await admin.get(`/identities/${identityId}`)).body.data.enrollment.ott;
    assert.deepEqual([summary.id, summary.token, summary.jwt], [id, first.token, first.jwt]);

    const later = new Date(Date.now() + 7_200_000).toISOString();
    assert.equal((await admin.post(`/enrollments/${id}/refresh`, { expiresAt: later })).status, 200);
    const refreshed = (await admin.get(`/enrollments/${id}`)).body.data;
    assert.equal(refreshed.token, first.token);
    assert.notEqual(refreshed.jwt, first.jwt);
    const newClaims = await verifyEnrollmentJwt(refreshed.jwt, serverCert);
    assert.deepEqual([newClaims.jti, newClaims.exp], [first.token, Math.floor(Date.parse(later) / 1000)]);
    assertError(await admin.get(`/enrollments?${filterParam(`token icontains "a"`)}`), 400, 'INVALID_FILTER');
  });
});

/** A controller on a data dir of the test's own, which can be stopped and started again. */
class Controller {
  readonly root = mkdtempSync(join(tmpdir(), 'edgectl-tokens-'));
  readonly dataDir = join(this.root, 'data');
  daemon?: RunningDaemon;

  async start(): Promise<RunningDaemon> {
    const cfg = loadConfig({ flags: { dataDir: this.dataDir, listen: '127.0.0.1:0', logLevel: 'silent' }, env: {} });
    this.daemon = await startDaemon(cfg, { adminCredentials: async () => ADMIN });
    return this.daemon;
  }
  client(api: 'management' | 'client' = 'management'): ApiClient {
    return new ApiClient(this.daemon!.pki.caBundlePem, `${this.daemon!.url}/edge/${api}/v1`);
  }
  async stop(): Promise<void> {
    await this.daemon?.close();
    this.daemon = undefined;
  }
  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.root, { recursive: true, force: true });
  }
}

const updbEnroll = (c: Controller, token: string, password: string) =>
  c.client('client').post(`/enroll/updb?token=${token}`, { password });

test('after a restart tokens keep working and show the same values; a replaced key ends API sessions and re-keys enrollments', async () => {
  const c = new Controller();
  try {
    await c.start();
    const admin = c.client();
    assert.equal((await admin.login(ADMIN.username, ADMIN.password)).status, 200);
    const username = unique('name');
    const created = await admin.post('/identities', {
      name: unique('enr'),
      type: 'User',
      isAdmin: false,
      enrollment: { updb: username },
    });
    const identityId = created.body.data.id;
    const before = (await admin.get(`/identities/${identityId}`)).body.data.enrollment.updb;

    await c.stop();
    await c.start();
    const sameAdmin = c.client().withToken(admin.token);
    const current = await sameAdmin.get('/current-api-session');
    assert.equal(current.status, 200, 'the API session survives the restart');
    assert.equal(current.body.data.token, admin.token);
    const after = (await sameAdmin.get(`/identities/${identityId}`)).body.data.enrollment.updb;
    assert.deepEqual([after.token, after.jwt], [before.token, before.jwt]);

    // A lost key: the store's hashes no longer match what a new key derives.
    await c.stop();
    unlinkSync(join(c.dataDir, 'token.key'));
    await c.start();
    assert.equal(
      (await c.client().withToken(admin.token).get('/current-api-session')).status,
      401,
      'API sessions ended',
    );
    const fresh = c.client();
    await fresh.login(ADMIN.username, ADMIN.password);
    const rekeyed = (await fresh.get(`/identities/${identityId}`)).body.data.enrollment.updb;
    assert.notEqual(rekeyed.token, before.token);
    assert.equal(rekeyed.expiresAt, before.expiresAt, 'the expiry is kept');
    const claims = await verifyEnrollmentJwt(rekeyed.jwt, c.daemon!.pki.serverCertChainPem);
    assert.equal(claims.jti, rekeyed.token);
    assertError(await updbEnroll(c, before.token, 'New-Passw0rd!'), 400, 'INVALID_ENROLLMENT_TOKEN');
    assert.equal((await updbEnroll(c, rekeyed.token, 'New-Passw0rd!')).status, 200);
    assert.equal((await c.client().login(username, 'New-Passw0rd!')).status, 200);
  } finally {
    await c.dispose();
  }
});

test('a token key file that is not a key stops the start without echoing it', async () => {
  const c = new Controller();
  try {
    await c.start();
    await c.stop();
    writeFileSync(join(c.dataDir, 'token.key'), 'not-a-key-secret-ish\n', { mode: 0o600 });
    await assert.rejects(
      c.start(),
      (e: Error) => /token\.key is not a token key/.test(e.message) && !e.message.includes('not-a-key-secret-ish'),
    );
  } finally {
    await c.dispose();
  }
});

test('migration 0006 ends API sessions of a store with clear tokens and re-keys its enrollments at start', async () => {
  const c = new Controller();
  try {
    mkdirSync(c.dataDir, { recursive: true, mode: 0o700 });
    // A store as the previous version left it: clear tokens and JWTs.
    const old = await openStore(join(c.dataDir, DB_FILE), { migrate: false });
    const before0006: Record<string, Migration> = {
      '0001-foundation': m0001,
      '0002-services-policies': m0002,
      '0003-enrollments': m0003,
      '0004-cas-session-certs': m0004,
      '0005-access-sessions': m0005,
    };
    await runMigrations(old.db, before0006);
    const now = new Date().toISOString();
    const base = { createdAt: now, updatedAt: now, tags: '{}', isSystem: 0 };
    await old.db
      .insertInto('identities')
      .values({ ...base, id: 'legacy-id', name: 'legacy', typeId: 'User', authPolicyId: 'default' })
      .execute();
    const oldApiToken = '11111111-1111-4111-8111-111111111111';
    const oldEnrollToken = '22222222-2222-4222-8222-222222222222';
    // A store of the schema before migration 0006: its columns are not the generated interface's.
    await dynamic(old.db)
      .insertInto('api_sessions')
      .values({
        ...base,
        id: 'legacy-session',
        token: oldApiToken,
        identityId: 'legacy-id',
        authenticatorId: 'x',
        lastActivityAt: now,
      })
      .execute();
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    await dynamic(old.db)
      .insertInto('enrollments')
      .values({
        ...base,
        id: 'legacy-enr',
        method: 'updb',
        token: oldEnrollToken,
        identityId: 'legacy-id',
        expiresAt,
        username: 'legacy-user',
        jwt: `x.${oldEnrollToken}.y`,
      })
      .execute();
    await old.close();

    await c.start();
    const admin = c.client();
    await admin.login(ADMIN.username, ADMIN.password);
    assert.equal((await c.client().withToken(oldApiToken).get('/current-api-session')).status, 401);
    assert.equal((await admin.get('/api-sessions/legacy-session')).status, 404, 'the old API session is gone');
    const e = (await admin.get('/enrollments/legacy-enr')).body.data;
    assert.match(e.token, UUID_V4);
    assert.notEqual(e.token, oldEnrollToken);
    assert.equal(e.expiresAt, expiresAt);
    const claims = await verifyEnrollmentJwt(e.jwt, c.daemon!.pki.serverCertChainPem);
    assert.deepEqual([claims.jti, claims.sub, claims.em], [e.token, 'legacy-id', 'updb']);
    assertError(await updbEnroll(c, oldEnrollToken, 'Legacy-Passw0rd!'), 400, 'INVALID_ENROLLMENT_TOKEN');
    assert.equal((await updbEnroll(c, e.token, 'Legacy-Passw0rd!')).status, 200);
    assert.equal((await c.client().login('legacy-user', 'Legacy-Passw0rd!')).status, 200);
  } finally {
    await c.dispose();
  }
});
