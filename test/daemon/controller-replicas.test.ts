/**
 * The controllers registry across replicas: two controllers over one PostgreSQL database each record themselves,
 * so `GET /controllers` on either lists both, online; one that stops cleanly is listed offline at once; and
 * controller settings written on one replica are in force on the other.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { freshDatabase, postgresSkip } from '../harness/pg.js';
import { createUser, startTestServer, type TestServer } from '../harness/server.js';
import { effectiveOidcSettings } from '../../src/model/services/controller/settings.js';

const skip = await postgresSkip();

describe('controllers registry over one PostgreSQL database', { skip }, () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let first: TestServer;
  let second: TestServer;

  before(async () => {
    database = await freshDatabase();
    first = await startTestServer({ db: database.url });
    second = await startTestServer({ db: database.url });
  });
  after(async () => {
    await first?.close();
    await second?.close();
    await database?.drop();
  });

  test('each replica lists both controllers, online, with their own addresses', async () => {
    assert.notEqual(first.daemon.controllerId, second.daemon.controllerId);
    for (const replica of [first, second]) {
      const admin = await replica.admin();
      const res = await admin.get('/controllers?filter=' + encodeURIComponent('true sort by name'));
      assert.equal(res.status, 200, res.text);
      const byId = new Map(res.body.data.map((c: { id: string }) => [c.id, c]));
      assert.equal(byId.size, 2);
      for (const s of [first, second]) {
        const c = byId.get(s.daemon.controllerId) as Record<string, unknown>;
        assert.equal(c.isOnline, true);
        assert.equal(c.name, `${hostname()}:${s.daemon.port}`);
        assert.deepEqual(
          (c.apiAddresses as Record<string, { url: string }[]>)['edge-client']![0]!.url,
          `${s.url}/edge/client/v1`,
        );
      }
      // The client view on the same replica, for any session.
      const user = await createUser(replica, admin);
      const client = await user.client.get('/controllers');
      assert.equal(client.status, 200, client.text);
      assert.equal(client.body.meta.pagination.totalCount, 2);
    }
  });

  test('settings written on one replica are in force on the other', async () => {
    const admin = await first.admin();
    const res = await admin.post('/controller-settings', {
      controllerId: second.daemon.controllerId,
      oidc: { redirectUris: ['https://second.example/cb'] },
    });
    assert.equal(res.status, 201, res.text);
    const other = await second.admin();
    const eff = await other.get(`/controller-settings/${res.body.data.id}/effective`);
    assert.deepEqual(eff.body.data.effective.oidc.redirectUris, ['https://second.example/cb']);
    assert.deepEqual((await effectiveOidcSettings(second.daemon.ctx, second.daemon.controllerId)).redirectUris, [
      'https://second.example/cb',
    ]);
  });

  test('a controller that stops cleanly is listed offline on the others at once', async () => {
    const stopped = second.daemon.controllerId;
    await second.close();
    const admin = await first.admin();
    const res = await admin.get('/controllers');
    const c = res.body.data.find((x: { id: string }) => x.id === stopped);
    assert.ok(c, 'still listed');
    assert.equal(c.isOnline, false);
    assert.equal(res.body.data.find((x: { id: string }) => x.id === first.daemon.controllerId).isOnline, true);
  });
});
