/**
 * Services as identities see them (docs/reference-notes.md §2.3, §4.6, §4.7): the client service list and
 * detail hold exactly what the identity's service policies grant (table-driven over AllOf/AnyOf ×
 * `#attr`/`@id`/`#all`, re-checked after every kind of change and against the management listings),
 * `permissions`, `config` by config-type name with the API session's `configTypes` and the identity's
 * overrides, service updates, the caller's edge routers, policy advice and the management views.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createUser, startTestServer, type ApiClient, type TestServer, createRecord } from '../harness/server.js';
import { checkResponse } from '../harness/schemas.js';
import { assertFieldError, filterParam, unique } from '../harness/assert.js';
import { roleMatches, type Semantic } from '../../src/model/policy/roles.js';

let server: TestServer;
let admin: ApiClient;

before(async () => {
  server = await startTestServer();
  admin = await server.admin();
});
after(() => server.close());

const sorted = (xs: string[]) => [...xs].sort();

const create = (path: string, body: Record<string, unknown>): Promise<string> => createRecord(admin, path, body);
const service = (body: Record<string, unknown> = {}) =>
  create('/services', { name: unique('svc'), encryptionRequired: true, ...body });
const router = (body: Record<string, unknown> = {}) => create('/edge-routers', { name: unique('er'), ...body });
const dial = (identityRoles: string[], serviceRoles: string[], extra: Record<string, unknown> = {}) =>
  create('/service-policies', {
    name: unique('sp'),
    type: 'Dial',
    semantic: 'AnyOf',
    identityRoles,
    serviceRoles,
    ...extra,
  });
const bind = (identityRoles: string[], serviceRoles: string[], extra: Record<string, unknown> = {}) =>
  create('/service-policies', {
    name: unique('sp'),
    type: 'Bind',
    semantic: 'AnyOf',
    identityRoles,
    serviceRoles,
    ...extra,
  });

/** Every page of a client list (500 at a time). */
async function clientIds(client: ApiClient, query = ''): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (let offset = 0; ; offset += 500) {
    const res = await client.get(`/services?limit=500&offset=${offset}${query ? `&${query}` : ''}`);
    assert.equal(res.status, 200, res.text);
    for (const s of res.body.data) out.set(s.id, s.permissions);
    if (offset + 500 >= res.body.meta.pagination.totalCount) return out;
  }
}

/* ------------------------------------------------------------------------------------------------------ */

interface Subject {
  id: string;
  client: ApiClient;
}

/** The model of the table: four identities and four services with the same attributes per index. */
const ATTRIBUTES = [['red'], ['red', 'blue'], ['blue', 'green'], []];
const model = { identities: [] as Subject[], services: [] as string[], policies: [] as string[] };

/**
 * What every model identity sees equals the rule (§2.2, §2.3) applied to the stored policies, services and
 * identities: through the default page (memory path), a filtered list (SQL path), the detail, and the
 * management `/identities/{id}/services` listing.
 */
