/**
 * Two controllers in one process, each on its own store, never see each other's data through any cache: every
 * cache and piece of per-store state belongs to its store's runtime (src/store/runtime.ts). Both networks are
 * built alike (an identity with the same name, a service, policies, a router), then the first one gains a
 * service and an identity the second lacks; every answer that goes through a cache is asked of both, in turns,
 * and must hold only its own store's records. The test then checks that each cache it meant to exercise was
 * made on both stores as two separate objects, so a new cache shows up here.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRecord, createUser, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { runtimeOf } from '../../src/store/runtime.js';
import { postureCacheOf } from '../../src/model/posture/posture-of.js';

interface Network {
  server: TestServer;
  admin: ApiClient;
  user: ApiClient;
  userId: string;
  service: string;
}

let a: Network;
let b: Network;

async function network(): Promise<Network> {
  const server = await startTestServer();
  const admin = await server.admin();
  const make = (path: string, body: Record<string, unknown>) => createRecord(admin, path, body);
  const { client: user, id: userId } = await createUser(server, admin, {
    username: 'alice',
    password: 'alice-Passw0rd!',
    identity: { roleAttributes: ['staff'] },
  });
  const service = await make('/services', { name: 'shared', roleAttributes: ['apps'], encryptionRequired: true });
  const router = await make('/edge-routers', { name: 'er-1' });
  await make('/service-policies', {
    name: 'staff-dial',
    type: 'Dial',
    semantic: 'AnyOf',
    identityRoles: ['#staff'],
    serviceRoles: ['#apps'],
  });
  await make('/edge-router-policies', {
    name: 'erp',
    semantic: 'AnyOf',
    identityRoles: ['#all'],
    edgeRouterRoles: [`@${router}`],
  });
  await make('/service-edge-router-policies', {
    name: 'serp',
    semantic: 'AnyOf',
    serviceRoles: ['#all'],
    edgeRouterRoles: ['#all'],
  });
  return { server, admin, user, userId, service };
}

before(async () => {
  a = await network();
  b = await network();
  await createRecord(a.admin, '/services', { name: 'only-in-a', roleAttributes: ['apps'], encryptionRequired: true });
  await createRecord(a.admin, '/identities', { name: 'only-in-a', type: 'User', isAdmin: false });
});
after(async () => {
  await a?.server.close();
  await b?.server.close();
});

const names = (res: { status: number; text: string; body: { data: { name: string }[] } }) => {
  assert.equal(res.status, 200, res.text);
  return res.body.data.map((r) => r.name).sort();
};

test('management listings and searches answer each store its own rows (listing cache, rendered pages)', async () => {
  for (let round = 0; round < 2; round++) {
    for (const [n, want] of [
      [a, ['only-in-a']],
      [b, []],
    ] as const) {
      assert.deepEqual(names(await n.admin.get('/identities?filter=name%3D%22only-in-a%22')), want);
      assert.deepEqual(names(await n.admin.get('/identities?filter=name%20contains%20%22only%22')), want);
      assert.deepEqual(names(await n.admin.get('/services?filter=name%3D%22only-in-a%22')), want);
      const all = await n.admin.get('/identities');
      assert.equal(all.status, 200);
      assert.equal(
        all.body.data.some((r: { name: string }) => r.name === 'only-in-a'),
        want.length > 0,
      );
    }
  }
});

test("an identity's services are its own store's (access engine, plain service pages)", async () => {
  for (let round = 0; round < 2; round++) {
    assert.deepEqual(names(await a.user.get('/services')), ['only-in-a', 'shared']);
    assert.deepEqual(names(await b.user.get('/services')), ['shared']);
  }
});

test('a token of one store is refused by the other (principal cache)', async () => {
  for (let round = 0; round < 2; round++) {
    assert.equal((await a.user.get('/current-identity')).status, 200);
    assert.equal((await b.user.get('/current-identity')).status, 200);
    const crossed = b.user.withToken(a.user.token);
    assert.equal((await crossed.get('/current-identity')).status, 401);
  }
});

test('sessions are made and repeated per store (session answers, session routers)', async () => {
  const dial = async (n: Network, serviceId: string) => {
    const res = await n.user.post('/sessions', { serviceId, type: 'Dial' });
    assert.equal(res.status, 201, res.text);
    return res.body.data as { id: string; service: { id: string } };
  };
  const first = { a: await dial(a, a.service), b: await dial(b, b.service) };
  const again = { a: await dial(a, a.service), b: await dial(b, b.service) };
  assert.equal(again.a.id, first.a.id);
  assert.equal(again.b.id, first.b.id);
  assert.notEqual(first.a.id, first.b.id);
  assert.equal(again.b.service.id, b.service);
  // A's service does not exist on B, whatever A's caches hold.
  const res = await b.user.post('/sessions', { serviceId: a.service, type: 'Dial' });
  assert.equal(res.status, 404, res.text);
});

test('unknown usernames and wrong passwords are judged per store (password decoy)', async () => {
  for (const n of [a, b]) {
    const res = await n.server.client('client').login('nobody-here', 'whatever-Passw0rd!');
    assert.equal(res.status, 401);
  }
});

test('every cache exercised above exists on both stores, as separate objects', () => {
  const ra = runtimeOf(a.server.daemon.store.db)!;
  const rb = runtimeOf(b.server.daemon.store.db)!;
  assert.notEqual(ra, rb);
  assert.notEqual(ra.feed, rb.feed);
  assert.notEqual(postureCacheOf(a.server.daemon.store.db), postureCacheOf(b.server.daemon.store.db));
  const made = (r: typeof ra) => new Map([...r.caches].map(([spec, value]) => [spec.name, value]));
  const [ma, mb] = [made(ra), made(rb)];
  for (const name of [
    'listings',
    'rendered-pages',
    'principals',
    'access-engine',
    'plain-service-pages',
    'session-answers',
    'posture-model',
    'password-decoy',
  ]) {
    assert.ok(ma.has(name), `${name} made on the first store`);
    assert.ok(mb.has(name), `${name} made on the second store`);
    assert.notEqual(ma.get(name), mb.get(name), name);
  }
});
