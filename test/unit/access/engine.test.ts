/**
 * The access engine's caches never answer stale (docs/policy-engine.md, "Answering access per request"): on
 * a random model driven through the generic CRUD, the shared (warm) engine is asked before and after every
 * kind of change, and each answer must equal a fresh engine's and the rule's (§2.2, §2.3): granted services
 * with Dial/Bind, configs with overrides, session routers. A refused or rolled-back write must leave the
 * markers, and so the caches, as they were.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { withTx } from '../../../src/store/db.js';
import { openTestStore, type TestStore } from '../../harness/store.js';
import { readMarkers } from '../../../src/store/access-markers.js';
import { withDb, type Ctx } from '../../../src/model/ctx.js';
import { createEntity, deleteEntity, getEntity, updateEntity } from '../../../src/model/crud.js';
import type { ResourceDef } from '../../../src/model/resource.js';
import { roleMatches, type Semantic } from '../../../src/model/policy/roles.js';
import {
  configs,
  configTypes,
  edgeRouterPolicies,
  edgeRouters,
  identities,
  serviceEdgeRouterPolicies,
  servicePolicies,
  services,
} from '../../../src/model/resources/index.js';
import { AccessEngine, accessEngine } from '../../../src/model/access/engine.js';
import { configView, permissionsOf } from '../../../src/model/access/service-view.js';
import { sessionEdgeRouters, sessionEdgeRoutersNow } from '../../../src/model/services/session/session-routers.js';
import {
  assignIdentityServiceConfigs,
  removeIdentityServiceConfigs,
} from '../../../src/model/services/service-access/identity-service-configs.js';
import { rng } from '../../harness/random.js';

const rand = rng(7);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
const ATTRS = ['a', 'b', 'c', 'd'];
const someAttrs = () => ATTRS.filter(() => rand() < 0.4);
function roles(ids: string[]): string[] {
  const r = rand();
  if (r < 0.1) return ['#all'];
  const out = ATTRS.filter(() => rand() < 0.3).map((a) => `#${a}`);
  if (rand() < 0.3 && ids.length > 0) out.push(`@${pick(ids)}`);
  return out.length > 0 ? out : ['#a'];
}

let testStore: TestStore;
let ctx: Ctx;
const m = {
  identities: [] as string[],
  services: [] as string[],
  routers: [] as string[],
  sp: [] as string[],
  erp: [] as string[],
  serp: [] as string[],
  configs: [] as string[],
};
let n = 0;
const name = (p: string) => `${p}-${n++}`;

const newService = async () =>
  m.services.push(
    await createEntity(ctx, services, {
      name: name('svc'),
      encryptionRequired: true,
      roleAttributes: someAttrs(),
      configs: rand() < 0.5 ? [pick(m.configs)] : [],
    }),
  );
const newSp = async () =>
  m.sp.push(
    await createEntity(ctx, servicePolicies, {
      name: name('sp'),
      type: pick(['Dial', 'Bind']),
      semantic: pick(['AllOf', 'AnyOf']),
      identityRoles: roles(m.identities),
      serviceRoles: roles(m.services),
    }),
  );
const newErp = async () =>
  m.erp.push(
    await createEntity(ctx, edgeRouterPolicies, {
      name: name('erp'),
      semantic: pick(['AllOf', 'AnyOf']),
      identityRoles: roles(m.identities),
      edgeRouterRoles: roles(m.routers),
    }),
  );
const newSerp = async () =>
  m.serp.push(
    await createEntity(ctx, serviceEdgeRouterPolicies, {
      name: name('serp'),
      semantic: pick(['AllOf', 'AnyOf']),
      serviceRoles: roles(m.services),
      edgeRouterRoles: roles(m.routers),
    }),
  );

/** Everything the shared engine answers, for every identity. */
async function snapshot(engine: AccessEngine) {
  const out: Record<string, unknown> = {};
  const marks = await engine.markers(ctx);
  for (const id of m.identities) {
    const view = await engine.view(ctx, id, marks);
    const svc: Record<string, unknown> = {};
    for (const s of view.grants.ids) {
      svc[s] = {
        permissions: permissionsOf(view.grants.perms.get(s)),
        name: view.catalog.records.get(s)?.name,
        config: configView(view.catalog, s, view.identity.overrides, 'all'),
        routers: (await sessionEdgeRouters(ctx, marks, view.identity, s)).map((r) => r.name),
      };
    }
    out[id] = svc;
  }
  return out;
}