async function verifyViews(label: string): Promise<void> {
  const all = async (path: string) => (await admin.get(`${path}?limit=500`)).body.data as any[];
  const policies = (await all('/service-policies')).map((p) => ({
    type: p.type as string,
    semantic: p.semantic as Semantic,
    identityRoles: p.identityRoles as string[],
    serviceRoles: p.serviceRoles as string[],
  }));
  const services = (await all('/services')).map((s) => ({
    id: s.id as string,
    roleAttributes: (s.roleAttributes ?? []) as string[],
  }));
  for (const subject of model.identities) {
    const identity = (await admin.get(`/identities/${subject.id}`)).body.data;
    const me = { id: subject.id, roleAttributes: identity.roleAttributes ?? [] };
    const expected = new Map<string, string[]>();
    for (const s of services) {
      const types = new Set(
        policies
          .filter((p) => roleMatches(p.identityRoles, p.semantic, me) && roleMatches(p.serviceRoles, p.semantic, s))
          .map((p) => p.type),
      );
      if (types.size > 0)
        expected.set(
          s.id,
          ['Bind', 'Dial'].filter((t) => types.has(t)),
        );
    }
    const byMemory = await clientIds(subject.client);
    const bySql = await clientIds(subject.client, filterParam('true'));
    assert.deepEqual(
      new Map([...byMemory].sort()),
      new Map([...expected].sort()),
      `${label}: client list of ${subject.id}`,
    );
    assert.deepEqual(
      new Map([...bySql].sort()),
      new Map([...expected].sort()),
      `${label}: filtered client list of ${subject.id}`,
    );
    const mgmt = (await admin.get(`/identities/${subject.id}/services?limit=500`)).body.data.map((s: any) => s.id);
    assert.deepEqual(sorted(mgmt), sorted([...expected.keys()]), `${label}: /identities/${subject.id}/services`);
    for (const s of model.services) {
      const d = await subject.client.get(`/services/${s}`);
      if (expected.has(s)) {
        assert.equal(d.status, 200, `${label}: detail ${s}`);
        assert.deepEqual(d.body.data.permissions, expected.get(s));
      } else assert.equal(d.status, 404, `${label}: detail ${s} is hidden`);
    }
  }
}

/** Role lists with `@{n}` for the n-th model entity; what each selects is worked out in the policies test. */
const ROLE_TABLE: string[][] = [
  ['#red'],
  ['#red', '#blue'],
  ['@{2}'],
  ['#green', '@{0}'],
  ['#red', '#green', '@{3}'],
  ['#all'],
  [],
];

const resolveRoles = (roles: string[], ids: string[]) =>
  roles.map((r) => r.replace(/^@\{(\d)\}$/, (_m, n: string) => `@${ids[Number(n)]}`));

