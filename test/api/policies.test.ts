/**
 * Service policies, edge router policies and service edge router policies over the Management API: CRUD,
 * role validation (docs/reference-notes.md §2.1), `…RolesDisplay` (§2.5), `@id` removal on delete, and
 * a table-driven test of matching (§2.2: AllOf/AnyOf × `#attr`/`@id`/`#all`) checked through every
 * affected-entity listing after every kind of change.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createIdentity, startTestServer, type ApiClient, type TestServer, createRecord } from '../harness/server.js';
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

const q = filterParam;

const create = (path: string, body: Record<string, unknown>): Promise<string> => createRecord(admin, path, body);
const service = (body: Record<string, unknown> = {}) =>
  create('/services', { name: unique('svc'), encryptionRequired: true, ...body });
const router = (body: Record<string, unknown> = {}) => create('/edge-routers', { name: unique('er'), ...body });

type Collection = 'identities' | 'services' | 'edge-routers';

/** The three policy kinds as the wire shows them: their path, role lists and what each selects. */
const KINDS = {
  sp: {
    path: 'service-policies',
    extra: { type: 'Dial', semantic: 'AllOf' },
    sides: { identityRoles: 'identities', serviceRoles: 'services' },
  },
  erp: {
    path: 'edge-router-policies',
    extra: { semantic: 'AllOf' },
    sides: { identityRoles: 'identities', edgeRouterRoles: 'edge-routers' },
  },
  serp: {
    path: 'service-edge-router-policies',
    extra: { semantic: 'AllOf' },
    sides: { serviceRoles: 'services', edgeRouterRoles: 'edge-routers' },
  },
} as const satisfies Record<string, { path: string; extra: object; sides: Record<string, Collection> }>;
type KindName = keyof typeof KINDS;
const KIND_NAMES = Object.keys(KINDS) as KindName[];

