/**
 * A policy set's grants from the service index (service-index.ts) equal the store's SQL answer
 * (`servicesGrantedBy`), on a random model driven through the generic CRUD, on SQLite and on PostgreSQL: after
 * service creates, deletes and attribute changes, and service policy creates, updates, patches and deletes
 * (`#all`, `@id`, `AllOf`/`AnyOf`). The shared engine's index is revised by those writes' notes, never built
 * again, and must equal one built fresh from the store; the engine's cached grants of each identity's policy
 * set must equal the SQL answer for that set.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { Ctx } from '../../../src/model/ctx.js';
import { createEntity, deleteEntity, updateEntity } from '../../../src/model/crud.js';
import { identities, servicePolicies, services } from '../../../src/model/resources/index.js';
import { accessEngine } from '../../../src/model/access/engine.js';
import { grantsOf, servicePoliciesOf, type ServiceGrants } from '../../../src/model/access/queries.js';
import { grantsFrom, loadServiceIndex } from '../../../src/model/access/service-index.js';
import { openTestStore, storeCtx } from '../../harness/store.js';
import { postgresSkip, postgresStoreForTests } from '../../harness/pg.js';
import { rng } from '../../harness/random.js';

const skip = await postgresSkip();
const pg = postgresStoreForTests(skip);

const ATTRS = ['a', 'b', 'c', 'd', 'all'];
/** What role lists name: an attribute named `all` is held, but `#all` means every entity. */
const ROLE_ATTRS = ATTRS.filter((a) => a !== 'all');

