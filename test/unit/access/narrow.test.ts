/**
 * Invalidation as narrow as the change (docs/policy-engine.md, "What a write invalidates"): a write reaching
 * identity B leaves identity A's cached entries untouched (the very same objects), and every answer still
 * equals a fresh engine's; a write the journal cannot explain still invalidates everything.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openTestStore, type TestStore } from '../../harness/store.js';
import type { Ctx } from '../../../src/model/ctx.js';
import { createEntity, deleteEntity, updateEntity } from '../../../src/model/crud.js';
import { configs, configTypes, identities, servicePolicies, services } from '../../../src/model/resources/index.js';
import { AccessEngine, accessEngine } from '../../../src/model/access/engine.js';
import { configView, permissionsOf } from '../../../src/model/access/service-view.js';
import { assignIdentityServiceConfigs } from '../../../src/model/services/service-access/identity-service-configs.js';

let ts: TestStore;
let ctx: Ctx;
let A: string;
let B: string;
let typeId: string;
let cfg: string;
let n = 0;
const name = (p: string) => `${p}-${n++}`;

const service = (attrs: string[], extra: Record<string, unknown> = {}) =>
  createEntity(ctx, services, { name: name('svc'), encryptionRequired: true, roleAttributes: attrs, ...extra });
const dial = (identityRoles: string[], serviceRoles: string[]) =>
  createEntity(ctx, servicePolicies, {
    name: name('sp'),
    type: 'Dial',
    semantic: 'AnyOf',
    identityRoles,
    serviceRoles,
  });

/** The shared engine's cached objects for an identity (identity entry, grants, catalog). */
async function cached(id: string) {
  const v = await accessEngine(ctx).view(ctx, id);
  return { identity: v.identity, grants: v.grants, catalog: v.catalog };
}

/** What an identity sees, as plain data: permissions, name and config per granted service. */
async function seen(engine: AccessEngine, id: string) {
  const v = await engine.view(ctx, id);
  return Object.fromEntries(
    v.grants.ids.map((s) => [
      s,
      {
        permissions: permissionsOf(v.grants.perms.get(s)),
        name: v.catalog.records.get(s)?.name,
        config: configView(v.catalog, s, v.identity.overrides, 'all'),
      },
    ]),
  );
}

async function agreesWithFresh(label: string) {
  for (const id of [A, B]) {
    assert.deepEqual(await seen(accessEngine(ctx), id), await seen(new AccessEngine(), id), `${label}: ${id}`);
  }
}

before(async () => {
  ts = await openTestStore('edgectl-narrow-');
  ({ ctx } = ts);
  typeId = await createEntity(ctx, configTypes, { name: 'type-n' });
  cfg = await createEntity(ctx, configs, { name: name('cfg'), configTypeId: typeId, data: { v: 1 } });
  A = await createEntity(ctx, identities, { name: 'A', type: 'User', isAdmin: false, roleAttributes: ['a'] });
  B = await createEntity(ctx, identities, { name: 'B', type: 'User', isAdmin: false, roleAttributes: ['b'] });
  for (let i = 0; i < 3; i++) {
    await service(['sa']);
    await service(['sb']);
  }
  await dial(['#a'], ['#sa']);
  await dial(['#b'], ['#sb']);
});
after(() => ts.close());

test('a service only B may see: A keeps its identity entry and grants; B sees the new service', async () => {
  const a0 = await cached(A);
  const b0 = await cached(B);
  const s = await service(['sb']);
  const a1 = await cached(A);
  const b1 = await cached(B);
  assert.equal(a1.identity, a0.identity, "A's identity entry is the same object");
  assert.equal(a1.grants, a0.grants, "A's grants are the same object");
  assert.equal(b1.identity, b0.identity, "B's policies did not change, so neither did its entry");
  assert.ok(b1.grants.perms.has(s), 'B is granted the new service');
  assert.notEqual(a1.catalog, a0.catalog, 'the catalog was revised');
  const other = a0.grants.ids[0]!;
  assert.equal(a1.catalog.records.get(other), a0.catalog.records.get(other), "other services' records are shared");
  assert.equal(a1.catalog.encoded.get(other), a0.catalog.encoded.get(other));
  await agreesWithFresh('service create');

  await updateEntity(ctx, services, s, { roleAttributes: ['sa'] }, 'patch');
  const a2 = await cached(A);
  assert.ok(a2.grants.perms.has(s) && !(await cached(B)).grants.perms.has(s), 'the service moved from B to A');
  await agreesWithFresh('service attribute change');

  await deleteEntity(ctx, services, s);
  assert.ok(!(await cached(A)).grants.perms.has(s), 'a deleted service leaves the grants');
  assert.equal((await cached(B)).identity, b0.identity, "B's identity entry survived the delete");
  await agreesWithFresh('service delete');
});