describe('policy CRUD', () => {
  for (const k of KIND_NAMES) {
    const kind = KINDS[k];
    const sides = Object.keys(kind.sides);
    describe(kind.path, () => {
      test('create requires semantic; role lists default to empty; detail and list match the reference', async () => {
        const { semantic: _semantic, ...withoutSemantic } = kind.extra;
        assertFieldError(await admin.post(`/${kind.path}`, { name: unique(k), ...withoutSemantic }), 'semantic');
        const id = await create(`/${kind.path}`, { name: unique(k), ...kind.extra });
        const d = await admin.get(`/${kind.path}/${id}`);
        assert.equal(d.status, 200);
        assert.equal(d.body.data.semantic, 'AllOf');
        for (const s of sides) {
          assert.deepEqual(d.body.data[s], []);
          assert.deepEqual(d.body.data[`${s}Display`], []);
        }
        assert.deepEqual(checkResponse('management', `/${kind.path}/{id}`, 'GET', 200, d.body), []);
        const list = await admin.get(`/${kind.path}?${q(`id = "${id}"`)}`);
        assert.equal(list.body.data.length, 1);
        assert.deepEqual(checkResponse('management', `/${kind.path}`, 'GET', 200, list.body), []);
      });

      test('role entries are validated: prefix, #all alone, existing @ids; semantic in any case', async () => {
        for (const s of sides) {
          assertFieldError(await admin.post(`/${kind.path}`, { name: unique(k), ...kind.extra, [s]: ['noprefix'] }), s);
          assertFieldError(await admin.post(`/${kind.path}`, { name: unique(k), ...kind.extra, [s]: ['#'] }), s);
          assertFieldError(
            await admin.post(`/${kind.path}`, { name: unique(k), ...kind.extra, [s]: ['#all', '#x'] }),
            s,
          );
          const missing = await admin.post(`/${kind.path}`, {
            name: unique(k),
            ...kind.extra,
            [s]: ['@no-such-entity'],
          });
          assertFieldError(missing, s);
          assert.match(missing.body.error.cause.reason, /no .* found with the given ids/);
        }
        assertFieldError(
          await admin.post(`/${kind.path}`, { name: unique(k), ...kind.extra, semantic: 'OneOf' }),
          'semantic',
        );
        assertFieldError(await admin.post(`/${kind.path}`, { ...kind.extra }), 'name');
        const id = await create(`/${kind.path}`, { name: unique(k), ...kind.extra, semantic: 'anyof' });
        assert.equal((await admin.get(`/${kind.path}/${id}`)).body.data.semantic, 'AnyOf');
        assertFieldError(await admin.patch(`/${kind.path}/${id}`, { [sides[0]!]: ['bad'] }), sides[0]!);
        const name = unique('dup');
        await create(`/${kind.path}`, { name, ...kind.extra });
        assertFieldError(await admin.post(`/${kind.path}`, { name, ...kind.extra }), 'name');
      });

      test('update replaces the role lists, patch changes only what is sent, delete removes', async () => {
        const id = await create(`/${kind.path}`, {
          name: unique(k),
          ...kind.extra,
          semantic: 'AnyOf',
          [sides[0]!]: ['#a'],
          [sides[1]!]: ['#b'],
        });
        assert.equal((await admin.patch(`/${kind.path}/${id}`, { [sides[0]!]: ['#c', '#d'] })).status, 200);
        let d = (await admin.get(`/${kind.path}/${id}`)).body.data;
        assert.deepEqual(d[sides[0]!], ['#c', '#d']);
        assert.deepEqual(d[sides[1]!], ['#b']);
        assert.equal(d.semantic, 'AnyOf');
        assert.equal(
          (await admin.put(`/${kind.path}/${id}`, { name: d.name, ...kind.extra, [sides[1]!]: ['#all'] })).status,
          200,
        );
        d = (await admin.get(`/${kind.path}/${id}`)).body.data;
        assert.deepEqual(d[sides[0]!], []);
        assert.deepEqual(d[sides[1]!], ['#all']);
        assert.equal(d.semantic, 'AllOf');
        assert.equal((await admin.delete(`/${kind.path}/${id}`)).status, 200);
        assert.equal((await admin.get(`/${kind.path}/${id}`)).status, 404);
        for (const c of Object.values(kind.sides))
          assert.equal((await admin.get(`/${kind.path}/${id}/${c}`)).status, 404);
      });
    });
  }

  test('a service policy needs a type of Dial or Bind; filters see type, roles and matched services', async () => {
    assertFieldError(await admin.post('/service-policies', { name: unique('sp'), semantic: 'AllOf' }), 'type');
    assertFieldError(
      await admin.post('/service-policies', { name: unique('sp'), type: 'Invalid', semantic: 'AllOf' }),
      'type',
    );
    const tag = unique('ft');
    const svc = await service({ roleAttributes: [tag] });
    const id = await create('/service-policies', {
      name: unique('sp'),
      type: 'Bind',
      semantic: 'AllOf',
      serviceRoles: [`#${tag}`],
      postureCheckRoles: ['#mfa'],
    });
    const byType = await admin.get(`/service-policies?${q(`type = "Bind" and anyOf(serviceRoles) = "#${tag}"`)}`);
    assert.deepEqual(
      byType.body.data.map((p: any) => p.id),
      [id],
    );
    const byMatch = await admin.get(`/service-policies?${q(`anyOf(services) = "${svc}"`)}`);
    assert.deepEqual(
      byMatch.body.data.map((p: any) => p.id),
      [id],
    );
    const pcs = await admin.get(`/service-policies/${id}/posture-checks`);
    assert.equal(pcs.status, 200);
    assert.deepEqual(pcs.body.data, []);
    assert.deepEqual(checkResponse('management', '/service-policies/{id}/posture-checks', 'GET', 200, pcs.body), []);
    assertFieldError(
      await admin.post('/service-policies', {
        name: unique('sp'),
        type: 'Dial',
        semantic: 'AllOf',
        postureCheckRoles: ['@nope'],
      }),
      'postureCheckRoles',
    );
  });

  test('RolesDisplay shows current names and follows renames; deleting an entity removes its @id', async () => {
    const ident = await createIdentity(admin, { name: unique('disp-id') });
    const svc = await service();
    const id = await create('/service-policies', {
      name: unique('disp'),
      type: 'Dial',
      semantic: 'AllOf',
      identityRoles: ['#x', `@${ident}`],
      serviceRoles: [`@${svc}`],
    });
    const newName = unique('renamed');
    assert.equal((await admin.patch(`/identities/${ident}`, { name: newName })).status, 200);
    let d = (await admin.get(`/service-policies/${id}`)).body.data;
    assert.deepEqual(d.identityRolesDisplay, [
      { role: '#x', name: '#x' },
      { role: `@${ident}`, name: `@${newName}` },
    ]);
    assert.equal((await admin.delete(`/identities/${ident}`)).status, 200);
    assert.equal((await admin.delete(`/services/${svc}`)).status, 200);
    d = (await admin.get(`/service-policies/${id}`)).body.data;
    assert.deepEqual(d.identityRoles, ['#x']);
    assert.deepEqual(d.identityRolesDisplay, [{ role: '#x', name: '#x' }]);
    assert.deepEqual(d.serviceRoles, []);
  });
});

