/**
 * The SQL forms of the matching rule against the pure rule ({@link roleMatches}), on a random model driven
 * through the generic CRUD (the code paths the API uses): after creates, attribute changes, policy updates and
 * patches, and deletes, every policy's selected entities, every entity's policies, the (policy, entity) pairs of
 * all policies and the one-pair test must equal what the rule computes from the stored roles.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openTestStore, type TestStore } from '../../harness/store.js';
import { dynamic } from '../../../src/store/db.js';
import type { Ctx } from '../../../src/model/ctx.js';
import { createEntity, deleteEntity, getEntity, updateEntity } from '../../../src/model/crud.js';
import type { ResourceDef } from '../../../src/model/resource.js';
import { matchSide, POLICY_KINDS, TARGETS, type PolicyKind, type TargetKind } from '../../../src/model/policy/kinds.js';
import { roleMatches, type Semantic } from '../../../src/model/policy/roles.js';
import { policiesOf, selectedByPolicy } from '../../../src/model/policy/scopes.js';
import { matchPairsSql, selectsSql } from '../../../src/store/policy-match.js';
import {
  edgeRouterPolicies,
  edgeRouters,
  identities,
  postureChecks,
  serviceEdgeRouterPolicies,
  servicePolicies,
  services,
} from '../../../src/model/resources/index.js';
import { rng } from '../../harness/random.js';

const rand = rng(20240601);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
const ATTRS = ['a', 'b', 'c', 'd', 'all'];
const someAttrs = () => ATTRS.filter(() => rand() < 0.35);

const ENTITY_DEFS: Record<TargetKind, ResourceDef> = {
  identity: identities,
  service: services,
  edgeRouter: edgeRouters,
  postureCheck: postureChecks,
};
const POLICY_DEFS = new Map<PolicyKind, ResourceDef>([
  [POLICY_KINDS[0]!, servicePolicies],
  [POLICY_KINDS[1]!, edgeRouterPolicies],
  [POLICY_KINDS[2]!, serviceEdgeRouterPolicies],
]);

let testStore: TestStore;
let ctx: Ctx;
const ids: Record<TargetKind, string[]> = { identity: [], service: [], edgeRouter: [], postureCheck: [] };
const policyIds = new Map<PolicyKind, string[]>();

function randomRoles(target: TargetKind): string[] {
  const r = rand();
  if (r < 0.1) return ['#all'];
  if (r < 0.15) return [];
  const roles = ATTRS.filter((a) => a !== 'all' && rand() < 0.3).map((a) => `#${a}`);
  if (rand() < 0.35 && ids[target].length > 0) roles.push(`@${pick(ids[target])}`);
  return roles.length > 0 ? roles : ['#a'];
}

function entityBody(target: TargetKind, n: number): Record<string, unknown> {
  const base = { name: `${target}-${n}`, roleAttributes: someAttrs() };
  if (target === 'identity') return { ...base, type: 'User', isAdmin: false };
  if (target === 'service') return { ...base, encryptionRequired: true };
  if (target === 'postureCheck') return { ...base, typeId: 'MFA' };
  return base;
}

function policyBody(kind: PolicyKind, n: number): Record<string, unknown> {
  const body: Record<string, unknown> = {
    name: `${kind.table}-${n}-${Math.floor(rand() * 1e9)}`,
    semantic: pick(['AllOf', 'AnyOf']),
  };
  if (kind === POLICY_KINDS[0]) body.type = pick(['Dial', 'Bind']);
  for (const s of kind.sides) body[s.prop] = randomRoles(s.target);
  return body;
}

async function idsWhere(table: string, where: ReturnType<typeof policiesOf>): Promise<string[]> {
  const rows = await dynamic(ctx.db).selectFrom(`${table} as t`).select('t.id').where(where).orderBy('t.id').execute();
  return rows.map((r: { id: string }) => r.id);
}

/** Compares both SQL directions with the rule, for every policy and entity. */
async function verify(label: string): Promise<void> {
  const entities: Record<string, { id: string; roleAttributes: string[] }[]> = {};
  for (const t of Object.keys(TARGETS) as TargetKind[]) {
    entities[t] = await Promise.all(
      ids[t].map(
        async (id) => (await getEntity(ctx, ENTITY_DEFS[t], id)) as unknown as { id: string; roleAttributes: string[] },
      ),
    );
  }
  for (const [kind, def] of POLICY_DEFS) {
    const policies = await Promise.all((policyIds.get(kind) ?? []).map((id) => getEntity(ctx, def, id)));
    for (const side of kind.sides) {
      const expectedOf = (entity: { id: string; roleAttributes: string[] }) =>
        policies
          .filter((p) => roleMatches(p[side.prop] as string[], p.semantic as Semantic, entity))
          .map((p) => p.id as string)
          .sort();
      for (const p of policies) {
        const expected = entities[side.target]!.filter((e) =>
          roleMatches(p[side.prop] as string[], p.semantic as Semantic, e),
        )
          .map((e) => e.id)
          .sort();
        const actual = (
          await idsWhere(TARGETS[side.target].table, selectedByPolicy(kind, side.target, p.id as string))
        ).filter((id) => ids[side.target].includes(id));
        assert.deepEqual(
          actual,
          expected,
          `${label}: ${kind.table} ${p.id} ${side.prop} ${JSON.stringify(p[side.prop])} ${p.semantic}`,
        );
      }
      const expectedPairs = policies
        .flatMap((p) =>
          entities[side.target]!.filter((e) => roleMatches(p[side.prop] as string[], p.semantic as Semantic, e)).map(
            (e) => `${p.id as string} ${e.id}`,
          ),
        )
        .sort();
      const ms = matchSide(kind, side);
      const ours = (rows: { policyId: string; entityId: string }[]) =>
        [
          ...new Set(
            rows.filter((r) => ids[side.target].includes(r.entityId)).map((r) => `${r.policyId} ${r.entityId}`),
          ),
        ].sort();
      const pairs = await sql<{ policyId: string; entityId: string }>`select x."policyId", x."entityId"
        from (${matchPairsSql(ms, sql`select id from ${sql.table(kind.table)}`)}) x`.execute(ctx.db);
      assert.deepEqual(ours(pairs.rows), expectedPairs, `${label}: pairs of every ${kind.table} ${side.prop}`);
      const tested = await sql<{ policyId: string; entityId: string }>`select p.id as "policyId", e.id as "entityId"
        from ${sql.table(kind.table)} p cross join ${sql.table(TARGETS[side.target].table)} e
        where ${selectsSql(ms, sql.ref('p.id'), sql.ref('e.id'))}`.execute(ctx.db);
      assert.deepEqual(ours(tested.rows), expectedPairs, `${label}: one-pair test of every ${kind.table} ${side.prop}`);
      for (const e of entities[side.target]!) {
        const actual = await idsWhere(kind.table, policiesOf(kind, side.target, e.id));
        assert.deepEqual(
          actual,
          expectedOf(e),
          `${label}: policies of ${side.target} ${e.id} ${JSON.stringify(e.roleAttributes)} via ${side.prop}`,
        );
      }
    }
  }
}