test('a policy reaching A but not B: A is recomputed, B untouched', async () => {
  const a0 = await cached(A);
  const b0 = await cached(B);
  const p = await dial([`@${A}`], ['#sb']);
  const a1 = await cached(A);
  const b1 = await cached(B);
  assert.notEqual(a1.identity, a0.identity, 'A is selected by the new policy');
  assert.ok(a1.identity.servicePolicyIds.includes(p));
  assert.equal(b1.identity, b0.identity, "B's entry is the same object");
  assert.equal(b1.grants, b0.grants, "B's grants are the same object");
  await agreesWithFresh('policy create');

  // Narrowing the policy's identity side away from A: A (selected before) is recomputed.
  await updateEntity(ctx, servicePolicies, p, { identityRoles: ['#nobody'] }, 'patch');
  assert.ok(!(await cached(A)).identity.servicePolicyIds.includes(p), 'A lost the policy');
  assert.equal((await cached(B)).identity, b0.identity);
  await agreesWithFresh('policy update');

  // A change of B's own policy's service side recomputes the grants of every set containing it.
  const bPolicy = (await cached(B)).identity.servicePolicyIds[0]!;
  await updateEntity(ctx, servicePolicies, bPolicy, { serviceRoles: ['#sa'] }, 'patch');
  assert.equal((await cached(A)).grants, (await cached(A)).grants);
  await agreesWithFresh('policy service side');
  await deleteEntity(ctx, servicePolicies, p);
  await agreesWithFresh('policy delete');
});

/** How often the shared engine built its service index from the store (a revision is not a build). */
const indexBuilds = () =>
  accessEngine(ctx)
    .cacheStats()
    .find((c) => c.cache === 'serviceIndex')!.misses;

test("a policy set that grows gets its grants from the service index, which the policy's note revises", async () => {
  await cached(A);
  const builds = indexBuilds();
  // A Bind policy for services A already dials (bits or'ed) and for new ones (merged into the id order).
  const extra = [await service(['sc']), await service(['sc'])];
  const policy = await createEntity(ctx, servicePolicies, {
    name: name('sp'),
    type: 'Bind',
    semantic: 'AnyOf',
    identityRoles: [`@${A}`],
    serviceRoles: ['#sa', '#sc'],
  });
  const a1 = await cached(A);
  for (const s of extra) assert.deepEqual(permissionsOf(a1.grants.perms.get(s)), ['Bind']);
  assert.deepEqual([...a1.grants.ids].sort(), a1.grants.ids, 'ids stay in id order');
  await agreesWithFresh('policy added to a set');

  // A service created afterwards patches the set's entry like any other.
  const later = await service(['sc']);
  assert.deepEqual(permissionsOf((await cached(A)).grants.perms.get(later)), ['Bind']);
  await agreesWithFresh('service after a grown set');

  // Losing a policy: the smaller set is computed (or found) as it is.
  await deleteEntity(ctx, servicePolicies, policy);
  await agreesWithFresh('policy removed from a set');
  assert.equal(indexBuilds(), builds, 'service and policy writes revised the index: never built again');
});

test('a service write the journal cannot explain rebuilds the service index', async () => {
  await cached(A);
  const builds = indexBuilds();
  const s = await service(['sa']);
  await sql`insert into "services_roleAttributes" ("ownerId", value, position) values (${s}, 'sb', 9)`.execute(ctx.db);
  await agreesWithFresh('unexplained attribute');
  assert.equal(indexBuilds(), builds + 1);
  assert.ok((await cached(B)).grants.perms.has(s), 'B dials the service through its new attribute');
});