/* ------------------------------------------------------------------------------------------------------ */

interface Entity {
  id: string;
  roleAttributes: string[];
}
interface Policy {
  id: string;
  semantic: Semantic;
  roles: Record<string, string[]>;
}

/** Everything the rule needs, read back through the API. */
async function loadState() {
  const all = async (path: string) => (await admin.get(`${path}?limit=500`)).body.data as any[];
  const entities = {} as Record<Collection, Entity[]>;
  for (const c of ['identities', 'services', 'edge-routers'] as Collection[]) {
    entities[c] = (await all(`/${c}`)).map((e) => ({ id: e.id, roleAttributes: e.roleAttributes ?? [] }));
  }
  const policies = {} as Record<KindName, Policy[]>;
  for (const k of KIND_NAMES) {
    policies[k] = (await all(`/${KINDS[k].path}`)).map((p) => ({
      id: p.id,
      semantic: p.semantic,
      roles: Object.fromEntries(Object.keys(KINDS[k].sides).map((s) => [s, p[s]])),
    }));
  }
  return { entities, policies };
}

const sideOf = (k: KindName, c: Collection): string => Object.entries(KINDS[k].sides).find(([, v]) => v === c)![0];
const sorted = (xs: string[]) => [...xs].sort();

/** The model the matching test works on; `@{n}` in a role means the n-th entity of that side's collection. */
const model = {
  identities: [] as string[],
  services: [] as string[],
  'edge-routers': [] as string[],
  policies: { sp: [], erp: [], serp: [] } as Record<KindName, string[]>,
};

const listIds = async (path: string): Promise<string[]> => {
  const res = await admin.get(`${path}${path.includes('?') ? '&' : '?'}limit=500`);
  assert.equal(res.status, 200, `${path}: ${res.text}`);
  return sorted(res.body.data.map((x: any) => x.id));
};

/**
 * Every affected listing of the model's policies and entities equals what the rule computes from the stored
 * roles and attributes: entities of a policy, policies of an entity, and entities reachable through a kind.
 */
