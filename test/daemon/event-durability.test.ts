/**
 * No event of an acknowledged change is lost to a crash (issue #24): `edgectl serve` is killed with SIGKILL during
 * a burst of concurrent writes (identity creates through the transaction batcher, new sessions through the
 * grouped session insert), started again, and every change that was answered has its event; every `created`
 * event names a record that exists (no event of a change that did not commit). On SQLite and on PostgreSQL. The
 * controller's `started` and `stopped` events frame a clean run, and the killed run has no `stopped`.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiClient } from '../harness/server.js';
import { freshDatabase, postgresSkip } from '../harness/pg.js';
import { scratch } from '../harness/processes.js';
import { serveProcess, type Served } from '../harness/serve-process.js';
import { assertBuilt } from '../harness/cli.js';

const skip = await postgresSkip();
const { tempDir, track } = scratch('edgectl-event-durability-');
const ADMIN = { EDGECTL_ADMIN_USERNAME: 'admin', EDGECTL_ADMIN_PASSWORD: 'admin-Passw0rd!' };
const MASTER_KEY = { EDGECTL_MASTER_KEY: 'event-durability-master-key-0123456789-ab' };
const BURST_MS = 1500;
const WORKERS = 16;

type Ev = Record<string, any>;

/** Every record of a management list (fixture: no assertions). */
async function all(admin: ApiClient, path: string): Promise<Ev[]> {
  const out: Ev[] = [];
  for (let offset = 0; ; offset += 500) {
    const sep = path.includes('?') ? '&' : '?';
    const res = await admin.get(`${path}${sep}limit=500&offset=${offset}`);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
    out.push(...res.body.data);
    if (out.length >= res.body.meta.pagination.totalCount) return out;
  }
}