describe('the client service list holds exactly what policies grant', () => {
  before(async () => {
    for (const [i, attrs] of ATTRIBUTES.entries()) {
      const u = await createUser(server, admin, { identity: { name: unique(`cs-id-${i}`), roleAttributes: attrs } });
      model.identities.push({ id: u.id, client: u.client });
      model.services.push(await service({ name: unique(`cs-svc-${i}`), roleAttributes: attrs }));
    }
  });

  test('nothing is visible without a policy; admins get no implicit access either', async () => {
    await verifyViews('no policies');
    const adminClient = server.client('client');
    await adminClient.login('admin', 'admin-Passw0rd!');
    const res = await adminClient.get('/services');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, []);
    assert.equal((await adminClient.get(`/services/${model.services[0]}`)).status, 404);
  });

  test('AllOf and AnyOf × #attr, @id, #all on both sides (Dial and Bind)', async () => {
    for (const semantic of ['AllOf', 'AnyOf'] as const) {
      for (const [n, roles] of ROLE_TABLE.entries()) {
        const type = n % 2 === 0 ? 'Dial' : 'Bind';
        const identityRoles = resolveRoles(
          roles,
          model.identities.map((s) => s.id),
        );
        // The service side uses the next row, so the two sides differ.
        const serviceRoles = resolveRoles(ROLE_TABLE[(n + 1) % ROLE_TABLE.length]!, model.services);
        model.policies.push(
          await create('/service-policies', {
            name: unique(`cs-${semantic}`),
            type,
            semantic,
            identityRoles,
            serviceRoles,
          }),
        );
      }
      await verifyViews(`after the ${semantic} policies`);
    }
  });

  test('after policy updates and patches', async () => {
    const [a, b, c] = [model.policies[0]!, model.policies[3]!, model.policies[8]!];
    const name = (await admin.get(`/service-policies/${a}`)).body.data.name;
    assert.equal(
      (
        await admin.put(`/service-policies/${a}`, {
          name,
          type: 'Bind',
          semantic: 'AnyOf',
          identityRoles: ['#green'],
          serviceRoles: ['#blue'],
        })
      ).status,
      200,
    );
    assert.equal((await admin.patch(`/service-policies/${b}`, { semantic: 'AllOf' })).status, 200);
    assert.equal(
      (await admin.patch(`/service-policies/${c}`, { identityRoles: [`@${model.identities[3]!.id}`] })).status,
      200,
    );
    await verifyViews('after policy update');
  });

  test('after identities and services change their role attributes', async () => {
    assert.equal(
      (await admin.patch(`/identities/${model.identities[3]!.id}`, { roleAttributes: ['red', 'green'] })).status,
      200,
    );
    assert.equal((await admin.patch(`/identities/${model.identities[0]!.id}`, { roleAttributes: [] })).status, 200);
    assert.equal((await admin.patch(`/services/${model.services[3]}`, { roleAttributes: ['blue'] })).status, 200);
    assert.equal((await admin.patch(`/services/${model.services[1]}`, { roleAttributes: [] })).status, 200);
    await verifyViews('after attribute change');
  });

  test('after new services appear and entities are deleted', async () => {
    model.services.push(await service({ name: unique('cs-svc-new'), roleAttributes: ['red', 'green'] }));
    await verifyViews('after service create');
    const gone = model.services[2]!;
    assert.equal((await admin.delete(`/services/${gone}`)).status, 200);
    model.services = model.services.filter((s) => s !== gone);
    await verifyViews('after service delete');
    for (const id of [model.policies[5]!, model.policies[12]!])
      assert.equal((await admin.delete(`/service-policies/${id}`)).status, 200);
    await verifyViews('after policy delete');
  });

  test('the list pages, filters, sorts and role-filters like any list; shapes match the reference', async () => {
    const subject = model.identities[1]!;
    const all = [...(await clientIds(subject.client)).keys()];
    assert.ok(all.length >= 2, 'the subject sees at least two services');
    const page = await subject.client.get('/services?limit=1&offset=1');
    assert.equal(page.body.data.length, 1);
    assert.deepEqual(page.body.meta.pagination, { limit: 1, offset: 1, totalCount: all.length });
    assert.equal(page.body.data[0].id, sorted(all)[1]);
    assert.ok(page.body.meta.filterableFields.includes('roleAttributes'));
    assert.deepEqual(checkResponse('client', '/services', 'GET', 200, page.body), []);
    const byName = await subject.client.get(`/services?${filterParam(`id = "${all[0]}"`)}`);
    assert.deepEqual(
      byName.body.data.map((s: any) => s.id),
      [all[0]],
    );
    const desc = await subject.client.get(`/services?limit=500&sort=${encodeURIComponent('name desc')}`);
    const names = desc.body.data.map((s: any) => s.name);
    assert.deepEqual(names, [...names].sort().reverse());
    const role = await subject.client.get(
      `/services?roleFilter=${encodeURIComponent(`@${all[0]}`)}&roleFilter=${encodeURIComponent('@not-granted')}&roleSemantic=AnyOf`,
    );
    assert.deepEqual(
      role.body.data.map((s: any) => s.id),
      [all[0]],
    );
    assert.equal((await subject.client.get(`/services?${filterParam('nope = 1')}`)).status, 400);
    const d = await subject.client.get(`/services/${all[0]}`);
    assert.deepEqual(checkResponse('client', '/services/{id}', 'GET', 200, d.body), []);
    assert.deepEqual(d.body.data.postureQueries, []);
    assert.deepEqual(d.body.data.config, {});
    const anonymous = await server.client('client').get('/services');
    assert.equal(anonymous.status, 401);
  });
});

/* ------------------------------------------------------------------------------------------------------ */