/** The rule applied to the stored entities (what the engine's grants must be). */
async function expectedGrants(): Promise<Record<string, Record<string, string[]>>> {
  const load = (def: ResourceDef, ids: string[]) => Promise.all(ids.map((id) => getEntity(ctx, def, id)));
  const [ids, svcs, sps] = await Promise.all([
    load(identities, m.identities),
    load(services, m.services),
    load(servicePolicies, m.sp),
  ]);
  const out: Record<string, Record<string, string[]>> = {};
  for (const i of ids) {
    const grants: Record<string, string[]> = {};
    for (const s of svcs) {
      const types = new Set(
        sps
          .filter(
            (p) =>
              roleMatches(p.identityRoles as string[], p.semantic as Semantic, i as never) &&
              roleMatches(p.serviceRoles as string[], p.semantic as Semantic, s as never),
          )
          .map((p) => p.type as string),
      );
      if (types.size > 0) grants[s.id as string] = ['Bind', 'Dial'].filter((t) => types.has(t));
    }
    out[i.id as string] = grants;
  }
  return out;
}

/**
 * The synchronous reads of the warm path (`markersNow`, `viewNow`, `sessionEdgeRoutersNow`): each answers nothing
 * or what the awaited read answers, and once the engine is warm, exactly the same entries.
 */
async function nowAgrees(engine: AccessEngine, label: string, warm: boolean): Promise<void> {
  const before = new Map(m.identities.map((id) => [id, engine.viewNow(ctx, id)]));
  const marks = await engine.markers(ctx);
  for (const id of m.identities) {
    const view = await engine.view(ctx, id, marks);
    const early = before.get(id);
    if (early)
      assert.deepEqual(
        { ...early, markers: undefined },
        { ...view, markers: undefined },
        `${label}: ${id}'s view read synchronously is the current one`,
      );
    const now = engine.viewNow(ctx, id);
    if (!warm) continue;
    assert.equal(engine.markersNow(ctx), marks, `${label}: the markers are read synchronously once read`);
    assert.ok(now, `${label}: ${id}'s warm view is read synchronously`);
    for (const k of ['identity', 'grants', 'catalog'] as const)
      assert.equal(now[k], view[k], `${label}: ${id}'s ${k} is the engine's entry`);
    for (const s of view.grants.ids)
      assert.equal(
        sessionEdgeRoutersNow(ctx, marks, view.identity, s),
        await sessionEdgeRouters(ctx, marks, view.identity, s),
        `${label}: the session routers of ${id} for ${s} are read synchronously`,
      );
  }
}

/** Warm the shared engine, apply a change, then the shared engine must agree with a fresh one and the rule. */
async function check(label: string, change: () => Promise<unknown>): Promise<void> {
  await snapshot(accessEngine(ctx));
  await nowAgrees(accessEngine(ctx), `${label} (warm, before)`, true);
  await change();
  // Right after the write, before anything is read again: nothing stale is answered synchronously.
  await nowAgrees(accessEngine(ctx), `${label} (after the write)`, false);
  const cached = await snapshot(accessEngine(ctx));
  assert.deepEqual(cached, await snapshot(new AccessEngine()), `${label}: the warm engine answers like a fresh one`);
  const rule = await expectedGrants();
  for (const [id, svc] of Object.entries(cached)) {
    const perms = Object.fromEntries(
      Object.entries(svc as Record<string, { permissions: string[] }>).map(([s, v]) => [s, v.permissions]),
    );
    assert.deepEqual(perms, rule[id], `${label}: grants of ${id} follow the rule`);
  }
}

before(async () => {
  testStore = await openTestStore('edgectl-access-');
  ({ ctx } = testStore);
  const types = [
    await createEntity(ctx, configTypes, { name: 'type-a' }),
    await createEntity(ctx, configTypes, { name: 'type-b' }),
  ];
  for (let i = 0; i < 4; i++)
    m.configs.push(await createEntity(ctx, configs, { name: name('cfg'), configTypeId: types[i % 2], data: { i } }));
  for (let i = 0; i < 8; i++)
    m.identities.push(
      await createEntity(ctx, identities, {
        name: name('id'),
        type: 'User',
        isAdmin: false,
        roleAttributes: someAttrs(),
      }),
    );
  for (let i = 0; i < 10; i++) await newService();
  for (let i = 0; i < 8; i++)
    m.routers.push(await createEntity(ctx, edgeRouters, { name: name('er'), roleAttributes: someAttrs() }));
  for (let i = 0; i < 8; i++) await newSp();
  for (let i = 0; i < 5; i++) await newErp();
  for (let i = 0; i < 4; i++) await newSerp();
});
after(async () => {
  await testStore.close();
});

