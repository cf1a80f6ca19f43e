/**
 * No Argon2id inside a database transaction (docs/decisions.md, "No Argon2id in transactions"): hashPassword
 * refuses an executor that is in a transaction, so every write path that sets a password (admin authenticator
 * create, update and patch, updb enrollment, the default admin at start) must hash before opening its
 * transaction, or it answers 500 here. The first test proves the refusal itself. The test servers hash at a cheap
 * cost (test/harness/server.ts); the last test checks a controller started without one hashes at production's.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { hashPassword, PASSWORD_COST } from '../../src/model/password.js';
import { openStore, withTx } from '../../src/store/db.js';
import { ADMIN, createIdentity, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { assertFieldError, unique } from '../harness/assert.js';

let server: TestServer;
let admin: ApiClient;

before(async () => {
  server = await startTestServer();
  admin = await server.admin();
});
after(() => server.close());

test('hashPassword refuses to run inside a transaction, and runs outside one', async () => {
  const store = await openStore(':memory:');
  try {
    await assert.rejects(
      withTx(store.db, (trx) => hashPassword('some-Passw0rd!', trx)),
      /must not run inside a database transaction/,
    );
    assert.match(await hashPassword('some-Passw0rd!', store.db), /^\$argon2id\$/);
  } finally {
    await store.close();
  }
});

test('the default admin, created at start, logs in', async () => {
  const res = await server.client('management').login(ADMIN.username, ADMIN.password);
  assert.equal(res.status, 200);
});

test('an admin creates, updates and patches a password authenticator; each new password logs in', async () => {
  const username = unique('user');
  const identityId = await createIdentity(admin, { name: username });
  const created = await admin.post('/authenticators', {
    identityId,
    method: 'updb',
    username,
    password: 'first-Passw0rd!',
  });
  assert.equal(created.status, 201, created.text);
  const id = created.body.data.id as string;
  assert.equal((await server.client().login(username, 'first-Passw0rd!')).status, 200);

  const put = await admin.put(`/authenticators/${id}`, { username, password: 'second-Passw0rd!' });
  assert.equal(put.status, 200, put.text);
  assert.equal((await server.client().login(username, 'second-Passw0rd!')).status, 200);

  const patched = await admin.patch(`/authenticators/${id}`, { password: 'third-Passw0rd!' });
  assert.equal(patched.status, 200, patched.text);
  assert.equal((await server.client().login(username, 'third-Passw0rd!')).status, 200);
  assert.equal((await server.client().login(username, 'second-Passw0rd!')).status, 401);
});

test('the password rules still apply to a password hashed before the transaction, and refuse without a partial write', async () => {
  const username = unique('user');
  const identityId = await createIdentity(admin, { name: username });
  assertFieldError(
    await admin.post('/authenticators', { identityId, method: 'updb', username, password: 'abc' }),
    'password',
  );
  const listed = await admin.get(`/identities/${identityId}/authenticators`);
  assert.equal(listed.body.data.length, 0);
});

test('updb enrollment hashes before consuming the token', async () => {
  const username = unique('enrollee');
  const identityId = await createIdentity(admin, { enrollment: { updb: username } });
  const detail = await admin.get(`/identities/${identityId}`);
  const token = detail.body.data.enrollment.updb.token as string;
  const res = await server.request('POST', `/edge/client/v1/enroll/updb?token=${token}`, {
    body: { password: 'enrolled-Passw0rd!' },
  });
  assert.equal(res.status, 200, res.text);
  assert.equal((await server.client().login(username, 'enrolled-Passw0rd!')).status, 200);
});

/** The PHC prefix of an Argon2id hash at OWASP's recommended minimum: m=19 MiB, t=2, p=1. */
const PRODUCTION_PHC = /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/;

test('without a cost given, passwords are hashed at OWASP’s minimum (m=19 MiB, t=2, p=1), the default admin’s too', async () => {
  assert.deepEqual(PASSWORD_COST, { memoryCost: 19456, timeCost: 2 });
  const store = await openStore(':memory:');
  try {
    assert.match(await hashPassword('some-Passw0rd!', store.db), PRODUCTION_PHC);
  } finally {
    await store.close();
  }
  const production = await startTestServer({ passwordCost: 'production' });
  try {
    const admin = await production.admin();
    const username = unique('user');
    const identityId = await createIdentity(admin, { name: username });
    const created = await admin.post('/authenticators', {
      identityId,
      method: 'updb',
      username,
      password: 'first-Passw0rd!',
    });
    assert.equal(created.status, 201, created.text);
    assert.equal((await production.client().login(username, 'first-Passw0rd!')).status, 200);
    const { rows } = await sql<{
      username: string;
      passwordHash: string;
    }>`select username, "passwordHash" from authenticators
      where method = 'updb'`.execute(production.daemon.store.db);
    assert.deepEqual(rows.map((r) => r.username).sort(), [ADMIN.username, username].sort());
    for (const r of rows) assert.match(r.passwordHash, PRODUCTION_PHC, r.username);
  } finally {
    await production.close();
  }
});