async function verifyListings(label: string): Promise<void> {
  const { entities, policies } = await loadState();
  const selects = (k: KindName, p: Policy, c: Collection, e: Entity) =>
    roleMatches(p.roles[sideOf(k, c)]!, p.semantic, e);
  const checks: [string, string[]][] = [];
  for (const k of KIND_NAMES) {
    for (const p of policies[k].filter((x) => model.policies[k].includes(x.id))) {
      for (const c of Object.values(KINDS[k].sides) as Collection[]) {
        checks.push([
          `/${KINDS[k].path}/${p.id}/${c}`,
          entities[c].filter((e) => selects(k, p, c, e)).map((e) => e.id),
        ]);
      }
    }
  }
  const reach = (k: KindName, from: Collection, e: Entity, to: Collection) =>
    entities[to]
      .filter((o) => policies[k].some((p) => selects(k, p, from, e) && selects(k, p, to, o)))
      .map((o) => o.id);
  const policiesOf = (k: KindName, c: Collection, e: Entity) =>
    policies[k].filter((p) => selects(k, p, c, e)).map((p) => p.id);
  for (const e of entities.identities.filter((x) => model.identities.includes(x.id))) {
    checks.push([`/identities/${e.id}/service-policies`, policiesOf('sp', 'identities', e)]);
    checks.push([`/identities/${e.id}/edge-router-policies`, policiesOf('erp', 'identities', e)]);
    checks.push([`/identities/${e.id}/services`, reach('sp', 'identities', e, 'services')]);
    checks.push([`/identities/${e.id}/edge-routers`, reach('erp', 'identities', e, 'edge-routers')]);
  }
  for (const e of entities.services.filter((x) => model.services.includes(x.id))) {
    checks.push([`/services/${e.id}/service-policies`, policiesOf('sp', 'services', e)]);
    checks.push([`/services/${e.id}/service-edge-router-policies`, policiesOf('serp', 'services', e)]);
    checks.push([`/services/${e.id}/identities`, reach('sp', 'services', e, 'identities')]);
    checks.push([`/services/${e.id}/edge-routers`, reach('serp', 'services', e, 'edge-routers')]);
  }
  // The policies' filterable selected sets (nothing stored: each pair is tested by the rule in SQL).
  for (const e of entities.services.filter((x) => model.services.includes(x.id))) {
    checks.push([`/service-policies?${q(`anyOf(services) = "${e.id}"`)}`, policiesOf('sp', 'services', e)]);
    checks.push([
      `/service-edge-router-policies?${q(`anyOf(services) = "${e.id}"`)}`,
      policiesOf('serp', 'services', e),
    ]);
  }
  for (const e of entities['edge-routers'].filter((x) => model['edge-routers'].includes(x.id))) {
    checks.push([`/edge-router-policies?${q(`anyOf(edgeRouters) = "${e.id}"`)}`, policiesOf('erp', 'edge-routers', e)]);
  }
  const selectsNone = (k: KindName, c: Collection) =>
    policies[k].filter((p) => !entities[c].some((e) => selects(k, p, c, e))).map((p) => p.id);
  checks.push([`/service-policies?${q('isEmpty(services)')}`, selectsNone('sp', 'services')]);
  checks.push([`/service-edge-router-policies?${q('isEmpty(edgeRouters)')}`, selectsNone('serp', 'edge-routers')]);
  for (const e of entities['edge-routers'].filter((x) => model['edge-routers'].includes(x.id))) {
    checks.push([`/edge-routers/${e.id}/edge-router-policies`, policiesOf('erp', 'edge-routers', e)]);
    checks.push([`/edge-routers/${e.id}/service-edge-router-policies`, policiesOf('serp', 'edge-routers', e)]);
    checks.push([`/edge-routers/${e.id}/identities`, reach('erp', 'edge-routers', e, 'identities')]);
    checks.push([`/edge-routers/${e.id}/services`, reach('serp', 'edge-routers', e, 'services')]);
  }
  for (let i = 0; i < checks.length; i += 16) {
    await Promise.all(
      checks
        .slice(i, i + 16)
        .map(async ([path, expected]) => assert.deepEqual(await listIds(path), sorted(expected), `${label}: ${path}`)),
    );
  }
}

/**
 * The table: role lists (with `@{n}` standing for the n-th model entity of the side) and, per semantic, the
 * model entity indexes each selects, worked out by hand from §2.2 for the attributes below.
 * Attributes per index: 0 {red}, 1 {red, blue}, 2 {blue, green}, 3 {} — the same for identities, services
 * and edge routers. `'all'` means every entity of the collection.
 */
const ATTRIBUTES = [['red'], ['red', 'blue'], ['blue', 'green'], []];
const ROLE_TABLE: { roles: string[]; AllOf: number[] | 'all'; AnyOf: number[] | 'all'; what: string }[] = [
  { roles: ['#red'], AllOf: [0, 1], AnyOf: [0, 1], what: 'one attribute' },
  { roles: ['#red', '#blue'], AllOf: [1], AnyOf: [0, 1, 2], what: 'two attributes' },
  { roles: ['@{2}'], AllOf: [2], AnyOf: [2], what: 'an id' },
  { roles: ['#green', '@{0}'], AllOf: [0, 2], AnyOf: [0, 2], what: 'an attribute or an id' },
  { roles: ['#red', '#green', '@{3}'], AllOf: [3], AnyOf: [0, 1, 2, 3], what: 'attributes with an id' },
  { roles: ['#all'], AllOf: 'all', AnyOf: 'all', what: '#all' },
  { roles: [], AllOf: [], AnyOf: [], what: 'nothing' },
];

const resolve = (roles: string[], c: Collection) =>
  roles.map((r) => r.replace(/^@\{(\d)\}$/, (_m, n: string) => `@${model[c][Number(n)]}`));

