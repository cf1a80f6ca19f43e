/**
 * A policy or entity write writes only its own rows (docs/policy-engine.md, "Consistency"): nothing a policy
 * selects is stored, so what a write changes must not grow with how many entities the policy selects, or how
 * many policies select the entity. Counted, not timed: SQLite's `total_changes()` (every row inserted, updated
 * or deleted, by triggers and cascades too) and the rows of every table, around each write.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openTestStore, type TestStore } from '../../harness/store.js';
import type { Ctx } from '../../../src/model/ctx.js';
import { createEntity, updateEntity } from '../../../src/model/crud.js';
import type { ResourceDef } from '../../../src/model/resource.js';
import {
  edgeRouterPolicies,
  edgeRouters,
  postureChecks,
  serviceEdgeRouterPolicies,
  servicePolicies,
  services,
} from '../../../src/model/resources/index.js';

let testStore: TestStore;
let ctx: Ctx;
let n = 0;

before(async () => {
  testStore = await openTestStore('edgectl-write-cost-');
  ({ ctx } = testStore);
});
after(async () => {
  await testStore.close();
});

/** Rows changed by `write` (total_changes) and the net rows it added over every table. */
async function cost(write: () => Promise<unknown>): Promise<{ changes: number; rows: number }> {
  const before = await measure();
  await write();
  const after = await measure();
  return { changes: after.changes - before.changes, rows: after.rows - before.rows };
}

async function measure(): Promise<{ changes: number; rows: number }> {
  const { rows: tables } = await sql<{ name: string }>`select name from sqlite_master
    where type = 'table' and name not like 'sqlite_%' and sql not like '%virtual table%'`.execute(ctx.db);
  let rows = 0;
  for (const t of tables)
    rows += (await sql<{ n: number }>`select count(*) as n from ${sql.table(t.name)}`.execute(ctx.db)).rows[0]!.n;
  const changes = (await sql<{ n: number }>`select total_changes() as n`.execute(ctx.db)).rows[0]!.n;
  return { changes, rows };
}

const makeServices = async (count: number, attr: string) => {
  for (let i = 0; i < count; i++)
    await createEntity(ctx, services, { name: `svc-${n++}`, roleAttributes: [attr], encryptionRequired: true });
};
const makeRouters = async (count: number, attr: string) => {
  for (let i = 0; i < count; i++) await createEntity(ctx, edgeRouters, { name: `er-${n++}`, roleAttributes: [attr] });
};
const makeChecks = async (count: number, attr: string) => {
  for (let i = 0; i < count; i++)
    await createEntity(ctx, postureChecks, { name: `pc-${n++}`, roleAttributes: [attr], typeId: 'MFA' });
};

/** A policy of `def`'s kind whose every side selects `#attr`. */
function policyBody(def: ResourceDef, attr: string): Record<string, unknown> {
  const role = [`#${attr}`];
  if (def === servicePolicies)
    return { type: 'Dial', semantic: 'AnyOf', identityRoles: role, serviceRoles: role, postureCheckRoles: role };
  if (def === edgeRouterPolicies) return { semantic: 'AnyOf', identityRoles: role, edgeRouterRoles: role };
  return { semantic: 'AnyOf', serviceRoles: role, edgeRouterRoles: role };
}
const POLICY_DEFS = [servicePolicies, edgeRouterPolicies, serviceEdgeRouterPolicies];

test('a policy create or role change writes the same rows whether it selects 2 entities or 40', async () => {
  await makeServices(2, 'few');
  await makeRouters(2, 'few');
  await makeChecks(2, 'few');
  await makeServices(40, 'many');
  await makeRouters(40, 'many');
  await makeChecks(40, 'many');
  for (const def of POLICY_DEFS) {
    const few = await cost(() => createEntity(ctx, def, { name: `p-${n++}`, ...policyBody(def, 'few') }));
    const manyId = { id: '' };
    const many = await cost(async () => {
      manyId.id = await createEntity(ctx, def, { name: `p-${n++}`, ...policyBody(def, 'many') });
    });
    assert.ok(few.changes > 0, 'the measure sees the write');
    assert.deepEqual(many, few, `${def.name}: create selecting 40 of each side vs 2`);
    // Back and forth between a list selecting 2 and one selecting 40: the same rows either way.
    const toFew = await cost(() => updateEntity(ctx, def, manyId.id, policyBody(def, 'few'), 'patch'));
    const toMany = await cost(() => updateEntity(ctx, def, manyId.id, policyBody(def, 'many'), 'patch'));
    assert.deepEqual(toMany, toFew, `${def.name}: role change to 40 selected vs to 2`);
  }
});

test('an entity create writes the same rows whether 1 policy selects it or 20', async () => {
  for (const def of POLICY_DEFS)
    for (let i = 0; i < 20; i++) await createEntity(ctx, def, { name: `p-${n++}`, ...policyBody(def, 'busy') });
  for (const def of POLICY_DEFS) await createEntity(ctx, def, { name: `p-${n++}`, ...policyBody(def, 'quiet') });
  const create = (attr: string) => [
    () => createEntity(ctx, services, { name: `svc-${n++}`, roleAttributes: [attr], encryptionRequired: true }),
    () => createEntity(ctx, edgeRouters, { name: `er-${n++}`, roleAttributes: [attr] }),
    () => createEntity(ctx, postureChecks, { name: `pc-${n++}`, roleAttributes: [attr], typeId: 'MFA' }),
  ];
  const quiet = create('quiet');
  const busy = create('busy');
  for (let i = 0; i < quiet.length; i++) {
    const one = await cost(quiet[i]!);
    const twenty = await cost(busy[i]!);
    assert.ok(one.changes > 0, 'the measure sees the write');
    assert.deepEqual(twenty, one, `entity kind ${i}: selected by 20 policies of each kind vs 1`);
  }
});