test('identity attribute changes recompute that identity only', async () => {
  const a0 = await cached(A);
  const b0 = await cached(B);
  await updateEntity(ctx, identities, B, { roleAttributes: ['a', 'b'] }, 'patch');
  assert.equal((await cached(A)).identity, a0.identity, "A's entry is the same object");
  assert.notEqual((await cached(B)).identity, b0.identity);
  await agreesWithFresh('identity attributes');
  await updateEntity(ctx, identities, B, { roleAttributes: ['b'] }, 'patch');
  await agreesWithFresh('identity attributes back');
});

test('config edits and the cascades of deletes', async () => {
  const s = await service(['sa'], { configs: [cfg] });
  const a0 = await cached(A);
  await updateEntity(ctx, configs, cfg, { data: { v: 2 } }, 'patch');
  const a1 = await cached(A);
  assert.equal(a1.identity, a0.identity, 'a config edit leaves identity entries alone');
  assert.equal(a1.grants, a0.grants);
  assert.deepEqual(configView(a1.catalog, s, a1.identity.overrides, 'all'), { 'type-n': { v: 2 } });
  await agreesWithFresh('config edit');
  await updateEntity(ctx, configTypes, typeId, { name: 'type-renamed' }, 'patch');
  assert.deepEqual(Object.keys(configView((await cached(A)).catalog, s, a1.identity.overrides, 'all')), [
    'type-renamed',
  ]);
  await agreesWithFresh('config type rename');

  // An override of A's for the service goes with the service (cascade): A is recomputed, B is not.
  const own = await createEntity(ctx, configs, { name: name('cfg'), configTypeId: typeId, data: { own: true } });
  await assignIdentityServiceConfigs(ctx, A, [{ serviceId: s, configId: own }]);
  await agreesWithFresh('identity service config');
  const a2 = await cached(A);
  const b2 = await cached(B);
  await deleteEntity(ctx, configs, own);
  assert.notEqual((await cached(A)).identity, a2.identity, "the config's delete reached A's override");
  assert.equal((await cached(B)).identity, b2.identity);
  await agreesWithFresh('config delete cascade');
  await assignIdentityServiceConfigs(ctx, A, [{ serviceId: s, configId: cfg }]);
  const a3 = await cached(A);
  await updateEntity(ctx, services, s, { configs: [] }, 'patch');
  await deleteEntity(ctx, services, s);
  assert.notEqual((await cached(A)).identity, a3.identity, "the service's delete reached A's override");
  await agreesWithFresh('service delete cascade');
});

test('a write the journal cannot explain invalidates everything', async () => {
  const a0 = await cached(A);
  const b0 = await cached(B);
  await sql`insert into "identities_roleAttributes" ("ownerId", value, position) values (${B}, 'zz', 9)`.execute(
    ctx.db,
  );
  assert.notEqual((await cached(A)).identity, a0.identity, 'unexplained: A recomputed too');
  assert.notEqual((await cached(B)).identity, b0.identity);
  const c0 = (await cached(A)).catalog;
  await sql`update services set name = name || '-x' where id = (select min(id) from services)`.execute(ctx.db);
  assert.notEqual((await cached(A)).catalog, c0);
  await agreesWithFresh('unexplained writes');
});

test('identities selected by the same policies share one list of them; the answers stay their own', async () => {
  const C = await createEntity(ctx, identities, {
    name: name('C'),
    type: 'User',
    isAdmin: false,
    roleAttributes: ['a'],
  });
  const a = await cached(A);
  const c = await cached(C);
  assert.notEqual(c.identity, a.identity);
  assert.equal(c.identity.identityId, C);
  assert.ok(a.identity.servicePolicyIds.length > 0);
  assert.equal(c.identity.servicePolicyIds, a.identity.servicePolicyIds, 'one array for both');
  assert.equal(c.identity.edgeRouterPolicyIds, a.identity.edgeRouterPolicyIds);
  assert.equal(c.grants, a.grants, 'the same policy set: the same grants entry');
  // A policy naming C alone gives C a list of its own; A's stays as it was.
  const before = [...a.identity.servicePolicyIds];
  await dial([`@${C}`], ['#sb']);
  assert.notEqual((await cached(C)).identity.servicePolicyIds, (await cached(A)).identity.servicePolicyIds);
  assert.deepEqual((await cached(A)).identity.servicePolicyIds, before);
  assert.deepEqual(await seen(accessEngine(ctx), C), await seen(new AccessEngine(), C));
  await agreesWithFresh('shared policy lists');
});