describe('the access engine follows every kind of change', () => {
  test('policy creates, updates, patches and deletes of the three kinds', async () => {
    await check('service policy create', newSp);
    await check('service policy update', () =>
      updateEntity(
        ctx,
        servicePolicies,
        pick(m.sp),
        {
          name: name('sp'),
          type: 'Bind',
          semantic: 'AnyOf',
          identityRoles: roles(m.identities),
          serviceRoles: roles(m.services),
        },
        'update',
      ),
    );
    await check('service policy semantic', () =>
      updateEntity(ctx, servicePolicies, pick(m.sp), { semantic: pick(['AllOf', 'AnyOf']) }, 'patch'),
    );
    await check('service policy type', () =>
      updateEntity(ctx, servicePolicies, pick(m.sp), { type: pick(['Dial', 'Bind']) }, 'patch'),
    );
    await check('edge router policy create', newErp);
    await check('edge router policy patch', () =>
      updateEntity(ctx, edgeRouterPolicies, pick(m.erp), { edgeRouterRoles: roles(m.routers) }, 'patch'),
    );
    await check('service edge router policy create', newSerp);
    await check('service edge router policy patch', () =>
      updateEntity(
        ctx,
        serviceEdgeRouterPolicies,
        pick(m.serp),
        { serviceRoles: roles(m.services), semantic: 'AnyOf' },
        'patch',
      ),
    );
    for (const [list, def] of [
      [m.sp, servicePolicies],
      [m.erp, edgeRouterPolicies],
      [m.serp, serviceEdgeRouterPolicies],
    ] as const) {
      const id = list.splice(0, 1)[0]!;
      await check(`${def.name} delete`, () => deleteEntity(ctx, def, id));
    }
  });

  test('role attribute changes of identities, services and routers', async () => {
    for (let i = 0; i < 3; i++) {
      await check('identity attributes', () =>
        updateEntity(ctx, identities, pick(m.identities), { roleAttributes: someAttrs() }, 'patch'),
      );
      await check('service attributes', () =>
        updateEntity(ctx, services, pick(m.services), { roleAttributes: someAttrs() }, 'patch'),
      );
      await check('router attributes', () =>
        updateEntity(ctx, edgeRouters, pick(m.routers), { roleAttributes: someAttrs() }, 'patch'),
      );
    }
  });

  test('creates and deletes of identities, services and routers', async () => {
    await check('service create', newService);
    await check('router create', async () =>
      m.routers.push(await createEntity(ctx, edgeRouters, { name: name('er'), roleAttributes: someAttrs() })),
    );
    await check('identity create', async () =>
      m.identities.push(
        await createEntity(ctx, identities, {
          name: name('id'),
          type: 'User',
          isAdmin: false,
          roleAttributes: someAttrs(),
        }),
      ),
    );
    const s = m.services.splice(0, 1)[0]!;
    await check('service delete', () => deleteEntity(ctx, services, s));
    const r = m.routers.splice(0, 1)[0]!;
    await check('router delete', () => deleteEntity(ctx, edgeRouters, r));
    const i = m.identities.splice(0, 1)[0]!;
    await check('identity delete', () => deleteEntity(ctx, identities, i));
  });

  test('service renames, configs, config data, config type names and identity overrides', async () => {
    await check('service rename', () =>
      updateEntity(ctx, services, pick(m.services), { name: name('renamed') }, 'patch'),
    );
    await check('service configs', () =>
      updateEntity(ctx, services, pick(m.services), { configs: [m.configs[0]!, m.configs[1]!] }, 'patch'),
    );
    await check('config data', () => updateEntity(ctx, configs, m.configs[0]!, { data: { changed: true } }, 'patch'));
    const typeId = (await getEntity(ctx, configs, m.configs[1]!)).configTypeId as string;
    await check('config type rename', () => updateEntity(ctx, configTypes, typeId, { name: name('type') }, 'patch'));
    const identity = m.identities[0]!;
    await check('override assigned', () =>
      assignIdentityServiceConfigs(ctx, identity, [{ serviceId: m.services[0]!, configId: m.configs[2]! }]),
    );
    await check('override removed', () => removeIdentityServiceConfigs(ctx, identity, undefined));
  });

  test('a refused or rolled-back write changes neither the markers nor any answer', async () => {
    const before = await readMarkers(ctx.db);
    await assert.rejects(
      createEntity(ctx, servicePolicies, { name: name('sp'), type: 'Dial', identityRoles: ['@no-such-identity'] }),
    );
    await assert.rejects(
      withTx(ctx.db, async (trx) => {
        await createEntity(withDb(ctx, trx), servicePolicies, {
          name: name('sp'),
          type: 'Dial',
          semantic: 'AnyOf',
          identityRoles: ['#all'],
          serviceRoles: ['#all'],
        });
        throw new Error('abort');
      }),
    );
    assert.deepEqual(await readMarkers(ctx.db), before);
    assert.deepEqual(await snapshot(accessEngine(ctx)), await snapshot(new AccessEngine()));
  });
});
