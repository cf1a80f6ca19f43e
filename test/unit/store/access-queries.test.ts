/**
 * The store's query modules answer in domain values (docs/design.md, "Store"): permissions as booleans,
 * config data parsed, counts as numbers, sorted id lists; absent things as undefined or empty, never a throw.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openTestStore, type TestStore } from '../../harness/store.js';
import {
  allConfigs,
  apiSessionAccess,
  entitiesSelectedBy,
  identityIdByIdOrName,
  policiesGranting,
  servicesGrantedBy,
} from '../../../src/store/access.js';
import { countRows } from '../../../src/store/counts.js';
import { routerIdentityExists, systemEdgeRouterPolicyExists } from '../../../src/store/router-identities.js';
import { allOf, idIn, verifiedRouters, type Scope } from '../../../src/store/scopes.js';
import {
  configTypeOfConfig,
  deleteIdentityServiceConfigs,
  identityServiceConfigs,
  putIdentityServiceConfig,
  serviceExists,
} from '../../../src/store/service-configs.js';
import type { Ctx } from '../../../src/model/ctx.js';
import { createEntity, updateEntity } from '../../../src/model/crud.js';
import { edgeRouterPoliciesOf, servicePoliciesOf } from '../../../src/model/access/queries.js';
import { EDGE_ROUTER_POLICY, matchSideOf, SERVICE_POLICY } from '../../../src/model/policy/kinds.js';
import {
  configs,
  configTypes,
  edgeRouterPolicies,
  edgeRouters,
  identities,
  servicePolicies,
  services,
} from '../../../src/model/resources/index.js';

const SP_SERVICE = matchSideOf(SERVICE_POLICY, 'service');
const ERP_ROUTER = matchSideOf(EDGE_ROUTER_POLICY, 'edgeRouter');

let testStore: TestStore;
let ctx: Ctx;
const ids = {
  alice: '',
  s1: '',
  s2: '',
  s3: '',
  dial: '',
  bind: '',
  dial2: '',
  typeA: '',
  typeB: '',
  cfgA: '',
  cfgA2: '',
  cfgB: '',
  er1: '',
  er2: '',
  erp: '',
};

before(async () => {
  testStore = await openTestStore('edgectl-store-q-');
  ({ ctx } = testStore);
  ids.typeA = await createEntity(ctx, configTypes, { name: 'type-a' });
  ids.typeB = await createEntity(ctx, configTypes, { name: 'type-b' });
  ids.cfgA = await createEntity(ctx, configs, {
    name: 'cfg-a',
    configTypeId: ids.typeA,
    data: { port: 80, tags: ['x'] },
  });
  ids.cfgA2 = await createEntity(ctx, configs, { name: 'cfg-a2', configTypeId: ids.typeA, data: { port: 81 } });
  ids.cfgB = await createEntity(ctx, configs, { name: 'cfg-b', configTypeId: ids.typeB, data: { on: true } });
  ids.alice = await createEntity(ctx, identities, {
    name: 'alice',
    type: 'User',
    isAdmin: false,
    roleAttributes: ['sales'],
  });
  ids.s1 = await createEntity(ctx, services, { name: 's1', encryptionRequired: true, roleAttributes: ['crm'] });
  ids.s2 = await createEntity(ctx, services, { name: 's2', encryptionRequired: true, roleAttributes: ['crm'] });
  ids.s3 = await createEntity(ctx, services, { name: 's3', encryptionRequired: true, roleAttributes: ['other'] });
  ids.dial = await createEntity(ctx, servicePolicies, {
    name: 'dial',
    type: 'Dial',
    semantic: 'AnyOf',
    identityRoles: ['#sales'],
    serviceRoles: ['#crm'],
  });
  ids.bind = await createEntity(ctx, servicePolicies, {
    name: 'bind',
    type: 'Bind',
    semantic: 'AnyOf',
    identityRoles: [`@${ids.alice}`],
    serviceRoles: [`@${ids.s1}`],
  });
  ids.dial2 = await createEntity(ctx, servicePolicies, {
    name: 'dial2',
    type: 'Dial',
    semantic: 'AnyOf',
    identityRoles: ['#nobody'],
    serviceRoles: ['#other'],
  });
  ids.er1 = await createEntity(ctx, edgeRouters, { name: 'er1', roleAttributes: ['east'] });
  ids.er2 = await createEntity(ctx, edgeRouters, { name: 'er2', roleAttributes: ['west'], isTunnelerEnabled: true });
  ids.erp = await createEntity(ctx, edgeRouterPolicies, {
    name: 'erp',
    semantic: 'AllOf',
    identityRoles: ['#all'],
    edgeRouterRoles: ['#east'],
  });
});
after(async () => {
  await testStore.close();
});

describe('access queries', () => {
  test('the policies selecting an identity come back sorted, and only those that select it', async () => {
    assert.deepEqual(await servicePoliciesOf(ctx.db, ids.alice), [ids.dial, ids.bind].sort());
    const erps = await edgeRouterPoliciesOf(ctx.db, ids.alice);
    assert.ok(erps.includes(ids.erp));
    assert.deepEqual(erps, [...erps].sort());
  });

  test('grants fold Dial and Bind per service into booleans, in service id order', async () => {
    const grants = await servicesGrantedBy(ctx.db, SP_SERVICE, [ids.dial, ids.bind]);
    const expected = [
      { serviceId: ids.s1, dial: true, bind: true },
      { serviceId: ids.s2, dial: true, bind: false },
    ].sort((a, b) => (a.serviceId < b.serviceId ? -1 : 1));
    assert.deepEqual(grants, expected);
    assert.deepEqual(await servicesGrantedBy(ctx.db, SP_SERVICE, []), []);
  });

  test('granting policies are filtered by type and service', async () => {
    assert.deepEqual(await policiesGranting(ctx.db, SP_SERVICE, [ids.dial, ids.bind], ids.s1, 'Bind'), [
      { id: ids.bind, name: 'bind', type: 'Bind' },
    ]);
    assert.deepEqual(
      (await policiesGranting(ctx.db, SP_SERVICE, [ids.dial, ids.bind], ids.s1)).map((p) => p.id),
      [ids.dial, ids.bind].sort(),
    );
    assert.deepEqual(await policiesGranting(ctx.db, SP_SERVICE, [ids.dial, ids.bind], ids.s3), []);
    assert.deepEqual(await policiesGranting(ctx.db, SP_SERVICE, [], ids.s1), []);
  });

  test('edge routers of policies are a set of ids', async () => {
    const routers = await entitiesSelectedBy(ctx.db, ERP_ROUTER, [ids.erp]);
    assert.ok(routers instanceof Set);
    assert.ok(routers.has(ids.er1));
    assert.ok(!routers.has(ids.er2));
  });

  test('configs come with their data parsed', async () => {
    const cfg = (await allConfigs(ctx.db)).find((c) => c.id === ids.cfgA);
    assert.deepEqual(cfg, { id: ids.cfgA, name: 'cfg-a', typeId: ids.typeA, data: { port: 80, tags: ['x'] } });
  });

  test('an unknown API session is undefined', async () => {
    assert.equal(await apiSessionAccess(ctx.db, 'no-such-session'), undefined);
  });

  test('an identity is found by id, then by name', async () => {
    assert.equal(await identityIdByIdOrName(ctx.db, ids.alice), ids.alice);
    assert.equal(await identityIdByIdOrName(ctx.db, 'alice'), ids.alice);
    assert.equal(await identityIdByIdOrName(ctx.db, 'nobody'), undefined);
  });
});

describe('identity service configs', () => {
  test('a second config of the same type replaces the first; removal by pair, by service and all', async () => {
    assert.equal(await serviceExists(ctx.db, ids.s1), true);
    assert.equal(await serviceExists(ctx.db, 'nope'), false);
    assert.equal(await configTypeOfConfig(ctx.db, ids.cfgA), ids.typeA);
    assert.equal(await configTypeOfConfig(ctx.db, 'nope'), undefined);
    const put = (serviceId: string, configId: string, configTypeId: string) =>
      putIdentityServiceConfig(ctx.db, { identityId: ids.alice, serviceId, configTypeId, configId });
    await put(ids.s1, ids.cfgA, ids.typeA);
    await put(ids.s1, ids.cfgA2, ids.typeA);
    await put(ids.s1, ids.cfgB, ids.typeB);
    await put(ids.s2, ids.cfgB, ids.typeB);
    const pairs = async () =>
      (await identityServiceConfigs(ctx.db, ids.alice)).map((r) => `${r.serviceName}/${r.configName}`).sort();
    assert.deepEqual(await pairs(), ['s1/cfg-a2', 's1/cfg-b', 's2/cfg-b']);
    await deleteIdentityServiceConfigs(ctx.db, ids.alice, { serviceId: ids.s1, configId: ids.cfgB });
    assert.deepEqual(await pairs(), ['s1/cfg-a2', 's2/cfg-b']);
    await deleteIdentityServiceConfigs(ctx.db, ids.alice, { serviceId: ids.s1 });
    assert.deepEqual(await pairs(), ['s2/cfg-b']);
    await deleteIdentityServiceConfigs(ctx.db, ids.alice);
    assert.deepEqual(await pairs(), []);
  });
});

describe('tunneler router records and counts', () => {
  test('a tunneler-enabled router has its system policy and Router identity; a plain one has neither', async () => {
    assert.equal(await systemEdgeRouterPolicyExists(ctx.db, ids.er2), true);
    assert.equal(await routerIdentityExists(ctx.db, ids.er2), true);
    assert.equal(await systemEdgeRouterPolicyExists(ctx.db, ids.er1), false);
    assert.equal(await routerIdentityExists(ctx.db, ids.er1), false);
    // Turning tunneling off removes both.
    await updateEntity(ctx, edgeRouters, ids.er2, { isTunnelerEnabled: false }, 'patch');
    assert.equal(await systemEdgeRouterPolicyExists(ctx.db, ids.er2), false);
    assert.equal(await routerIdentityExists(ctx.db, ids.er2), false);
  });

  test('counts are numbers', async () => {
    const n = await countRows(ctx.db, 'services');
    assert.equal(typeof n, 'number');
    assert.equal(n, 3);
  });
});

describe('scopes', () => {
  const idsWhere = async (scope: Scope) =>
    (await ctx.db.selectFrom('edge_routers as t').select('t.id').where(scope).orderBy('t.id').execute()).map(
      (r: { id: string }) => r.id,
    );

  test('allOf combines, an empty id list selects nothing, and verified routers are only the verified ones', async () => {
    assert.deepEqual(await idsWhere(idIn([])), []);
    assert.deepEqual(await idsWhere(idIn([ids.er1])), [ids.er1]);
    assert.deepEqual(await idsWhere(verifiedRouters), []);
    assert.deepEqual(await idsWhere(allOf(idIn([ids.er1, ids.er2]), undefined, idIn([ids.er2]))), [ids.er2]);
    assert.equal(allOf(undefined, undefined), undefined);
  });
});