describe('policy matching through the affected listings', () => {
  before(async () => {
    for (const [i, attrs] of ATTRIBUTES.entries()) {
      model.identities.push(await createIdentity(admin, { name: unique(`m-id-${i}`), roleAttributes: attrs }));
      model.services.push(await service({ name: unique(`m-svc-${i}`), roleAttributes: attrs }));
      model['edge-routers'].push(await router({ name: unique(`m-er-${i}`), roleAttributes: attrs }));
    }
  });

  test('policies select exactly the entities of the table, on every side, for AllOf and AnyOf', async () => {
    for (const semantic of ['AllOf', 'AnyOf'] as const) {
      for (const row of ROLE_TABLE) {
        for (const k of KIND_NAMES) {
          const body: Record<string, unknown> = { name: unique(`${k}-${semantic}`), ...KINDS[k].extra, semantic };
          for (const [side, c] of Object.entries(KINDS[k].sides)) body[side] = resolve(row.roles, c);
          const id = await create(`/${KINDS[k].path}`, body);
          model.policies[k].push(id);
          for (const c of Object.values(KINDS[k].sides) as Collection[]) {
            const actual = await listIds(`/${KINDS[k].path}/${id}/${c}`);
            const expected =
              row[semantic] === 'all'
                ? await listIds(`/${c}`)
                : sorted((row[semantic] as number[]).map((n) => model[c][n]!));
            assert.deepEqual(actual, expected, `${k} ${semantic} ${row.what} → ${c}`);
          }
        }
      }
    }
    await verifyListings('after policy create');
  });

  test('the listings answer with the reference envelopes and page like any list', async () => {
    const [spAll] = model.policies.sp.slice(5, 6); // AllOf #all
    const page = await admin.get(`/service-policies/${spAll}/identities?limit=2&offset=1`);
    assert.equal(page.body.data.length, 2);
    assert.equal(page.body.meta.pagination.offset, 1);
    assert.ok(page.body.meta.pagination.totalCount >= 4);
    const named = await admin.get(`/service-policies/${spAll}/identities?${q(`name contains "m-id-1"`)}`);
    assert.deepEqual(
      named.body.data.map((x: any) => x.id),
      [model.identities[1]],
    );
    const i1 = model.identities[1]!;
    const s1 = model.services[1]!;
    const r1 = model['edge-routers'][1]!;
    const shapes: [string, string][] = [
      [`/service-policies/${spAll}/identities`, '/service-policies/{id}/identities'],
      [`/service-policies/${spAll}/services`, '/service-policies/{id}/services'],
      [`/edge-router-policies/${model.policies.erp[0]}/edge-routers`, '/edge-router-policies/{id}/edge-routers'],
      [`/edge-router-policies/${model.policies.erp[0]}/identities`, '/edge-router-policies/{id}/identities'],
      [
        `/service-edge-router-policies/${model.policies.serp[0]}/edge-routers`,
        '/service-edge-router-policies/{id}/edge-routers',
      ],
      [
        `/service-edge-router-policies/${model.policies.serp[0]}/services`,
        '/service-edge-router-policies/{id}/services',
      ],
      [`/identities/${i1}/service-policies`, '/identities/{id}/service-policies'],
      [`/identities/${i1}/edge-router-policies`, '/identities/{id}/edge-router-policies'],
      [`/identities/${i1}/edge-routers`, '/identities/{id}/edge-routers'],
      // The reference declares the wrong envelope for these two (reference README): checked as plain lists.
      [`/identities/${i1}/services`, '/services'],
      [`/edge-routers/${r1}/service-edge-router-policies`, '/service-edge-router-policies'],
      [`/services/${s1}/service-policies`, '/services/{id}/service-policies'],
      [`/services/${s1}/identities`, '/services/{id}/identities'],
      [`/services/${s1}/edge-routers`, '/services/{id}/edge-routers'],
      [`/services/${s1}/service-edge-router-policies`, '/services/{id}/service-edge-router-policies'],
      [`/edge-routers/${r1}/edge-router-policies`, '/edge-routers/{id}/edge-router-policies'],
      [`/edge-routers/${r1}/identities`, '/edge-routers/{id}/identities'],
      [`/edge-routers/${r1}/services`, '/edge-routers/{id}/services'],
    ];
    for (const [path, spec] of shapes) {
      const res = await admin.get(path);
      assert.equal(res.status, 200, path);
      assert.ok(res.body.data.length > 0, `${path} is not empty`);
      assert.deepEqual(checkResponse('management', spec, 'GET', 200, res.body), [], path);
    }
    for (const path of [
      '/identities/missing/services',
      '/services/missing/identities',
      '/edge-routers/missing/services',
      '/service-policies/missing/identities',
    ]) {
      assert.equal((await admin.get(path)).status, 404, path);
    }
  });

  test('after policies are updated (PUT)', async () => {
    for (const k of KIND_NAMES) {
      const [a, b] = [model.policies[k][1]!, model.policies[k][8]!]; // AllOf two attributes, AnyOf one attribute
      const sides = Object.entries(KINDS[k].sides);
      const bodyA = {
        name: unique('put'),
        ...KINDS[k].extra,
        semantic: 'AnyOf',
        [sides[0]![0]]: ['#green'],
        [sides[1]![0]]: resolve(['@{1}', '#red'], sides[1]![1]),
      };
      assert.equal((await admin.put(`/${KINDS[k].path}/${a}`, bodyA)).status, 200);
      assert.equal(
        (
          await admin.put(`/${KINDS[k].path}/${b}`, {
            name: unique('put'),
            ...KINDS[k].extra,
            [sides[0]![0]]: ['#all'],
          })
        ).status,
        200,
      );
    }
    await verifyListings('after policy update');
  });

  test('after policies are patched (semantic only, one role list only)', async () => {
    for (const k of KIND_NAMES) {
      const sides = Object.entries(KINDS[k].sides);
      assert.equal((await admin.patch(`/${KINDS[k].path}/${model.policies[k][4]}`, { semantic: 'AnyOf' })).status, 200);
      assert.equal(
        (
          await admin.patch(`/${KINDS[k].path}/${model.policies[k][10]}`, {
            [sides[1]![0]]: resolve(['#blue', '@{3}'], sides[1]![1]),
          })
        ).status,
        200,
      );
      assert.equal(
        (await admin.patch(`/${KINDS[k].path}/${model.policies[k][3]}`, { name: unique('renamed-only') })).status,
        200,
      );
    }
    await verifyListings('after policy patch');
  });

  test('after identities, services and edge routers change their role attributes', async () => {
    for (const c of ['identities', 'services', 'edge-routers'] as Collection[]) {
      assert.equal((await admin.patch(`/${c}/${model[c][3]}`, { roleAttributes: ['red', 'green'] })).status, 200);
      assert.equal((await admin.patch(`/${c}/${model[c][0]}`, { roleAttributes: [] })).status, 200);
    }
    const spName = (await admin.get(`/services/${model.services[1]}`)).body.data.name;
    assert.equal(
      (
        await admin.put(`/services/${model.services[1]}`, {
          name: spName,
          encryptionRequired: true,
          roleAttributes: ['blue'],
        })
      ).status,
      200,
    );
    await verifyListings('after attribute change');
  });

  test('after new entities are created, existing policies select them', async () => {
    model.identities.push(
      await createIdentity(admin, { name: unique('m-id-new'), roleAttributes: ['red', 'blue', 'green'] }),
    );
    model.services.push(await service({ name: unique('m-svc-new'), roleAttributes: ['green'] }));
    model['edge-routers'].push(
      await router({ name: unique('m-er-new'), roleAttributes: ['red'], isTunnelerEnabled: true }),
    );
    model.identities.push(model['edge-routers'][4]!); // the tunneler's Router identity
    await verifyListings('after entity create');
  });

  test('after entities are deleted: their @id leaves every policy and every listing', async () => {
    const gone = {
      identities: model.identities[2]!,
      services: model.services[0]!,
      'edge-routers': model['edge-routers'][3]!,
    };
    for (const [c, id] of Object.entries(gone)) {
      assert.equal((await admin.delete(`/${c}/${id}`)).status, 200, `${c} ${id}`);
      (model as any)[c] = (model as any)[c].filter((x: string) => x !== id);
    }
    const { policies } = await loadState();
    for (const k of KIND_NAMES) {
      for (const p of policies[k]) {
        for (const roles of Object.values(p.roles)) {
          for (const id of Object.values(gone))
            assert.ok(!roles.includes(`@${id}`), `${KINDS[k].path}/${p.id} still names @${id}`);
        }
      }
    }
    await verifyListings('after entity delete');
  });

  test('after policies are deleted', async () => {
    for (const k of KIND_NAMES) {
      for (const id of [model.policies[k][0]!, model.policies[k][12]!])
        assert.equal((await admin.delete(`/${KINDS[k].path}/${id}`)).status, 200);
      model.policies[k] = model.policies[k].filter((_x, i) => i !== 0 && i !== 12);
    }
    await verifyListings('after policy delete');
  });
});
