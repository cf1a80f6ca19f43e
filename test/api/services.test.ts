/**
 * Config types, configs, services, edge routers and transit routers over the Management API: fields,
 * defaults, validation errors, references that block deletes, sub-listings, role attributes and the system
 * records of tunneler-enabled edge routers (docs/reference-notes.md §2.7).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type ApiClient, type TestServer, createRecord } from '../harness/server.js';
import { checkResponse } from '../harness/schemas.js';
import { assertFieldError, filterParam, unique } from '../harness/assert.js';

let server: TestServer;
let admin: ApiClient;

before(async () => {
  server = await startTestServer();
  admin = await server.admin();
});
after(() => server.close());

const q = filterParam;

const create = (path: string, body: Record<string, unknown>): Promise<string> => createRecord(admin, path, body);

const PORT_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: { hostname: { type: 'string' }, port: { type: 'integer', minimum: 1, maximum: 65535 } },
  required: ['hostname', 'port'],
  additionalProperties: false,
};

describe('config types', () => {
  test('create stores the schema; detail and list match the reference schemas', async () => {
    const id = await create('/config-types', { name: unique('host.v1'), schema: PORT_SCHEMA, tags: { team: 'net' } });
    const d = await admin.get(`/config-types/${id}`);
    assert.equal(d.status, 200);
    assert.deepEqual(d.body.data.schema, PORT_SCHEMA);
    assert.deepEqual(d.body.data.tags, { team: 'net' });
    assert.equal(d.body.data._links.configs.href, `./config-types/${id}/configs`);
    assert.deepEqual(checkResponse('management', '/config-types/{id}', 'GET', 200, d.body), []);
    const list = await admin.get(`/config-types?${q(`id = "${id}"`)}`);
    assert.equal(list.body.data.length, 1);
    assert.deepEqual(checkResponse('management', '/config-types', 'GET', 200, list.body), []);
  });

  test('a schema that is not a valid JSON Schema is refused on create, update and patch', async () => {
    assertFieldError(
      await admin.post('/config-types', { name: unique('bad'), schema: { type: 'no-such-type' } }),
      'schema',
    );
    assertFieldError(
      await admin.post('/config-types', { name: unique('bad'), schema: { properties: { a: { minimum: 'one' } } } }),
      'schema',
    );
    const id = await create('/config-types', { name: unique('ok') });
    assertFieldError(
      await admin.put(`/config-types/${id}`, { name: unique('ok'), schema: { required: 'port' } }),
      'schema',
    );
    assertFieldError(await admin.patch(`/config-types/${id}`, { schema: { type: 7 } }), 'schema');
    assert.deepEqual((await admin.get(`/config-types/${id}`)).body.data.schema, {});
  });

  test('names are unique and required', async () => {
    const name = unique('dup');
    await create('/config-types', { name });
    assertFieldError(await admin.post('/config-types', { name }), 'name');
    assertFieldError(await admin.post('/config-types', { schema: {} }), 'name');
  });

  test('a config type with configs cannot be deleted until its configs are gone', async () => {
    const typeId = await create('/config-types', { name: unique('deletable'), schema: PORT_SCHEMA });
    const configId = await create('/configs', {
      name: unique('cfg'),
      configTypeId: typeId,
      data: { hostname: 'a', port: 1 },
    });
    const res = await admin.delete(`/config-types/${typeId}`);
    assert.equal(res.status, 409);
    assert.equal(res.body.error.code, 'CAN_NOT_DELETE_REFERENCED_ENTITY');
    assert.match(res.body.error.cause.reason, new RegExp(configId));
    assert.equal((await admin.delete(`/configs/${configId}`)).status, 200);
    assert.equal((await admin.delete(`/config-types/${typeId}`)).status, 200);
    assert.equal((await admin.get(`/config-types/${typeId}`)).status, 404);
  });
});

describe('configs', () => {
  let typeId: string;
  before(async () => {
    typeId = await create('/config-types', { name: unique('intercept.v1'), schema: PORT_SCHEMA });
  });

  test('create validates data against the type schema and the detail carries the type reference', async () => {
    const id = await create('/configs', {
      name: unique('web'),
      configTypeId: typeId,
      data: { hostname: 'web.local', port: 443 },
    });
    const d = await admin.get(`/configs/${id}`);
    assert.equal(d.body.data.configTypeId, typeId);
    assert.equal(d.body.data.configType.id, typeId);
    assert.equal(d.body.data.configType.entity, 'config-types');
    assert.deepEqual(d.body.data.data, { hostname: 'web.local', port: 443 });
    assert.deepEqual(checkResponse('management', '/configs/{id}', 'GET', 200, d.body), []);
    const list = await admin.get(`/configs?${q(`type = "${typeId}" and data.port = 443`)}`);
    assert.deepEqual(
      list.body.data.map((c: any) => c.id),
      [id],
    );
    assert.deepEqual(checkResponse('management', '/configs', 'GET', 200, list.body), []);
  });

  test('data that does not match the schema is 400 naming the failing path', async () => {
    const cases: [unknown, string][] = [
      [{ hostname: 'x', port: 'eighty' }, 'data.port'],
      [{ hostname: 'x', port: 70000 }, 'data.port'],
      [{ hostname: 'x' }, 'data.port'],
      [{ hostname: 'x', port: 1, extra: true }, 'data.extra'],
    ];
    for (const [data, field] of cases) {
      assertFieldError(await admin.post('/configs', { name: unique('bad'), configTypeId: typeId, data }), field);
    }
    assertFieldError(await admin.post('/configs', { name: unique('bad'), configTypeId: typeId }), 'data');
    assertFieldError(
      await admin.post('/configs', { name: unique('bad'), configTypeId: 'no-such-type', data: {} }),
      'configTypeId',
    );
  });

  test('update and patch validate too; the config type cannot change', async () => {
    const id = await create('/configs', {
      name: unique('mut'),
      configTypeId: typeId,
      data: { hostname: 'a', port: 1 },
    });
    assertFieldError(await admin.put(`/configs/${id}`, { name: unique('mut'), data: { hostname: 'a' } }), 'data.port');
    assertFieldError(await admin.patch(`/configs/${id}`, { data: { hostname: 'a', port: 0 } }), 'data.port');
    const otherType = await create('/config-types', { name: unique('other') });
    assert.equal(
      (await admin.patch(`/configs/${id}`, { data: { hostname: 'b', port: 2 }, configTypeId: otherType })).status,
      200,
    );
    const d = (await admin.get(`/configs/${id}`)).body.data;
    assert.deepEqual(d.data, { hostname: 'b', port: 2 });
    assert.equal(d.configTypeId, typeId);
  });

  test('the type may be named instead of given by id', async () => {
    const name = unique('named-type');
    const namedType = await create('/config-types', { name });
    const id = await create('/configs', { name: unique('by-name'), configTypeId: name, data: { anything: 1 } });
    assert.equal((await admin.get(`/configs/${id}`)).body.data.configTypeId, namedType);
  });

  test('the configs of a config type are listed, paged and filterable', async () => {
    const t = await create('/config-types', { name: unique('listed') });
    const ids = [];
    for (let i = 0; i < 3; i++)
      ids.push(await create('/configs', { name: unique(`listed-${i}`), configTypeId: t, data: { i } }));
    const res = await admin.get(`/config-types/${t}/configs?limit=2`);
    assert.equal(res.status, 200);
    assert.equal(res.body.data.length, 2);
    assert.equal(res.body.meta.pagination.totalCount, 3);
    assert.deepEqual(checkResponse('management', '/config-types/{id}/configs', 'GET', 200, res.body), []);
    const filtered = await admin.get(`/config-types/${t}/configs?${q('data.i = 1')}`);
    assert.deepEqual(
      filtered.body.data.map((c: any) => c.id),
      [ids[1]],
    );
    assert.equal((await admin.get('/config-types/missing/configs')).status, 404);
  });
});

describe('services', () => {
  let hostType: string;
  let interceptType: string;
  let host1: string;
  let host2: string;
  let intercept1: string;
  before(async () => {
    hostType = await create('/config-types', { name: unique('host') });
    interceptType = await create('/config-types', { name: unique('intercept') });
    host1 = await create('/configs', { name: unique('h1'), configTypeId: hostType, data: {} });
    host2 = await create('/configs', { name: unique('h2'), configTypeId: hostType, data: {} });
    intercept1 = await create('/configs', { name: unique('i1'), configTypeId: interceptType, data: {} });
  });

  test('create stores every field; terminatorStrategy defaults to smartrouting', async () => {
    const id = await create('/services', {
      name: unique('svc'),
      encryptionRequired: false,
      roleAttributes: ['web', 'emea'],
      configs: [host1, intercept1],
      tags: { owner: 'ops' },
    });
    const d = await admin.get(`/services/${id}`);
    assert.equal(d.status, 200);
    const s = d.body.data;
    assert.equal(s.encryptionRequired, false);
    assert.equal(s.terminatorStrategy, 'smartrouting');
    assert.deepEqual(s.roleAttributes, ['web', 'emea']);
    assert.deepEqual(s.configs, [host1, intercept1]);
    assert.deepEqual(s.config, {});
    assert.deepEqual(s.permissions, []);
    assert.deepEqual(s.postureQueries, []);
    assert.deepEqual(checkResponse('management', '/services/{id}', 'GET', 200, d.body), []);
    const list = await admin.get(`/services?${q(`anyOf(configs) = "${host1}" and name = "${s.name}"`)}`);
    assert.equal(list.body.data.length, 1);
    assert.deepEqual(checkResponse('management', '/services', 'GET', 200, list.body), []);
  });

  test('encryptionRequired is required on create and fixed afterwards', async () => {
    assertFieldError(await admin.post('/services', { name: unique('no-enc') }), 'encryptionRequired');
    const id = await create('/services', {
      name: unique('enc'),
      encryptionRequired: true,
      terminatorStrategy: 'weighted',
    });
    assert.equal((await admin.patch(`/services/${id}`, { encryptionRequired: false })).status, 200);
    assert.equal((await admin.put(`/services/${id}`, { name: unique('enc2'), encryptionRequired: false })).status, 200);
    const s = (await admin.get(`/services/${id}`)).body.data;
    assert.equal(s.encryptionRequired, true);
    assert.equal(s.terminatorStrategy, 'smartrouting', 'a PUT without terminatorStrategy resets it to the default');
  });

  test('an empty terminatorStrategy (the console form sends one) is stored as smartrouting on create, update and patch', async () => {
    const id = await create('/services', { name: unique('empty'), encryptionRequired: true, terminatorStrategy: '' });
    const strategy = async () => (await admin.get(`/services/${id}`)).body.data.terminatorStrategy;
    assert.equal(await strategy(), 'smartrouting');
    assert.equal((await admin.patch(`/services/${id}`, { terminatorStrategy: 'weighted' })).status, 200);
    assert.equal(await strategy(), 'weighted');
    assert.equal((await admin.patch(`/services/${id}`, { terminatorStrategy: '' })).status, 200);
    assert.equal(await strategy(), 'smartrouting');
    assert.equal((await admin.patch(`/services/${id}`, { terminatorStrategy: 'random' })).status, 200);
    const name = (await admin.get(`/services/${id}`)).body.data.name;
    assert.equal(
      (await admin.put(`/services/${id}`, { name, encryptionRequired: true, terminatorStrategy: '' })).status,
      200,
    );
    assert.equal(await strategy(), 'smartrouting');
  });

  test('at most one config per config type; unknown configs are refused', async () => {
    assertFieldError(
      await admin.post('/services', { name: unique('two'), encryptionRequired: true, configs: [host1, host2] }),
      'configs',
    );
    assertFieldError(
      await admin.post('/services', { name: unique('unknown'), encryptionRequired: true, configs: ['nope'] }),
      'configs',
    );
    const id = await create('/services', { name: unique('one'), encryptionRequired: true, configs: [host1] });
    assertFieldError(await admin.patch(`/services/${id}`, { configs: [host1, host2] }), 'configs');
    assert.equal((await admin.patch(`/services/${id}`, { configs: [host2, intercept1] })).status, 200);
    assert.deepEqual((await admin.get(`/services/${id}`)).body.data.configs, [host2, intercept1]);
  });

  test('the configs of a service are listed; a config in use cannot be deleted', async () => {
    const cfg = await create('/configs', { name: unique('used'), configTypeId: hostType, data: {} });
    const id = await create('/services', {
      name: unique('user'),
      encryptionRequired: true,
      configs: [cfg, intercept1],
    });
    const res = await admin.get(`/services/${id}/configs`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data.map((c: any) => c.id).sort(), [cfg, intercept1].sort());
    assert.deepEqual(checkResponse('management', '/services/{id}/configs', 'GET', 200, res.body), []);
    // The other way round: the services using a config, filtered like any service listing.
    const using = await admin.get(`/configs/${cfg}/services`);
    assert.equal(using.status, 200, using.text);
    assert.deepEqual(
      using.body.data.map((s: { id: string }) => s.id),
      [id],
    );
    assert.deepEqual(checkResponse('management', '/services', 'GET', 200, using.body), []);
    const none = await admin.get(`/configs/${cfg}/services?filter=${encodeURIComponent('name = "other"')}`);
    assert.deepEqual(none.body.data, []);
    assert.equal((await admin.get('/configs/missing/services')).status, 404);
    const del = await admin.delete(`/configs/${cfg}`);
    assert.equal(del.status, 409);
    assert.equal(del.body.error.code, 'CAN_NOT_DELETE_REFERENCED_ENTITY');
    assert.match(del.body.error.cause.reason, new RegExp(id));
    assert.equal((await admin.patch(`/services/${id}`, { configs: [] })).status, 200);
    assert.equal((await admin.delete(`/configs/${cfg}`)).status, 200);
    assert.equal((await admin.get('/services/missing/configs')).status, 404);
  });

  test('role attributes are plain strings; null means none', async () => {
    assertFieldError(
      await admin.post('/services', { name: unique('hash'), encryptionRequired: true, roleAttributes: ['#web'] }),
      'roleAttributes',
    );
    assertFieldError(
      await admin.post('/services', { name: unique('at'), encryptionRequired: true, roleAttributes: ['@x'] }),
      'roleAttributes',
    );
    const id = await create('/services', {
      name: unique('null-attrs'),
      encryptionRequired: true,
      roleAttributes: null,
    });
    assert.deepEqual((await admin.get(`/services/${id}`)).body.data.roleAttributes, []);
  });

  test('roleFilter and roleSemantic select services by attribute or id', async () => {
    const tag = unique('rf');
    const a = await create('/services', {
      name: unique('rf-a'),
      encryptionRequired: true,
      roleAttributes: [`${tag}-x`, `${tag}-y`],
    });
    const b = await create('/services', {
      name: unique('rf-b'),
      encryptionRequired: true,
      roleAttributes: [`${tag}-x`],
    });
    const c = await create('/services', { name: unique('rf-c'), encryptionRequired: true });
    const ids = async (qs: string) =>
      (await admin.get(`/services?${qs}&limit=100`)).body.data.map((s: any) => s.id).sort();
    assert.deepEqual(await ids(`roleFilter=%23${tag}-x&roleFilter=%23${tag}-y`), [a]);
    assert.deepEqual(await ids(`roleFilter=%23${tag}-x&roleFilter=%23${tag}-y&roleSemantic=AnyOf`), [a, b].sort());
    assert.deepEqual(await ids(`roleFilter=%40${c}&roleFilter=%23${tag}-y&roleSemantic=AnyOf`), [a, c].sort());
    assert.equal((await admin.get(`/services?roleFilter=plain`)).status, 400);
  });

  test('service role attributes lists the attributes in use', async () => {
    const tag = unique('sra');
    await create('/services', {
      name: unique('sra'),
      encryptionRequired: true,
      roleAttributes: [`${tag}-1`, `${tag}-2`],
    });
    const res = await admin.get(`/service-role-attributes?${q(`id contains "${tag}"`)}`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, [`${tag}-1`, `${tag}-2`]);
    assert.deepEqual(checkResponse('management', '/service-role-attributes', 'GET', 200, res.body), []);
  });
});

describe('edge routers', () => {
  test('create stores every seed field; the router is offline and unverified', async () => {
    const name = unique('er');
    const id = await create('/edge-routers', {
      name,
      cost: 12,
      noTraversal: true,
      roleAttributes: ['east'],
      appData: { rack: 4 },
      tags: { dc: 'fra' },
    });
    const d = await admin.get(`/edge-routers/${id}`);
    assert.equal(d.status, 200);
    const r = d.body.data;
    assert.equal(r.name, name);
    assert.equal(r.cost, 12);
    assert.equal(r.noTraversal, true);
    assert.equal(r.isTunnelerEnabled, false);
    assert.deepEqual(r.roleAttributes, ['east']);
    assert.deepEqual(r.appData, { rack: 4 });
    assert.deepEqual(r.tags, { dc: 'fra' });
    assert.equal(r.isOnline, false);
    assert.equal(r.isVerified, false);
    assert.equal(r.hostname, '');
    assert.deepEqual(r.supportedProtocols, {});
    assert.equal(typeof r.syncStatus, 'string');
    assert.deepEqual(checkResponse('management', '/edge-routers/{id}', 'GET', 200, d.body), []);
    const list = await admin.get(`/edge-routers?${q(`name = "${name}" and cost = 12 and isVerified = false`)}`);
    assert.equal(list.body.data.length, 1);
    assert.deepEqual(checkResponse('management', '/edge-routers', 'GET', 200, list.body), []);
  });

  test('defaults, null handling and validation of cost', async () => {
    const id = await create('/edge-routers', { name: unique('defaults'), cost: null, noTraversal: null });
    const r = (await admin.get(`/edge-routers/${id}`)).body.data;
    assert.equal(r.cost, 0);
    assert.equal(r.noTraversal, false);
    assert.deepEqual(r.roleAttributes, []);
    assertFieldError(await admin.post('/edge-routers', { name: unique('cost'), cost: 65536 }), 'cost');
    assertFieldError(await admin.post('/edge-routers', { name: unique('cost'), cost: -1 }), 'cost');
    assertFieldError(await admin.patch(`/edge-routers/${id}`, { cost: 1.5 }), 'cost');
    assertFieldError(
      await admin.post('/edge-routers', { name: unique('attr'), roleAttributes: ['#x'] }),
      'roleAttributes',
    );
    assertFieldError(await admin.post('/edge-routers', { cost: 1 }), 'name');
  });

  test('update replaces and patch merges', async () => {
    const id = await create('/edge-routers', {
      name: unique('mut'),
      cost: 5,
      roleAttributes: ['a'],
      appData: { x: 1 },
    });
    assert.equal((await admin.patch(`/edge-routers/${id}`, { cost: 7 })).status, 200);
    let r = (await admin.get(`/edge-routers/${id}`)).body.data;
    assert.equal(r.cost, 7);
    assert.deepEqual(r.roleAttributes, ['a']);
    assert.equal((await admin.put(`/edge-routers/${id}`, { name: r.name })).status, 200);
    r = (await admin.get(`/edge-routers/${id}`)).body.data;
    assert.equal(r.cost, 0);
    assert.deepEqual(r.roleAttributes, []);
    assert.deepEqual(r.appData, {});
  });

  test('router names are unique across edge and transit routers', async () => {
    const name = unique('shared');
    await create('/edge-routers', { name });
    assertFieldError(await admin.post('/transit-routers', { name }), 'name');
    assertFieldError(await admin.post('/edge-routers', { name }), 'name');
    const t = await create('/routers', { name: unique('t') });
    assertFieldError(await admin.patch(`/routers/${t}`, { name }), 'name');
  });

  test('roleFilter and the edge router role attributes listing', async () => {
    const tag = unique('era');
    const a = await create('/edge-routers', { name: unique('a'), roleAttributes: [`${tag}-x`] });
    await create('/edge-routers', { name: unique('b'), roleAttributes: [`${tag}-y`] });
    const res = await admin.get(`/edge-routers?roleFilter=%23${tag}-x`);
    assert.deepEqual(
      res.body.data.map((r: any) => r.id),
      [a],
    );
    const attrs = await admin.get(`/edge-router-role-attributes?${q(`id contains "${tag}"`)}`);
    assert.deepEqual(attrs.body.data, [`${tag}-x`, `${tag}-y`]);
    assert.deepEqual(checkResponse('management', '/edge-router-role-attributes', 'GET', 200, attrs.body), []);
  });
});

describe('tunneler-enabled edge routers (system identity and edge router policy)', () => {
  test('enabling creates a Router identity and an undeletable system policy linking it to its router', async () => {
    const name = unique('tunneler');
    const id = await create('/edge-routers', { name, isTunnelerEnabled: true });
    const ident = await admin.get(`/identities/${id}`);
    assert.equal(ident.status, 200);
    assert.equal(ident.body.data.name, name);
    assert.equal(ident.body.data.typeId, 'Router');
    assert.equal(ident.body.data.isAdmin, false);
    const erp = await admin.get(`/edge-router-policies/${id}`);
    assert.equal(erp.status, 200);
    assert.equal(erp.body.data.name, `edge-router-${id}-system`);
    assert.equal(erp.body.data.isSystem, true);
    assert.equal(erp.body.data.semantic, 'AnyOf');
    assert.deepEqual(erp.body.data.identityRoles, [`@${id}`]);
    assert.deepEqual(erp.body.data.edgeRouterRoles, [`@${id}`]);
    assert.deepEqual(erp.body.data.edgeRouterRolesDisplay, [{ role: `@${id}`, name: `@${name}` }]);
    assert.deepEqual(checkResponse('management', '/edge-router-policies/{id}', 'GET', 200, erp.body), []);
    // The router's own identity may use it.
    const ers = await admin.get(`/identities/${id}/edge-routers`);
    assert.deepEqual(
      ers.body.data.map((r: any) => r.id),
      [id],
    );
    const ids = await admin.get(`/edge-routers/${id}/identities`);
    assert.deepEqual(
      ids.body.data.map((r: any) => r.id),
      [id],
    );

    const upd = await admin.patch(`/edge-router-policies/${id}`, { semantic: 'AllOf' });
    assert.equal(upd.status, 400);
    assert.equal(upd.body.error.code, 'ENTITY_CAN_NOT_BE_UPDATED');
    const del = await admin.delete(`/edge-router-policies/${id}`);
    assert.equal(del.status, 400);
    assert.equal(del.body.error.code, 'ENTITY_CAN_NOT_BE_DELETED');
    const delIdent = await admin.delete(`/identities/${id}`);
    assert.equal(delIdent.status, 409);
    assert.equal(delIdent.body.error.code, 'CAN_NOT_DELETE_REFERENCED_ENTITY');
    // Its identity keeps the router's name and type, so it cannot be retyped and then deleted.
    for (const change of [{ type: 'User' }, { name: unique('hijack') }]) {
      const res = await admin.patch(`/identities/${id}`, change);
      assert.equal(res.status, 400, JSON.stringify(change));
      assert.equal(res.body.error.code, 'ENTITY_CAN_NOT_BE_UPDATED');
    }
    assert.equal(
      (await admin.patch(`/identities/${id}`, { roleAttributes: ['ok'] })).status,
      200,
      'other fields stay editable',
    );
    assert.equal((await admin.delete(`/identities/${id}`)).status, 409);
    assert.equal((await admin.get(`/identities/${id}`)).body.data.typeId, 'Router');
  });

  test('a rename renames the identity; disabling removes both records; deleting the router too', async () => {
    const id = await create('/edge-routers', { name: unique('t2'), isTunnelerEnabled: true });
    const renamed = unique('renamed');
    assert.equal((await admin.patch(`/edge-routers/${id}`, { name: renamed })).status, 200);
    assert.equal((await admin.get(`/identities/${id}`)).body.data.name, renamed);
    assert.equal((await admin.patch(`/edge-routers/${id}`, { isTunnelerEnabled: false })).status, 200);
    assert.equal((await admin.get(`/identities/${id}`)).status, 404);
    assert.equal((await admin.get(`/edge-router-policies/${id}`)).status, 404);
    assert.equal((await admin.patch(`/edge-routers/${id}`, { isTunnelerEnabled: true })).status, 200);
    assert.equal((await admin.get(`/edge-router-policies/${id}`)).status, 200);
    assert.equal((await admin.delete(`/edge-routers/${id}`)).status, 200);
    assert.equal((await admin.get(`/identities/${id}`)).status, 404);
    assert.equal((await admin.get(`/edge-router-policies/${id}`)).status, 404);
  });

  test('enabling on update of a router created without it', async () => {
    const id = await create('/edge-routers', { name: unique('later') });
    assert.equal((await admin.get(`/identities/${id}`)).status, 404);
    assert.equal(
      (await admin.put(`/edge-routers/${id}`, { name: unique('later2'), isTunnelerEnabled: true })).status,
      200,
    );
    assert.equal((await admin.get(`/identities/${id}`)).body.data.typeId, 'Router');
  });
});

describe('transit routers', () => {
  test('one resource at two paths, with its own fields and the reference shapes', async () => {
    const name = unique('tr');
    const id = await create('/transit-routers', { name, cost: 3, noTraversal: true, tags: { a: 'b' } });
    for (const path of ['/transit-routers', '/routers']) {
      const d = await admin.get(`${path}/${id}`);
      assert.equal(d.status, 200, path);
      assert.equal(d.body.data.name, name);
      assert.equal(d.body.data.cost, 3);
      assert.equal(d.body.data.noTraversal, true);
      assert.equal(d.body.data.isOnline, false);
      assert.equal(d.body.data.isVerified, false);
      assert.deepEqual(checkResponse('management', `${path}/{id}`, 'GET', 200, d.body), []);
      const list = await admin.get(`${path}?${q(`name = "${name}"`)}`);
      assert.equal(list.body.data.length, 1);
      assert.deepEqual(checkResponse('management', path, 'GET', 200, list.body), []);
    }
    assert.equal((await admin.patch(`/routers/${id}`, { cost: 9 })).status, 200);
    assert.equal((await admin.get(`/transit-routers/${id}`)).body.data.cost, 9);
    assert.equal((await admin.put(`/transit-routers/${id}`, { name })).status, 200);
    assert.equal((await admin.get(`/routers/${id}`)).body.data.cost, 0);
    assertFieldError(await admin.post('/routers', { name: unique('x'), cost: 70000 }), 'cost');
    assert.equal((await admin.delete(`/routers/${id}`)).status, 200);
    assert.equal((await admin.get(`/transit-routers/${id}`)).status, 404);
  });

  test('edge routers are not transit routers', async () => {
    const id = await create('/edge-routers', { name: unique('edge-only') });
    assert.equal((await admin.get(`/routers/${id}`)).status, 404);
    assert.equal((await admin.get(`/transit-routers?${q(`id = "${id}"`)}`)).body.data.length, 0);
  });
});
