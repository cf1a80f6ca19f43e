/**
 * Clients' posture is kept in the shared store (docs/design.md, "Several controllers"): what a client reported
 * to one replica, and an MFA pass made on one, decide its session creates on another at once, even where the
 * other had already cached the posture it held before; failed service requests show on every replica; and a
 * replica started later (a restart) finds all of it. Two controllers run in this process on one PostgreSQL
 * database, the second sharing the first one's PKI and token key.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generate } from 'otplib';
import { assertError } from '../harness/assert.js';
import { freshDatabase, postgresSkip } from '../harness/pg.js';
import {
  createPostureCheck,
  createUser,
  dialableService,
  startTestServer,
  type ApiClient,
  type TestServer,
} from '../harness/server.js';

const skip = await postgresSkip();

describe('posture across replicas over one PostgreSQL database', { skip }, () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let a: TestServer;
  let b: TestServer;
  let adminA: ApiClient;
  let adminB: ApiClient;

  before(async () => {
    database = await freshDatabase();
    a = await startTestServer({ db: database.url });
    b = await startTestServer({ db: database.url });
    adminA = await a.admin();
    adminB = await b.admin();
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await database?.drop();
  });

  /** A client of `server` holding the token of `c` (made on either replica). */
  const on = (server: TestServer, c: ApiClient): ApiClient => server.client('client').withToken(c.token);

  /** A user granted one service by a Dial policy carrying the check, with a router to dial it through. */
  async function guardedService(check: string) {
    const user = await createUser(a, adminA, { api: 'client' });
    const service = await dialableService(adminA, user.id, [check]);
    const dial = (server: TestServer) =>
      on(server, user.client).post('/sessions', { serviceId: service, type: 'Dial' });
    return { user, service, dial };
  }

  test('posture reported on one replica is honoured by a session create on the other', async () => {
    const os = await createPostureCheck(adminA, 'OS', { operatingSystems: [{ type: 'Linux', versions: ['>=5.0.0'] }] });
    const { user, dial } = await guardedService(os);
    // Refused on B first, so that B has read (and cached) the posture the identity had then: none.
    assertError(await dial(b), 409, 'INVALID_POSTURE');
    assertError(await dial(b), 409, 'INVALID_POSTURE');

    const report = await on(a, user.client).post('/posture-response', {
      id: os,
      typeId: 'OS',
      type: 'Linux',
      version: '6.1.0',
    });
    assert.equal(report.status, 201, report.text);
    const created = await dial(b);
    assert.equal(created.status, 201, created.text);

    // Both replicas show what the client reported and what B refused.
    const data = await adminB.get(`/identities/${user.id}/posture-data`);
    assert.equal(data.body.data.os.type, 'Linux');
    const failed = await adminA.get(`/identities/${user.id}/failed-service-requests`);
    assert.equal(failed.body.data.length, 2, failed.text);

    // A report that no longer passes, made on B, removes the session and is refused on A.
    const worse = await on(b, user.client).post('/posture-response', {
      id: os,
      typeId: 'OS',
      type: 'Linux',
      version: '4.0.0',
    });
    assert.equal(worse.status, 201, worse.text);
    assertError(await on(a, user.client).get(`/sessions/${created.body.data.id}`), 404, 'NOT_FOUND');
    assertError(await dial(a), 409, 'INVALID_POSTURE');
  });

  test('an MFA pass recorded on one replica counts on the other; MFA removed on that one counts on the first', async () => {
    const mfa = await createPostureCheck(adminA, 'MFA', {});
    const { user, dial } = await guardedService(mfa);
    assertError(await dial(b), 409, 'INVALID_POSTURE');
    assertError(await dial(a), 409, 'INVALID_POSTURE');

    const client = on(a, user.client);
    assert.equal((await client.post('/current-identity/mfa')).status, 201);
    const detail = (await client.get('/current-identity/mfa')).body.data;
    const secret = new URL(detail.provisioningUrl).searchParams.get('secret')!;
    const verified = await client.post('/current-identity/mfa/verify', { code: await generate({ secret }) });
    assert.equal(verified.status, 200, verified.text);

    const onB = await dial(b);
    assert.equal(onB.status, 201, onB.text);
    const onA = await dial(a);
    assert.equal(onA.status, 201, onA.text);
    const apiSessionId = (await client.get('/current-api-session')).body.data.id as string;
    const sessions = (await adminB.get(`/identities/${user.id}/posture-data`)).body.data.apiSessionPostureData;
    assert.equal(sessions[apiSessionId]?.mfa.passedMfa, true, JSON.stringify(sessions));

    // An admin removes the MFA on B: A, which has the pass cached, refuses at once, and the sessions went.
    assert.equal((await adminB.delete(`/identities/${user.id}/mfa`)).status, 200);
    assertError(await dial(a), 409, 'INVALID_POSTURE');
    assertError(await on(a, user.client).get(`/sessions/${onA.body.data.id}`), 404, 'NOT_FOUND');
    assertError(await on(a, user.client).get(`/sessions/${onB.body.data.id}`), 404, 'NOT_FOUND');
  });

  test('a replica started afterwards (a restart) finds the posture the others were told', async () => {
    const os = await createPostureCheck(adminA, 'OS', { operatingSystems: [{ type: 'Linux' }] });
    const { user, dial } = await guardedService(os);
    const report = await on(a, user.client).post('/posture-response', {
      id: os,
      typeId: 'OS',
      type: 'Linux',
      version: '6.1.0',
    });
    assert.equal(report.status, 201, report.text);
    const c = await startTestServer({ db: database.url });
    try {
      const created = await dial(c);
      assert.equal(created.status, 201, created.text);
    } finally {
      await c.close();
    }
  });
});