async function crashAndCheck(store: 'sqlite' | 'postgres'): Promise<void> {
  assertBuilt();
  const dir = tempDir();
  const database = store === 'postgres' ? await freshDatabase() : undefined;
  try {
    const args = ['--data-dir', dir, '--listen', '127.0.0.1:0', ...(database ? ['--db', database.url] : [])];
    const env = { ...ADMIN, ...MASTER_KEY };
    let served: Served = await serveProcess(args, env, track);
    const ca = readFileSync(join(dir, 'pki', 'ca-bundle.pem'), 'utf8');
    const mgmt = (s: Served) => new ApiClient(ca, `${s.url}/edge/management/v1`);
    const admin = mgmt(served);
    assert.equal((await admin.login(ADMIN.EDGECTL_ADMIN_USERNAME, ADMIN.EDGECTL_ADMIN_PASSWORD)).status, 200);

    // A client identity allowed to dial 40 services: 4 API sessions × 40 services × 2 types of new sessions.
    const tag = Math.random().toString(36).slice(2, 8);
    const identity = await admin.post('/identities', {
      name: `burst-${tag}`,
      type: 'User',
      isAdmin: false,
      roleAttributes: ['burst'],
    });
    assert.equal(identity.status, 201, identity.text);
    const auth = await admin.post('/authenticators', {
      identityId: identity.body.data.id,
      method: 'updb',
      username: `burst-${tag}`,
      password: 'burst-Passw0rd!',
    });
    assert.equal(auth.status, 201, auth.text);
    const policies: [string, Record<string, unknown>][] = [
      ['/edge-routers', { name: `er-${tag}`, roleAttributes: ['burst'] }],
      [
        '/service-policies',
        { name: `sp-${tag}`, type: 'Dial', semantic: 'AnyOf', identityRoles: ['#burst'], serviceRoles: ['#burst'] },
      ],
      [
        '/service-policies',
        { name: `bp-${tag}`, type: 'Bind', semantic: 'AnyOf', identityRoles: ['#burst'], serviceRoles: ['#burst'] },
      ],
      [
        '/edge-router-policies',
        { name: `erp-${tag}`, semantic: 'AnyOf', identityRoles: ['#burst'], edgeRouterRoles: ['#burst'] },
      ],
      [
        '/service-edge-router-policies',
        { name: `serp-${tag}`, semantic: 'AnyOf', serviceRoles: ['#burst'], edgeRouterRoles: ['#burst'] },
      ],
    ];
    for (const [path, body] of policies) assert.equal((await admin.post(path, body)).status, 201, path);
    const services: string[] = [];
    for (let i = 0; i < 40; i++) {
      const res = await admin.post('/services', {
        name: `svc-${tag}-${i}`,
        encryptionRequired: true,
        roleAttributes: ['burst'],
      });
      assert.equal(res.status, 201, res.text);
      services.push(res.body.data.id);
    }
    const clients: ApiClient[] = [];
    for (let i = 0; i < 4; i++) {
      const c = new ApiClient(ca, `${served.url}/edge/client/v1`);
      assert.equal((await c.login(`burst-${tag}`, 'burst-Passw0rd!')).status, 200);
      clients.push(c);
    }
    const pairs = clients.flatMap((c) =>
      services.flatMap((s) => (['Dial', 'Bind'] as const).map((t) => ({ c, s, t }))),
    );

    // The burst: half the workers create identities, half create new sessions; SIGKILL in the middle of it.
    const identities: string[] = [];
    const sessions: string[] = [];
    let next = 0;
    let stop = false;
    const worker = async (w: number): Promise<void> => {
      for (let n = 0; !stop; n++) {
        try {
          if (w % 2 === 0) {
            const res = await admin.post('/identities', { name: `b-${tag}-${w}-${n}`, type: 'Device', isAdmin: false });
            if (res.status === 201) identities.push(res.body.data.id);
          } else {
            const p = pairs[next++ % pairs.length]!;
            if (next > pairs.length) return;
            const res = await p.c.post('/sessions', { serviceId: p.s, type: p.t });
            if (res.status === 201) sessions.push(res.body.data.id);
          }
        } catch {
          return; // the controller is gone
        }
      }
    };
    const burst = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
    await new Promise((r) => setTimeout(r, BURST_MS));
    served.child.kill('SIGKILL');
    stop = true;
    await burst;
    await served.exit;
    assert.ok(
      identities.length > 0 && sessions.length > 0,
      `writes were acknowledged (${identities.length}, ${sessions.length})`,
    );

    served = await serveProcess(args, env, track);
    const again = mgmt(served);
    assert.equal((await again.login(ADMIN.EDGECTL_ADMIN_USERNAME, ADMIN.EDGECTL_ADMIN_PASSWORD)).status, 200);
    const events = await all(again, `/events?filter=${encodeURIComponent('eventType = "created"')}`);
    const recorded = new Set(
      events.map((e) => `${e.namespace} ${e.entityType ?? 'sessions'} ${e.entityId ?? e.session_id}`),
    );
    for (const id of identities)
      assert.ok(recorded.has(`entityChange identities ${id}`), `the acknowledged identity ${id} has its event`);
    for (const id of sessions)
      assert.ok(recorded.has(`session sessions ${id}`), `the acknowledged session ${id} has its event`);

    // And no event of a change that was not committed: each created record still exists (nothing was deleted).
    const existing = new Set([
      ...(await all(again, '/identities')).map((r) => r.id),
      ...(await all(again, '/sessions')).map((r) => r.id),
    ]);
    for (const e of events) {
      if (e.namespace === 'session' || e.entityType === 'identities')
        assert.ok(existing.has(e.entityId ?? e.session_id), `the ${e.namespace} event of ${e.entityId} names a record`);
    }

    // The crashed run left no `stopped`; a clean stop records one, after the restart's `started`.
    const controller = await all(
      again,
      `/events?filter=${encodeURIComponent('namespace = "controller"')}&sort=timestamp%20asc`,
    );
    assert.deepEqual(
      controller.map((e) => e.event_type),
      ['started', 'started'],
    );
    served.child.kill('SIGTERM');
    assert.equal(await served.exit, 0);
    served = await serveProcess(args, env, track);
    const third = mgmt(served);
    assert.equal((await third.login(ADMIN.EDGECTL_ADMIN_USERNAME, ADMIN.EDGECTL_ADMIN_PASSWORD)).status, 200);
    const framed = await all(
      third,
      `/events?filter=${encodeURIComponent('namespace = "controller"')}&sort=timestamp%20asc`,
    );
    assert.deepEqual(
      framed.map((e) => e.event_type),
      ['started', 'started', 'stopped', 'started'],
    );
    served.child.kill('SIGTERM');
    assert.equal(await served.exit, 0);
  } finally {
    await database?.drop();
  }
}

describe('no event of an acknowledged change is lost to kill -9', () => {
  test('on SQLite', () => crashAndCheck('sqlite'));
  test('on PostgreSQL', { skip }, () => crashAndCheck('postgres'));
});