/** The whole sequence on one store, seeded so a failure reproduces. */
async function sequence(t: TestContext, ctx: Ctx, seed: number): Promise<void> {
  const rand = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const some = <T>(xs: readonly T[], p: number) => xs.filter(() => rand() < p);
  const m = {
    services: [] as string[],
    identities: [] as string[],
    policies: [] as string[],
    gone: [] as string[],
    goneServices: [] as string[],
  };
  /** The grants as plain data: the ids in order, and the bits of every service there is or was. */
  const plain = (g: ServiceGrants) => ({
    ids: g.ids,
    perms: [...m.services, ...m.goneServices].map((id) => g.perms.get(id) ?? 0),
  });
  let n = 0;
  const serviceRoles = (): string[] => {
    const r = rand();
    if (r < 0.08) return ['#all'];
    if (r < 0.12) return [];
    const roles = some(ROLE_ATTRS, 0.3).map((a) => `#${a}`);
    for (const id of some(m.services, 0.06)) roles.push(`@${id}`);
    return roles.length > 0 ? roles : [`#${pick(ROLE_ATTRS)}`];
  };
  const policyBody = () => ({
    name: `sp-${n++}`,
    type: pick(['Dial', 'Bind']),
    semantic: pick(['AllOf', 'AnyOf']),
    identityRoles: rand() < 0.15 ? ['#all'] : some(ROLE_ATTRS, 0.4).map((a) => `#${a}`),
    serviceRoles: serviceRoles(),
  });
  const newService = async () =>
    m.services.push(
      await createEntity(ctx, services, {
        name: `svc-${n++}`,
        encryptionRequired: true,
        roleAttributes: some(ATTRS, 0.4),
      }),
    );
  const newPolicy = async (body: Record<string, unknown> = policyBody()) =>
    m.policies.push(await createEntity(ctx, servicePolicies, body));

  const engine = accessEngine(ctx);
  const builds = () => engine.cacheStats().find((c) => c.cache === 'serviceIndex')!.misses;

  async function verify(label: string): Promise<void> {
    const index = await engine.serviceIndex(ctx, await engine.markers(ctx));
    const fresh = await loadServiceIndex(ctx.db);
    const sets: string[][] = [[], m.policies, [...m.policies, ...m.gone], ...m.policies.map((p) => [p])];
    for (let i = 0; i < 12; i++) sets.push(some([...m.policies, ...m.gone], 0.3 + rand() * 0.5));
    for (const set of sets) {
      const want = plain(await grantsOf(ctx.db, set));
      assert.deepEqual(plain(grantsFrom(index, set)), want, `${label}: revised index, policies ${set.join(',')}`);
      assert.deepEqual(plain(grantsFrom(fresh, set)), want, `${label}: fresh index, policies ${set.join(',')}`);
    }
    for (const id of m.identities) {
      const view = await engine.view(ctx, id);
      const want = plain(await grantsOf(ctx.db, await servicePoliciesOf(ctx.db, id)));
      assert.deepEqual(plain(view.grants), want, `${label}: the engine's grants of identity ${id}`);
    }
  }

  for (let i = 0; i < 24; i++) await newService();
  for (let i = 0; i < 10; i++) {
    m.identities.push(
      await createEntity(ctx, identities, {
        name: `id-${n++}`,
        type: 'User',
        isAdmin: false,
        roleAttributes: some(ATTRS, 0.5),
      }),
    );
  }
  for (let i = 0; i < 18; i++) await newPolicy();
  await verify('created');
  const built = builds();

  await t.test('service attribute changes', async () => {
    for (const id of some(m.services, 0.4)) {
      await updateEntity(ctx, services, id, { roleAttributes: some(ATTRS, 0.4) }, 'patch');
    }
    await verify('service attributes');
  });
  await t.test('policy updates and patches (type, semantic, service roles)', async () => {
    for (const id of some(m.policies, 0.3)) await updateEntity(ctx, servicePolicies, id, policyBody(), 'update');
    for (const id of some(m.policies, 0.4)) {
      const r = rand();
      const patch =
        r < 0.33
          ? { semantic: pick(['AllOf', 'AnyOf']) }
          : r < 0.66
            ? { serviceRoles: serviceRoles() }
            : { type: pick(['Dial', 'Bind']) };
      await updateEntity(ctx, servicePolicies, id, patch, 'patch');
    }
    await verify('policies changed');
  });
  await t.test('#all, @id only and multi-attribute AllOf policies', async () => {
    const everyone = { identityRoles: ['#all'] };
    await newPolicy({ ...policyBody(), ...everyone, type: 'Bind', serviceRoles: ['#all'] });
    await newPolicy({ ...policyBody(), ...everyone, serviceRoles: [`@${m.services[0]}`, `@${m.services[1]}`] });
    await newPolicy({
      ...policyBody(),
      ...everyone,
      semantic: 'AllOf',
      serviceRoles: ['#a', '#b', `@${m.services[2]}`],
    });
    await newPolicy({ ...policyBody(), ...everyone, semantic: 'AllOf', serviceRoles: ['#a', '#b', '#c'] });
    await verify('special role lists');
  });
  await t.test('service deletes (their @id entries leave the policies) and creates', async () => {
    for (const id of some(m.services, 0.3)) {
      await deleteEntity(ctx, services, id);
      m.services.splice(m.services.indexOf(id), 1);
      m.goneServices.push(id);
    }
    await verify('services deleted');
    for (let i = 0; i < 6; i++) await newService();
    await verify('services created');
  });
  await t.test('policy deletes', async () => {
    for (const id of some(m.policies, 0.3)) {
      await deleteEntity(ctx, servicePolicies, id);
      m.policies.splice(m.policies.indexOf(id), 1);
      m.gone.push(id);
    }
    await verify('policies deleted');
  });
  assert.equal(builds(), built, 'every write was explained: the index was revised, never built again');
}

test('grants from the service index equal the SQL answer through every kind of write (SQLite)', async (t) => {
  const ts = await openTestStore('edgectl-service-index-');
  try {
    await sequence(t, ts.ctx, 25);
  } finally {
    await ts.close();
  }
});

test(
  'grants from the service index equal the SQL answer through every kind of write (PostgreSQL)',
  { skip },
  async (t) => {
    await sequence(t, storeCtx(pg.store), 26);
  },
);
