/**
 * Several controllers on one PostgreSQL database serve one network: what one replica commits, another answers
 * from before its own caches; a revocation on one is refused on the others as soon as it is answered; the
 * lockout count and one-time codes hold across them. Three controllers run in this process on one database
 * (each its own data dir; the PKI and token key the first one made are shared through the database).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generate } from 'otplib';
import { verificationCounts } from '../../src/model/password.js';
import { accessCacheStats } from '../../src/model/access/engine.js';
import { assertError, unique } from '../harness/assert.js';
import { authPolicyBody } from '../harness/bodies.js';
import { freshDatabase, postgresSkip } from '../harness/pg.js';
import {
  createIdentity,
  createRecord,
  createUser,
  startTestServer,
  type ApiClient,
  type TestServer,
  dialableService,
} from '../harness/server.js';

const skip = await postgresSkip();

/** The login rate limits are each replica's own: out of the way of the tests of the shared count. */
const GENEROUS = `edge:
  api:
    rateLimit:
      auth:
        perSource: { burst: 10000, perMinute: 10000 }
        failuresPerSource: { burst: 10000, perMinute: 10000 }
        failuresPerAccount: { burst: 10000, perMinute: 10000 }
`;

describe('replicas over one PostgreSQL database', { skip }, () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let replicas: TestServer[] = [];
  let admins: ApiClient[] = [];

  before(async () => {
    database = await freshDatabase();
    const first = await startTestServer({ db: database.url, yaml: GENEROUS });
    const others = await Promise.all([1, 2].map(() => startTestServer({ db: database.url, yaml: GENEROUS })));
    replicas = [first, ...others];
    admins = await Promise.all(replicas.map((r) => r.admin()));
  });
  after(async () => {
    for (const r of replicas) await r.close();
    await database?.drop();
  });

  /** A client of replica `i` holding the token of `c` (made on any replica). */
  const on = (i: number, c: ApiClient, api: 'management' | 'client' = 'client'): ApiClient =>
    replicas[i]!.client(api).withToken(c.token);
  /** The ids of the services a client lists through replica `i`, in the order given. */
  const servicesSeen = async (i: number, c: ApiClient): Promise<string[]> =>
    ((await on(i, c).get('/services')).body.data as { id: string }[]).map((s) => s.id);

  test('an API session made on one replica works on every other', async () => {
    const u = await createUser(replicas[0]!, admins[0]!);
    for (let i = 0; i < replicas.length; i++) {
      const res = await on(i, u.client).get('/current-identity');
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.id, u.id);
    }
  });

  /** The issue's check is 10,000 trials (`EDGECTL_REVOCATION_TRIALS=10000`); the suite runs 200. */
  const TRIALS = Number(process.env.EDGECTL_REVOCATION_TRIALS ?? 200);
  test(`an API session ended on one replica is refused on the others at once (${TRIALS} trials)`, async () => {
    const u = await createUser(replicas[0]!, admins[0]!);
    for (let trial = 0; trial < TRIALS; trial++) {
      const c = replicas[trial % 3]!.client('client');
      assert.equal((await c.login(u.username, u.password)).status, 200);
      const other = (trial + 1) % 3;
      // Warm the other replica's caches with the session (the service list is answered from caches alone).
      assert.equal((await on(other, c).get('/services')).status, 200);
      assert.equal((await on(other, c).get('/services')).status, 200);
      assert.equal((await c.delete('/current-api-session')).status, 200);
      assertError(await on(other, c).get('/services'), 401, 'UNAUTHORIZED');
    }
  });

  test('a disabled or deleted identity is refused on the other replicas at once', async () => {
    const u = await createUser(replicas[0]!, admins[0]!);
    assert.equal((await on(1, u.client).get('/services')).status, 200);
    assert.equal((await admins[2]!.post(`/identities/${u.id}/disable`, { durationMinutes: 0 })).status, 200);
    assertError(await on(1, u.client).get('/services'), 401, 'UNAUTHORIZED');
    const v = await createUser(replicas[0]!, admins[0]!);
    assert.equal((await on(2, v.client).get('/services')).status, 200);
    assert.equal((await admins[1]!.delete(`/identities/${v.id}`)).status, 200);
    assertError(await on(2, v.client).get('/services'), 401, 'UNAUTHORIZED');
  });

  test('a policy removed on one replica takes its service away on the others at once', async () => {
    const tag = unique('rep');
    const u = await createUser(replicas[0]!, admins[0]!, { identity: { roleAttributes: [tag] } });
    const service = await createRecord(admins[0]!, '/services', { name: unique('svc'), encryptionRequired: true });
    const policy = await createRecord(admins[0]!, '/service-policies', {
      name: unique('sp'),
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: [`#${tag}`],
      serviceRoles: [`@${service}`],
    });
    const listed = (i: number) => servicesSeen(i, u.client);
    assert.deepEqual(await listed(1), [service]);
    assert.deepEqual(await listed(2), [service]);
    assert.equal((await admins[0]!.delete(`/service-policies/${policy}`)).status, 200);
    assert.deepEqual(await listed(1), []);
    assert.deepEqual(await listed(2), []);
    const refused = await on(1, u.client).post('/sessions', { serviceId: service });
    assert.equal(refused.status, 404, refused.text);
  });

  test('a service created on one replica is revised into the others’ caches, not recomputed', async () => {
    const tag = unique('rev');
    const u = await createUser(replicas[0]!, admins[0]!, { identity: { roleAttributes: [tag] } });
    await createRecord(admins[0]!, '/service-policies', {
      name: unique('sp'),
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: [`#${tag}`],
      serviceRoles: [`#${tag}`],
    });
    const first = await createRecord(admins[0]!, '/services', {
      name: unique('svc'),
      encryptionRequired: true,
      roleAttributes: [tag],
    });
    const listed = async (i: number) => (await servicesSeen(i, u.client)).sort();
    assert.deepEqual(await listed(1), [first]);
    const misses = () =>
      Object.fromEntries(
        accessCacheStats(replicas[1]!.daemon.ctx)
          .filter((c) => c.cache === 'services' || c.cache === 'grants')
          .map((c) => [c.cache, c.misses]),
      );
    const before = misses();
    // Written on the first replica: the second learns what changed from the stored journal (migration 0017).
    const second = await createRecord(admins[0]!, '/services', {
      name: unique('svc'),
      encryptionRequired: true,
      roleAttributes: [tag],
    });
    assert.deepEqual(await listed(1), [first, second].sort());
    assert.deepEqual(misses(), before, 'the catalog and the grants were revised, not read again');
  });

  test('service and service policy writes on one replica revise the service index of the others', async () => {
    const tag = unique('idx');
    const u = await createUser(replicas[0]!, admins[0]!, { identity: { roleAttributes: [tag] } });
    const svc = (attrs: string[]) =>
      createRecord(admins[0]!, '/services', { name: unique('svc'), encryptionRequired: true, roleAttributes: attrs });
    const first = await svc([tag]);
    await createRecord(admins[0]!, '/service-policies', {
      name: unique('sp'),
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: [`#${tag}`],
      serviceRoles: [`#${tag}`],
    });
    const listed = async (i: number) => (await servicesSeen(i, u.client)).sort();
    assert.deepEqual(await listed(1), [first]);
    const builds = () => accessCacheStats(replicas[1]!.daemon.ctx).find((c) => c.cache === 'serviceIndex')!.misses;
    const before = builds();
    // Written on the first replica; the second revises its index from the stored notes.
    const second = await svc([]);
    const policy = await createRecord(admins[0]!, '/service-policies', {
      name: unique('sp'),
      type: 'Bind',
      semantic: 'AllOf',
      identityRoles: [`#${tag}`],
      serviceRoles: [`#${tag}`, `#${tag}-b`],
    });
    assert.deepEqual(await listed(1), [first]);
    assert.equal((await admins[0]!.patch(`/services/${second}`, { roleAttributes: [tag, `${tag}-b`] })).status, 200);
    assert.deepEqual(await listed(1), [first, second].sort(), 'the attribute change reached the other replica');
    assert.equal((await admins[0]!.patch(`/service-policies/${policy}`, { serviceRoles: [`@${first}`] })).status, 200);
    const mine = (await on(1, u.client).get('/services')).body.data as { id: string; permissions: string[] }[];
    assert.deepEqual(
      Object.fromEntries(mine.map((s) => [s.id, [...s.permissions].sort()])),
      { [first]: ['Bind', 'Dial'], [second]: ['Dial'] },
      'the policy patch reached the other replica',
    );
    assert.equal(builds(), before, 'revised from the notes, not read again');
  });

  test('a session asked for again on another replica is the same session', async () => {
    const u = await createUser(replicas[0]!, admins[0]!);
    const service = await dialableService(admins[0]!, u.id);
    const made = await on(0, u.client).post('/sessions', { serviceId: service });
    assert.equal(made.status, 201, made.text);
    for (const i of [1, 2, 0]) {
      const again = await on(i, u.client).post('/sessions', { serviceId: service });
      assert.equal(again.status, 201, again.text);
      assert.equal(again.body.data.id, made.body.data.id, `replica ${i} answers the same session`);
      assert.equal(again.body.data.token, made.body.data.token);
    }
  });

  test('listings on one replica show what another created, on the next request', async () => {
    const name = unique('seen');
    const search = `/identities?filter=${encodeURIComponent(`name contains "${name}"`)}`;
    assert.equal((await admins[1]!.get(search)).body.data.length, 0);
    await createIdentity(admins[0]!, { name });
    const res = await admins[1]!.get(search);
    assert.deepEqual(
      (res.body.data as { name: string }[]).map((r) => r.name),
      [name],
    );
  });

  test('a session listing on one replica shows a session created through another', async () => {
    // New sessions move no change counter (migration 0015): the listing must not be answered from a kept page.
    const u = await createUser(replicas[0]!, admins[0]!);
    const service = await dialableService(admins[0]!, u.id);
    const mine = `/sessions?filter=${encodeURIComponent(`identity = "${u.id}"`)}`;
    for (let i = 0; i < 2; i++) assert.equal((await admins[1]!.get(mine)).body.meta.pagination.totalCount, 0);
    const made = await on(0, u.client).post('/sessions', { serviceId: service });
    assert.equal(made.status, 201, made.text);
    const listed = await admins[1]!.get(mine);
    assert.deepEqual(
      (listed.body.data as { id: string }[]).map((s) => s.id),
      [made.body.data.id],
    );
  });

  test('a TOTP code sent to two replicas at once is accepted by one of them only', async () => {
    const u = await createUser(replicas[0]!, admins[0]!);
    assert.equal((await u.client.post('/current-identity/mfa')).status, 201);
    const d = (await u.client.get('/current-identity/mfa')).body.data;
    const secret = new URL(d.provisioningUrl).searchParams.get('secret')!;
    const now = Math.floor(Date.now() / 1000);
    assert.equal(
      (await u.client.post('/current-identity/mfa/verify', { code: await generate({ secret, epoch: now }) })).status,
      200,
    );
    // The next step's code is within the accepted window and not used yet.
    const code = await generate({ secret, epoch: now + 30 });
    const partials = await Promise.all(
      [1, 2].map(async (i) => {
        const c = replicas[i]!.client('client');
        assert.equal((await c.login(u.username, u.password)).status, 200);
        return c;
      }),
    );
    const answers = await Promise.all(partials.map((c) => c.post('/authenticate/mfa', { code })));
    assert.deepEqual(answers.map((r) => r.status).sort(), [200, 401], answers.map((r) => r.text).join('\n'));
  });

  test('60 wrong passwords spread over three replicas verify exactly maxAttempts guesses', async () => {
    const policy = await createRecord(
      admins[0]!,
      '/auth-policies',
      authPolicyBody(unique('lock'), { maxAttempts: 3, lockoutDurationMinutes: 5 }),
    );
    const u = await createUser(replicas[0]!, admins[0]!, { identity: { authPolicyId: policy } });
    const before = verificationCounts.stored;
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        replicas[i % 3]!.client('client').post('/authenticate?method=password', {
          username: u.username,
          password: `wrong-${i}-pass`,
        }),
      ),
    );
    for (const res of answers) assertError(res, 401, 'INVALID_AUTH');
    const verified = verificationCounts.stored - before;
    assert.equal(verified, 3, 'exactly maxAttempts guesses verified across the replicas');
    for (let i = 0; i < 3; i++)
      assertError(
        await replicas[i]!.client('client').post('/authenticate?method=password', {
          username: u.username,
          password: u.password,
        }),
        401,
        'INVALID_AUTH',
      );
  });
});