describe('permissions, configs and the management views', () => {
  test('permissions list Bind before Dial', async () => {
    const tag = unique('perm');
    const u = await createUser(server, admin, { identity: { roleAttributes: [tag] } });
    const s = await service();
    await dial([`#${tag}`], [`@${s}`]);
    assert.deepEqual((await u.client.get(`/services/${s}`)).body.data.permissions, ['Dial']);
    await bind([`#${tag}`], [`@${s}`]);
    assert.deepEqual((await u.client.get(`/services/${s}`)).body.data.permissions, ['Bind', 'Dial']);
    const list = await u.client.get(`/services?${filterParam(`id = "${s}"`)}`);
    assert.deepEqual(list.body.data[0].permissions, ['Bind', 'Dial']);
  });

  test('config is keyed by config-type name and filtered by the configTypes given at authenticate; overrides win', async () => {
    const typeA = unique('intercept.v1');
    const typeB = unique('host.v1');
    const aId = await create('/config-types', { name: typeA });
    const bId = await create('/config-types', { name: typeB });
    const a1 = await create('/configs', { name: unique('a1'), configTypeId: aId, data: { port: 1 } });
    const b1 = await create('/configs', { name: unique('b1'), configTypeId: bId, data: { host: 'x' } });
    const a2 = await create('/configs', { name: unique('a2'), configTypeId: aId, data: { port: 2 } });
    const s = await service({ configs: [a1, b1] });
    const u = await createUser(server, admin);
    await dial([`@${u.id}`], [`@${s}`]);
    const loginWith = async (configTypes: unknown) => {
      const c = server.client('client');
      const res = await c.login(u.username, u.password, { configTypes });
      assert.equal(res.status, 200, res.text);
      return c;
    };
    const configOf = async (c: ApiClient) => {
      const detail = (await c.get(`/services/${s}`)).body.data.config;
      const listed = (await c.get('/services')).body.data.find((x: any) => x.id === s).config;
      assert.deepEqual(listed, detail, 'list and detail agree');
      return detail;
    };
    assert.deepEqual(await configOf(u.client), {});
    assert.deepEqual(await configOf(await loginWith([typeA])), { [typeA]: { port: 1 } });
    const byIdAndUnknown = await loginWith([bId, 'no-such-type', typeB]);
    assert.deepEqual(await configOf(byIdAndUnknown), { [typeB]: { host: 'x' } });
    // The session keeps config-type ids: names resolved, unknown entries dropped, `all` kept (§4.3).
    assert.deepEqual((await byIdAndUnknown.get('/current-api-session')).body.data.configTypes, [bId]);
    assert.deepEqual((await (await loginWith([typeA, 'all'])).get('/current-api-session')).body.data.configTypes, [
      aId,
      'all',
    ]);
    const everything = await loginWith(['all']);
    assert.deepEqual(await configOf(everything), { [typeA]: { port: 1 }, [typeB]: { host: 'x' } });

    // The identity's own config of type A replaces the service's.
    assert.equal(
      (await admin.post(`/identities/${u.id}/service-configs`, [{ serviceId: s, configId: a2 }])).status,
      200,
    );
    assert.deepEqual(await configOf(everything), { [typeA]: { port: 2 }, [typeB]: { host: 'x' } });
    const listed = await admin.get(`/identities/${u.id}/service-configs`);
    assert.equal(listed.status, 200);
    assert.deepEqual(
      listed.body.data.map((x: any) => [x.serviceId, x.configId, x.service.id, x.config.id]),
      [[s, a2, s, a2]],
    );
    assert.deepEqual(checkResponse('management', '/identities/{id}/service-configs', 'GET', 200, listed.body), []);
    // A second config of the same type replaces the assignment; unknown ids are field errors.
    assert.equal(
      (await admin.post(`/identities/${u.id}/service-configs`, [{ serviceId: s, configId: a1 }])).status,
      200,
    );
    assert.deepEqual(
      (await admin.get(`/identities/${u.id}/service-configs`)).body.data.map((x: any) => x.configId),
      [a1],
    );
    assert.equal(
      (await admin.post(`/identities/${u.id}/service-configs`, [{ serviceId: s, configId: 'nope' }])).body.error.cause
        .field,
      'configId',
    );
    assert.equal(
      (await admin.post(`/identities/${u.id}/service-configs`, [{ serviceId: 'nope', configId: a1 }])).body.error.cause
        .field,
      'serviceId',
    );
    assert.equal((await admin.post('/identities/nope/service-configs', [{ serviceId: s, configId: a1 }])).status, 404);
    assert.equal(
      (await admin.post(`/identities/${u.id}/service-configs`, [{ serviceId: s, configId: a2 }])).status,
      200,
    );
    assert.equal(
      (await admin.delete(`/identities/${u.id}/service-configs`, { body: [{ serviceId: s, configId: a2 }] })).status,
      200,
    );
    assert.deepEqual((await admin.get(`/identities/${u.id}/service-configs`)).body.data, []);
    assert.deepEqual(await configOf(everything), { [typeA]: { port: 1 }, [typeB]: { host: 'x' } });
    assert.equal(
      (await admin.post(`/identities/${u.id}/service-configs`, [{ serviceId: s, configId: a2 }])).status,
      200,
    );
    assert.equal((await admin.delete(`/identities/${u.id}/service-configs`)).status, 200);
    assert.deepEqual((await admin.get(`/identities/${u.id}/service-configs`)).body.data, []);

    // A config created after the services were last read can be an override at once.
    assert.deepEqual(await configOf(everything), { [typeA]: { port: 1 }, [typeB]: { host: 'x' } });
    const a3 = await create('/configs', { name: unique('a3'), configTypeId: aId, data: { port: 3 } });
    assert.equal(
      (await admin.post(`/identities/${u.id}/service-configs`, [{ serviceId: s, configId: a3 }])).status,
      200,
    );
    assert.deepEqual(await configOf(everything), { [typeA]: { port: 3 }, [typeB]: { host: 'x' } });
    assert.equal((await admin.delete(`/identities/${u.id}/service-configs`)).status, 200);

    // Config data and config type names are read live.
    assert.equal((await admin.patch(`/configs/${b1}`, { data: { host: 'y' } })).status, 200);
    const renamed = unique('renamed.v1');
    assert.equal((await admin.patch(`/config-types/${aId}`, { name: renamed })).status, 200);
    assert.deepEqual(await configOf(everything), { [renamed]: { port: 1 }, [typeB]: { host: 'y' } });

    // Management listing: configTypes as a comma list, permissions and config as asIdentity (id or name).
    const m = await admin.get(
      `/services?${filterParam(`id = "${s}"`)}&asIdentity=${u.username}&configTypes=${encodeURIComponent(`${renamed},${typeB}`)}`,
    );
    assert.equal(m.status, 200, m.text);
    assert.deepEqual(m.body.data[0].permissions, ['Dial']);
    assert.deepEqual(m.body.data[0].config, { [renamed]: { port: 1 }, [typeB]: { host: 'y' } });
    assert.deepEqual(checkResponse('management', '/services', 'GET', 200, m.body), []);
  });

  test('management GET /services lists every service, with the view of the caller or asIdentity', async () => {
    const u = await createUser(server, admin);
    const granted = await service();
    const other = await service();
    await bind([`@${u.id}`], [`@${granted}`]);
    const filter = filterParam(`id in ["${granted}", "${other}"]`);
    const asAdmin = await admin.get(`/services?${filter}`);
    assert.deepEqual(
      asAdmin.body.data.map((s: any) => [s.id, s.permissions]).sort(),
      [
        [granted, []],
        [other, []],
      ].sort(),
    );
    const asUser = await admin.get(`/services?${filter}&asIdentity=${u.id}`);
    assert.deepEqual(
      asUser.body.data.map((s: any) => [s.id, s.permissions]).sort(),
      [
        [granted, ['Bind']],
        [other, []],
      ].sort(),
    );
    assert.equal((await admin.get('/services?asIdentity=no-such-identity')).status, 404);
    const d = await admin.get(`/services/${granted}`);
    assert.equal(d.status, 200);
    assert.deepEqual(checkResponse('management', '/services/{id}', 'GET', 200, d.body), []);
  });

  test('service update, patch and delete on the Client API are for admins only', async () => {
    const u = await createUser(server, admin);
    const s = await service();
    await dial([`@${u.id}`], [`@${s}`]);
    assert.equal((await u.client.patch(`/services/${s}`, { name: unique('x') })).status, 401);
    assert.equal((await u.client.delete(`/services/${s}`)).status, 401);
    const adminClient = admin.other('client');
    const name = unique('renamed-svc');
    assert.equal((await adminClient.patch(`/services/${s}`, { name })).status, 200);
    assert.equal((await u.client.get(`/services/${s}`)).body.data.name, name);
    assert.equal(
      (await adminClient.put(`/services/${s}`, { name, encryptionRequired: true, roleAttributes: ['z'] })).status,
      200,
    );
    assert.equal((await adminClient.delete(`/services/${s}`)).status, 200);
    assert.equal((await u.client.get(`/services/${s}`)).status, 404);
  });

  test('terminators: management CRUD, both service listings, the client record without hosting details', async () => {
    const u = await createUser(server, admin);
    const s = await service();
    await dial([`@${u.id}`], [`@${s}`]);
    const c = await u.client.get(`/services/${s}/terminators`);
    assert.equal(c.status, 200);
    assert.deepEqual(c.body.data, []);
    assert.deepEqual(checkResponse('client', '/services/{id}/terminators', 'GET', 200, c.body), []);
    const er = await router();
    const tr = await create('/transit-routers', { name: unique('tr') });
    const t1 = await create('/terminators', { service: s, router: er, binding: 'edge', address: 'hosted:a', cost: 10 });
    const t2 = await create('/terminators', {
      service: s,
      router: tr,
      binding: 'transport',
      address: 'tcp:10.0.0.1:22',
      precedence: 'required',
      identity: 'host-1',
    });
    const d = await admin.get(`/terminators/${t1}`);
    assert.equal(d.status, 200);
    assert.deepEqual(checkResponse('management', '/terminators/{id}', 'GET', 200, d.body), []);
    assert.deepEqual(
      [d.body.data.serviceId, d.body.data.service.id, d.body.data.routerId, d.body.data.router.id],
      [s, s, er, er],
    );
    assert.deepEqual(
      [d.body.data.cost, d.body.data.dynamicCost, d.body.data.precedence, d.body.data.identity],
      [10, 10, 'default', ''],
    );
    assert.equal((await admin.get(`/terminators/${t2}`)).body.data.router.entity, 'routers');
    assertFieldError(
      await admin.post('/terminators', { service: 'nope', router: er, binding: 'edge', address: 'x' }),
      'service',
    );
    assertFieldError(
      await admin.post('/terminators', { service: s, router: 'nope', binding: 'edge', address: 'x' }),
      'router',
    );
    assertFieldError(await admin.post('/terminators', { service: s, router: er, address: 'x' }), 'binding');
    assert.equal((await admin.patch(`/terminators/${t1}`, { cost: 20 })).status, 200);
    assert.equal((await admin.get(`/terminators/${t1}`)).body.data.cost, 20);
    const listed = await admin.get(`/terminators?${filterParam(`service = "${s}" and binding = "edge"`)}`);
    assert.deepEqual(
      listed.body.data.map((t: any) => t.id),
      [t1],
    );
    assert.deepEqual(checkResponse('management', '/terminators', 'GET', 200, listed.body), []);
    const m = await admin.get(`/services/${s}/terminators`);
    assert.deepEqual(sorted(m.body.data.map((t: any) => t.id)), sorted([t1, t2]));
    assert.deepEqual(checkResponse('management', '/services/{id}/terminators', 'GET', 200, m.body), []);
    const mine = await u.client.get(`/services/${s}/terminators`);
    assert.deepEqual(sorted(mine.body.data.map((t: any) => t.id)), sorted([t1, t2]));
    assert.deepEqual(checkResponse('client', '/services/{id}/terminators', 'GET', 200, mine.body), []);
    assert.ok(
      mine.body.data.every((t: any) => t.address === undefined && t.binding === undefined),
      'no hosting details for clients',
    );
    assert.equal((await u.client.get(`/services/${await service()}/terminators`)).status, 404);
    assert.equal((await u.client.other('management').get('/terminators')).status, 401);
    assert.equal((await admin.delete(`/transit-routers/${tr}`)).status, 200);
    assert.equal((await admin.get(`/terminators/${t2}`)).status, 404, 'terminators go with their router');
    const t3 = await create('/terminators', { service: s, router: er, binding: 'edge', address: 'hosted:b' });
    assert.equal((await admin.delete(`/terminators/${t3}`)).status, 200);
    assert.equal((await admin.get(`/terminators/${t3}`)).status, 404);
    assert.equal((await admin.delete(`/services/${s}`)).status, 200);
    assert.equal((await admin.get(`/terminators/${t1}`)).status, 404, 'terminators go with their service');
  });
});

