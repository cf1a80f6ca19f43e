/**
 * The substring-search index (migration 0012): when the filter compiler narrows `contains`/`icontains` with it,
 * that the rows are those of the plain test whatever the filter, and that the integrity scan finds and repairs
 * a missing trigger and an index that no longer matches its table.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type SqlBool } from 'kysely';
import { compileListQuery } from '../../../src/model/list-query.js';
import { filterFields } from '../../../src/model/resource.js';
import { identities } from '../../../src/model/resources/identity.js';
import { repairIntegrity, scanIntegrity } from '../../../src/model/integrity/run.js';
import type { FieldTable } from '../../../src/model/filter/fields.js';
import { openTestStore, type TestStore } from '../../harness/store.js';
import { sqliteDialect } from '../../../src/store/filter-sql.js';
import { createEntity } from '../../../src/model/crud.js';
import { runtimeOf, runTransaction } from '../../../src/store/runtime.js';
import type { Store } from '../../../src/store/executor.js';

const NAMES = ['alpha-one', 'Alpha-Two', 'beta "quoted" one', 'gamma', 'ALPHABET', 'zeta one', 'éclair Élan', 'x'];

let t: TestStore;
const indexed: FieldTable = filterFields(identities);
// The same fields without the index: the plain `instr` test only.
const plain: FieldTable = Object.fromEntries(
  Object.entries(indexed).map(([k, f]) => {
    if (f.kind !== 'scalar') return [k, f];
    const { searchIndex: _drop, ...rest } = f;
    return [k, rest];
  }),
);

before(async () => {
  t = await openTestStore();
  const now = new Date().toISOString();
  const insert = t.store.raw.prepare(
    `insert into identities (id, createdAt, updatedAt, name, typeId, authPolicyId, isAdmin) values (?, ?, ?, ?, 'User', 'default', ?)`,
  );
  NAMES.forEach((name, i) => insert.run(`id${i}`, now, now, name, i % 2));
});

after(async () => {
  await t.close();
});

/** The compiled WHERE's SQL text and the ids it selects, sorted by name descending as the bench asks. */
async function run(filter: string, fields: FieldTable): Promise<{ text: string; ids: string[]; total: number }> {
  const q = compileListQuery({ filter }, fields, sqliteDialect);
  const where = q.where ?? sql<SqlBool>`1 = 1`;
  const query = t.ctx.db.selectFrom('identities as t').select('t.id').where(where);
  let ordered = query;
  for (const o of q.orderBy) ordered = ordered.orderBy(o.expr, o.direction);
  const rows = await ordered.execute();
  const [count] = await t.ctx.db
    .selectFrom('identities as t')
    .select(sql<number>`count(*)`.as('n'))
    .where(where)
    .execute();
  return { text: query.compile().sql, ids: rows.map((r) => r.id), total: Number(count!.n) };
}

/** Runs `filter` with and without the index; asserts equal results and whether the index was used. */
async function same(filter: string, usesIndex: boolean): Promise<string[]> {
  const a = await run(filter, indexed);
  const b = await run(filter, plain);
  assert.equal(/\bmatch\b/.test(a.text), usesIndex, `${filter}: index used? ${a.text}`);
  assert.ok(!/\bmatch\b/.test(b.text));
  assert.deepEqual(a.ids, b.ids, filter);
  assert.equal(a.total, b.total, filter);
  return a.ids;
}

test('a needle of three or more characters reads the index; the rows are the plain test’s', async () => {
  assert.deepEqual(await same('name contains "lph" sort by name desc', true), ['id0', 'id1']);
  assert.deepEqual(await same('name contains "Alph"', true), ['id1']);
  assert.deepEqual(await same('name contains "one"', true), ['id0', 'id2', 'id5']);
});

test('a shorter needle keeps the plain test', async () => {
  assert.deepEqual(await same('name contains "ph"', false), ['id0', 'id1']);
  assert.deepEqual(
    await same('name contains ""', false),
    NAMES.map((_, i) => `id${i}`),
  );
});

test('icontains uses the index and folds case as before (ASCII letters only)', async () => {
  assert.deepEqual(await same('name icontains "ALPH" sort by name asc', true), ['id4', 'id1', 'id0']);
  // SQLite's upper() leaves é/É apart, so only the exact letter matches, index or not.
  assert.deepEqual(await same('name icontains "éclair"', true), ['id6']);
  assert.deepEqual(await same('name icontains "ÉCLAIR"', true), []);
});

test('a needle with quotes and FTS5 syntax is taken literally', async () => {
  assert.deepEqual(await same('name contains "\\"quoted\\""', true), ['id2']);
  await same('name contains "a* OR b"', true);
  await same('name contains "NEAR(x"', true);
});

test('not contains and a negated contains read every row, with the reference’s results', async () => {
  await same('name not contains "alpha"', false);
  await same('name not icontains "alpha"', false);
  // `not (…)` keeps the index as a narrowing inside; the result is still the complement.
  const ids = await same('not (name contains "alpha")', true);
  assert.ok(ids.includes('id1') && !ids.includes('id0'));
});

