/**
 * The built-in config types (migration 0007): present from the first start with the reference's ids, system
 * records that cannot be changed or deleted, and their schemas (draft-07 with `$ref`/`definitions`) checking
 * configs of those types.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError, assertFieldError, unique } from '../harness/assert.js';
import { startTestServer, type ApiClient, type TestServer } from '../harness/server.js';

const BUILTIN: Record<string, string> = {
  'intercept.v1': 'g7cIWbcGg',
  'host.v1': 'NH5p4FpGR',
  'host.v2': 'host.v2',
  'ziti-tunneler-client.v1': 'f2dd2df0-9c04-4b84-a91e-71437ac229f1',
  'ziti-tunneler-server.v1': 'cea49285-6c07-42cf-9f52-09a9b115c783',
};

describe('built-in config types', () => {
  let server: TestServer;
  let admin: ApiClient;

  before(async () => {
    server = await startTestServer();
    admin = await server.admin();
  });
  after(() => server?.close());

  const createConfig = (configTypeId: string, data: unknown) =>
    admin.post('/configs', { name: unique('cfg'), configTypeId, data });

  test('exist on a new controller with the reference ids and their schemas', async () => {
    const res = await admin.get('/config-types?limit=100');
    assert.equal(res.status, 200);
    const byName = new Map(
      (res.body.data as { id: string; name: string; schema: Record<string, unknown> }[]).map((t) => [t.name, t]),
    );
    for (const [name, id] of Object.entries(BUILTIN)) {
      const t = byName.get(name);
      assert.ok(t, `${name} is listed`);
      assert.equal(t.id, id, `${name} keeps the reference's id`);
      assert.equal(typeof t.schema.$id, 'string', `${name} has its schema`);
    }
    assert.equal((await admin.get('/config-types/g7cIWbcGg')).body.data.name, 'intercept.v1');
  });

  test('cannot be updated, patched or deleted (400), and stay unchanged', async () => {
    for (const id of Object.values(BUILTIN)) {
      assertError(
        await admin.patch(`/config-types/${encodeURIComponent(id)}`, { name: unique('renamed') }),
        400,
        'ENTITY_CAN_NOT_BE_UPDATED',
      );
      assertError(
        await admin.put(`/config-types/${encodeURIComponent(id)}`, { name: unique('renamed'), schema: {} }),
        400,
        'ENTITY_CAN_NOT_BE_UPDATED',
      );
      assertError(await admin.delete(`/config-types/${encodeURIComponent(id)}`), 400, 'ENTITY_CAN_NOT_BE_DELETED');
    }
    const d = await admin.get('/config-types/NH5p4FpGR');
    assert.equal(d.body.data.name, 'host.v1');
    assert.notDeepEqual(d.body.data.schema, {});
  });

  test('their names are taken: another config type cannot use them', async () => {
    assertFieldError(await admin.post('/config-types', { name: 'host.v1' }), 'name');
  });

  test('intercept.v1 accepts a tunneler intercept (hostnames, wildcards, CIDRs) by id or name and refuses a bad one', async () => {
    const good = {
      protocols: ['tcp', 'udp'],
      addresses: ['crm.internal', '*.example.net', '10.0.0.0/24'],
      portRanges: [{ low: 80, high: 443 }],
    };
    assert.equal((await createConfig('intercept.v1', good)).status, 201);
    assert.equal((await createConfig('g7cIWbcGg', { ...good, dialOptions: { connectTimeoutSeconds: 5 } })).status, 201);
    assertFieldError(await createConfig('intercept.v1', { protocols: ['tcp'], addresses: ['a.b'] }), 'data.portRanges');
    assertFieldError(await createConfig('intercept.v1', { ...good, protocols: ['icmp'] }), 'data.protocols.0');
    assertFieldError(
      await createConfig('intercept.v1', { ...good, portRanges: [{ low: 1, high: 70000 }] }),
      'data.portRanges.0.high',
    );
    assertFieldError(await createConfig('intercept.v1', { ...good, addresses: [] }), 'data.addresses');
  });

  test('host.v1 and host.v2 check their conditional rules and shared definitions', async () => {
    assert.equal((await createConfig('host.v1', { protocol: 'tcp', address: 'localhost', port: 8080 })).status, 201);
    assert.equal(
      (
        await createConfig('host.v1', {
          forwardProtocol: true,
          allowedProtocols: ['tcp'],
          forwardAddress: true,
          allowedAddresses: ['10.0.0.0/8'],
          forwardPort: true,
          allowedPortRanges: [{ low: 1, high: 2 }],
        })
      ).status,
      201,
    );
    const noAddress = await createConfig('host.v1', { protocol: 'tcp', port: 8080 });
    assertFieldError(noAddress, 'data.address');
    assertFieldError(
      await createConfig('host.v1', { protocol: 'tcp', address: 'localhost', port: 8080, extra: 1 }),
      'data.extra',
    );
    assert.equal(
      (await createConfig('host.v2', { terminators: [{ protocol: 'tcp', address: 'localhost', port: 22 }] })).status,
      201,
    );
    assertFieldError(await createConfig('host.v2', { terminators: [] }), 'data.terminators');
  });

  test('the tunneler client and server types check their fields', async () => {
    assert.equal((await createConfig('ziti-tunneler-client.v1', { hostname: 'svc.ziti', port: 443 })).status, 201);
    assertFieldError(await createConfig('ziti-tunneler-client.v1', { hostname: 'svc.ziti' }), 'data.port');
    assert.equal(
      (await createConfig('ziti-tunneler-server.v1', { hostname: 'localhost', port: 80, protocol: 'tcp' })).status,
      201,
    );
    assertFieldError(
      await createConfig('ziti-tunneler-server.v1', { hostname: 'localhost', port: 'eighty', protocol: 'tcp' }),
      'data.port',
    );
  });
});