/* ------------------------------------------------------------------------------------------------------ */

describe('service updates', () => {
  test('lastChangeAt moves whenever the identity’s access may have changed, and only then', async () => {
    const tag = unique('upd');
    const u = await createUser(server, admin, { identity: { roleAttributes: [tag] } });
    const last = async () => {
      const res = await u.client.get('/current-api-session/service-updates');
      assert.equal(res.status, 200);
      assert.deepEqual(checkResponse('client', '/current-api-session/service-updates', 'GET', 200, res.body), []);
      return res.body.data.lastChangeAt as string;
    };
    const session = (await u.client.get('/current-api-session')).body.data;
    let before = await last();
    assert.ok(before >= session.createdAt, 'never before the API session');
    assert.equal(await last(), before, 'stable without changes');
    const s = await service();
    const moved = async (what: string, change: () => Promise<unknown>) => {
      // Time passes between changes (a millisecond is the stamps' resolution), without waiting for it.
      server.clock.advance(5);
      await change();
      const now = await last();
      assert.ok(now > before, `${what} moves lastChangeAt (${before} → ${now})`);
      before = now;
    };
    let policy = '';
    await moved('a policy granting a service', async () => (policy = await dial([`#${tag}`], [`@${s}`])));
    await moved('a policy update', () => admin.patch(`/service-policies/${policy}`, { type: 'Bind' }));
    await moved('a role attribute change of the identity', () =>
      admin.patch(`/identities/${u.id}`, { roleAttributes: [tag, 'more'] }),
    );
    await moved('a role attribute change of a service', () => admin.patch(`/services/${s}`, { roleAttributes: ['x'] }));
    await moved('a service rename', () => admin.patch(`/services/${s}`, { name: unique('svc') }));
    const typeId = await create('/config-types', { name: unique('t') });
    const config = await create('/configs', { name: unique('c'), configTypeId: typeId, data: { a: 1 } });
    await moved('a config added to the service', () => admin.patch(`/services/${s}`, { configs: [config] }));
    await moved('a config change', () => admin.patch(`/configs/${config}`, { data: { a: 2 } }));
    await moved('a policy delete', () => admin.delete(`/service-policies/${policy}`));
    assert.equal(await last(), before);
    assert.equal((await server.client('client').get('/current-api-session/service-updates')).status, 401);
  });
});