test('combined with other predicates', async () => {
  await same('name icontains "alpha" and isAdmin = true', true);
  await same('name contains "one" or isAdmin = true', true);
  await same('(name contains "one" and name contains "zeta") or name = "gamma"', true);
  await same('name contains "one" and name not contains "zeta"', true);
});

test('the index follows inserts, renames and deletes in the same statement', async () => {
  t.store.raw.prepare(`update identities set name = 'renamed-alpha' where id = 'id3'`).run();
  t.store.raw.prepare(`delete from identities where id = 'id5'`).run();
  assert.deepEqual(await same('name contains "alpha" sort by name asc', true), ['id0', 'id3']);
  assert.deepEqual(await same('name contains "gamma"', true), []);
  assert.deepEqual(await same('name contains "zeta"', true), []);
});

test('the integrity scan finds a missing trigger and a stale index, and fix repairs both', async () => {
  assert.deepEqual(await scanIntegrity(t.ctx), []);
  t.store.raw.exec(`drop trigger identities_name_search_update`);
  t.store.raw.prepare(`update identities set name = 'omega' where id = 'id7'`).run();
  const found = (await scanIntegrity(t.ctx)).map((f) => f.description);
  assert.equal(found.length, 2, found.join('\n'));
  assert.match(found[0]!, /^trigger identities_name_search_update on identities is missing$/);
  assert.match(found[1]!, /identities_name_search: its entries differ from the names of identities/);
  // Stale: the indexed search misses the renamed row the plain test finds.
  assert.deepEqual((await run('name contains "omega"', indexed)).ids, []);
  await repairIntegrity(t.ctx, await scanIntegrity(t.ctx));
  assert.deepEqual(await scanIntegrity(t.ctx), []);
  assert.deepEqual(await same('name contains "omega"', true), ['id7']);
  t.store.raw.prepare(`update identities set name = 'omega-2' where id = 'id7'`).run();
  assert.deepEqual(await same('name contains "omega-2"', true), ['id7']);
});

test('a dropped index table is recreated and refilled', async () => {
  t.store.raw.exec(`drop table services_name_search`);
  const found = (await scanIntegrity(t.ctx)).map((f) => f.description);
  assert.deepEqual(found, ['search index services_name_search: the table services_name_search is missing']);
  await repairIntegrity(t.ctx, await scanIntegrity(t.ctx));
  assert.deepEqual(await scanIntegrity(t.ctx), []);
});

/** The index's count of segments written (FTS5's structure record: cookie, levels, segments, write counter). */
function segmentsWritten(index: string): number {
  const row = t.store.raw.prepare(`select block from "${index}_data" where id = 10`).get() as { block: Buffer };
  const b = row.block;
  let i = 4;
  if (b.subarray(4, 8).toString('latin1') === '\xff\x00\x00\x01') i += 4;
  const varint = (): number => {
    let v = 0;
    for (let n = 0; n < 9; n++) {
      const byte = b[i++]!;
      if (n === 8) return v * 256 + byte;
      v = v * 128 + (byte & 0x7f);
      if (byte < 0x80) return v;
    }
    return v;
  };
  varint(); // levels
  varint(); // segments
  return varint();
}

test('new names reach the index once per commit, and are found before it', async () => {
  // Behaviour locked in (issue #25): a group commit of creates writes one FTS5 segment, not one per create
  // (each member's savepoint flushed the index's pending entries); a name still queued is a search candidate.
  const batcher = runtimeOf(t.store.db)!.batcher!;
  const bound = batcher.maxBatchMs;
  batcher.maxBatchMs = Infinity;
  try {
    const before = segmentsWritten('identities_name_search');
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        createEntity(t.ctx, identities, { name: `queued-${i}`, type: 'Device', isAdmin: false, roleAttributes: ['q'] }),
      ),
    );
    assert.equal(segmentsWritten('identities_name_search') - before, 1, 'one segment for the commit of eight');
  } finally {
    batcher.maxBatchMs = bound;
  }
  const queued = t.store.raw.prepare('select count(*) as n from search_index_pending').get() as { n: number };
  assert.equal(queued.n, 0, 'the queue is empty');
  assert.equal((await same('name contains "queued-"', true)).length, 8);
  // Inside a transaction: found while queued; renamed and deleted while queued, the index stays whole.
  await runTransaction(t.store.db as Store, async (trx) => {
    await sql`insert into identities (id, "createdAt", "updatedAt", name, "typeId", "authPolicyId")
      values ('q1', '', '', 'pending-one', 'User', 'default'), ('q2', '', '', 'pending-two', 'User', 'default')`.execute(
      trx,
    );
    const q = compileListQuery({ filter: 'name contains "pending-"' }, indexed, sqliteDialect);
    const found = await trx.selectFrom('identities as t').select('t.id').where(q.where!).execute();
    assert.deepEqual(found.map((r) => r.id).sort(), ['q1', 'q2']);
    await sql`update identities set name = 'pending-renamed' where id = 'q1'`.execute(trx);
    await sql`delete from identities where id = 'q2'`.execute(trx);
  });
  assert.deepEqual(await same('name contains "pending-"', true), ['q1']);
  assert.deepEqual(await scanIntegrity(t.ctx), []);
});