before(async () => {
  testStore = await openTestStore('edgectl-match-');
  ({ ctx } = testStore);
});
after(async () => {
  await testStore.close();
});

// One scenario: each step changes the store the previous steps built, so the steps are subtests of one test.
test('policy matching in SQL agrees with the rule through a sequence of changes', async (t) => {
  await t.test('after creating entities and policies', async () => {
    for (const t of Object.keys(TARGETS) as TargetKind[]) {
      for (let n = 0; n < 12; n++) ids[t].push(await createEntity(ctx, ENTITY_DEFS[t], entityBody(t, n)));
    }
    for (const [kind, def] of POLICY_DEFS) {
      const list: string[] = [];
      for (let n = 0; n < 25; n++) list.push(await createEntity(ctx, def, policyBody(kind, n)));
      policyIds.set(kind, list);
    }
    await verify('created');
  });

  await t.test('after entities change their role attributes', async () => {
    for (const t of Object.keys(TARGETS) as TargetKind[]) {
      for (const id of ids[t].filter(() => rand() < 0.5))
        await updateEntity(ctx, ENTITY_DEFS[t], id, { roleAttributes: someAttrs() }, 'patch');
    }
    await verify('attributes changed');
  });

  await t.test('after policies are updated and patched', async () => {
    for (const [kind, def] of POLICY_DEFS) {
      for (const id of policyIds.get(kind)!.filter(() => rand() < 0.4))
        await updateEntity(ctx, def, id, policyBody(kind, 99), 'update');
      for (const id of policyIds.get(kind)!.filter(() => rand() < 0.4)) {
        const side = pick(kind.sides);
        await updateEntity(
          ctx,
          def,
          id,
          rand() < 0.5 ? { semantic: pick(['AllOf', 'AnyOf']) } : { [side.prop]: randomRoles(side.target) },
          'patch',
        );
      }
    }
    await verify('policies changed');
  });

  await t.test('after entities are deleted (their @id entries leave the policies) and new ones created', async () => {
    for (const t of Object.keys(TARGETS) as TargetKind[]) {
      for (const id of ids[t].filter(() => rand() < 0.3)) {
        await deleteEntity(ctx, ENTITY_DEFS[t], id);
        ids[t] = ids[t].filter((x) => x !== id);
        const left = await sql<{ n: number }>`select count(*) as n from (${sql.join(
          POLICY_KINDS.flatMap((k) => k.sides.filter((s) => s.target === t)).map(
            (s) => sql`select 1 from ${sql.table(s.rolesTable)} where value = ${`@${id}`}`,
          ),
          sql` union all `,
        )})`.execute(ctx.db);
        assert.equal(left.rows[0]!.n, 0, `@${id} left in a policy`);
      }
      for (let n = 100; n < 104; n++) ids[t].push(await createEntity(ctx, ENTITY_DEFS[t], entityBody(t, n)));
    }
    await verify('entities deleted and created');
  });

  await t.test('after policies are deleted', async () => {
    for (const [kind, def] of POLICY_DEFS) {
      const gone = policyIds.get(kind)!.filter(() => rand() < 0.3);
      for (const id of gone) await deleteEntity(ctx, def, id);
      policyIds.set(
        kind,
        policyIds.get(kind)!.filter((id) => !gone.includes(id)),
      );
    }
    await verify('policies deleted');
  });
});