describe('current identity edge routers and policy advice', () => {
  const verify = (id: string) =>
    server.daemon.store.db.updateTable('edge_routers').set({ isVerified: 1 }).where('id', '=', id).execute();

  test('verified routers reachable through edge router policies; admins see every verified router', async () => {
    const tag = unique('cier');
    const u = await createUser(server, admin, { identity: { roleAttributes: [tag] } });
    const [r1, r2, r3] = [
      await router({ roleAttributes: [tag] }),
      await router({ roleAttributes: [tag] }),
      await router(),
    ];
    await verify(r1);
    await verify(r3);
    await create('/edge-router-policies', {
      name: unique('erp'),
      semantic: 'AnyOf',
      identityRoles: [`#${tag}`],
      edgeRouterRoles: [`#${tag}`],
    });
    const mine = await u.client.get('/current-identity/edge-routers');
    assert.equal(mine.status, 200, mine.text);
    assert.deepEqual(
      mine.body.data.map((r: any) => r.id),
      [r1],
    );
    assert.deepEqual(checkResponse('client', '/current-identity/edge-routers', 'GET', 200, mine.body), []);
    await verify(r2);
    assert.deepEqual(
      sorted((await u.client.get('/current-identity/edge-routers')).body.data.map((r: any) => r.id)),
      sorted([r1, r2]),
    );
    const adminClient = admin.other('client');
    const theirs = (await adminClient.get('/current-identity/edge-routers?limit=500')).body.data.map((r: any) => r.id);
    assert.ok(
      [r1, r2, r3].every((r) => theirs.includes(r)),
      'admins see every verified router',
    );
  });

  test('policy advice: Dial/Bind, router counts and the common routers with their online state', async () => {
    const u = await createUser(server, admin);
    const s = await service();
    const [shared1, shared2, onlyMine, onlyService] = [await router(), await router(), await router(), await router()];
    await create('/edge-router-policies', {
      name: unique('erp'),
      semantic: 'AnyOf',
      identityRoles: [`@${u.id}`],
      edgeRouterRoles: [`@${shared1}`, `@${shared2}`, `@${onlyMine}`],
    });
    await create('/service-edge-router-policies', {
      name: unique('serp'),
      semantic: 'AnyOf',
      serviceRoles: [`@${s}`],
      edgeRouterRoles: [`@${shared1}`, `@${shared2}`, `@${onlyService}`],
    });
    let advice = await admin.get(`/identities/${u.id}/policy-advice/${s}`);
    assert.equal(advice.status, 200, advice.text);
    assert.deepEqual(
      checkResponse('management', '/identities/{id}/policy-advice/{serviceId}', 'GET', 200, advice.body),
      [],
    );
    const a = advice.body.data;
    assert.equal(a.identityId, u.id);
    assert.equal(a.serviceId, s);
    assert.equal(a.identity.id, u.id);
    assert.equal(a.service.id, s);
    assert.equal(a.isDialAllowed, false);
    assert.equal(a.isBindAllowed, false);
    assert.equal(a.identityRouterCount, 3);
    assert.equal(a.serviceRouterCount, 3);
    assert.deepEqual(sorted(a.commonRouters.map((r: any) => r.id)), sorted([shared1, shared2]));
    assert.ok(
      a.commonRouters.every(
        (r: any) => r.isOnline === false && r.entity === 'edge-routers' && typeof r.name === 'string',
      ),
    );
    await bind([`@${u.id}`], [`@${s}`]);
    advice = await admin.get(`/identities/${u.id}/policy-advice/${s}`);
    assert.equal(advice.body.data.isBindAllowed, true);
    assert.equal(advice.body.data.isDialAllowed, false);
    assert.equal((await admin.get(`/identities/nope/policy-advice/${s}`)).status, 404);
    assert.equal((await admin.get(`/identities/${u.id}/policy-advice/nope`)).status, 404);
    assert.equal((await u.client.other('management').get(`/identities/${u.id}/policy-advice/${s}`)).status, 401);
  });
});
