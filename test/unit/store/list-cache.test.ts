/**
 * The listing cache (src/store/list-cache.ts): a kept result is answered only while no table it reads was
 * written since it was read; the activity touch reaches only results that read `api_sessions`; reads inside a
 * transaction and reads disturbed by a write are never kept; each store keeps its own results.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { sql, type CompiledQuery } from 'kysely';
import { openStore, withTx, type Executor, type OpenedStore } from '../../../src/store/db.js';
import { LIST_CACHE, readWithCache } from '../../../src/store/list-cache.js';
import { touchApiSession } from '../../../src/store/api-sessions.js';
import { storeCache } from '../../../src/store/runtime.js';

let store: OpenedStore;
before(async () => {
  store = await openStore(':memory:');
});
after(() => store.close());
beforeEach(() => storeCache(store.db, LIST_CACHE)!.clear());
const cacheSize = () => storeCache(store.db, LIST_CACHE)!.size;

const identityCount = (): CompiledQuery => sql`select count(*) as n from identities`.compile(store.db);
const sessionCount = (): CompiledQuery => sql`select count(*) as n from api_sessions`.compile(store.db);

/** Reads through the cache, answering how many times the read itself ran. */
async function reads(q: CompiledQuery, times: number, db: Executor = store.db): Promise<number> {
  let ran = 0;
  for (let i = 0; i < times; i++) {
    await readWithCache(db, q, async () => {
      ran++;
      return ran;
    });
  }
  return ran;
}

const writeIdentities = () => sql`update identities set name = name where id = 'none'`.execute(store.db);
const writeOther = () => sql`update auth_policies set name = name where id = 'none'`.execute(store.db);

test('a repeated read is answered from the cache until a table it reads is written', async () => {
  assert.equal(await reads(identityCount(), 3), 1);
  await writeOther();
  assert.equal(await reads(identityCount(), 3), 0, 'a write to another table leaves it');
  await writeIdentities();
  assert.equal(await reads(identityCount(), 3), 1);
  await withTx(store.db, (trx) => sql`delete from identities where id = 'none'`.execute(trx));
  assert.equal(await reads(identityCount(), 2), 1, 'a transaction writing the table');
});

test('a write reaches the reads of the tables its cascades and triggers change', async () => {
  assert.equal(await reads(sessionCount(), 2), 1);
  // Deleting an identity deletes its API sessions (foreign key cascade).
  await sql`delete from identities where id = 'none'`.execute(store.db);
  assert.equal(await reads(sessionCount(), 2), 1);
  const markers = sql`select gen from access_markers`.compile(store.db);
  assert.equal(await reads(markers, 2), 1);
  // A service's insert fires the marker trigger (even when it then fails nothing: the statement ran).
  await sql`delete from services where id = 'none'`.execute(store.db);
  assert.equal(await reads(markers, 2), 1);
});

test('the same SQL with other bound values is another entry', async () => {
  const a = sql`select count(*) from identities where name = ${'a'}`.compile(store.db);
  const b = sql`select count(*) from identities where name = ${'b'}`.compile(store.db);
  assert.equal(await reads(a, 2), 1);
  assert.equal(await reads(b, 2), 1);
  assert.equal(cacheSize(), 2);
});

test('the activity touch keeps results that do not read api_sessions, and only those', async () => {
  assert.equal(await reads(identityCount(), 1), 1);
  assert.equal(await reads(sessionCount(), 1), 1);
  await touchApiSession(store.db, 'none', new Date().toISOString());
  assert.equal(await reads(identityCount(), 1), 0);
  assert.equal(await reads(sessionCount(), 1), 1);
});

test('reads in a transaction are neither answered nor kept', async () => {
  await withTx(store.db, async (trx) => {
    assert.equal(await reads(identityCount(), 3, trx), 3);
  });
  assert.equal(cacheSize(), 0);
  assert.equal(await reads(identityCount(), 1), 1);
});

test('a read during which a table it reads was written is not kept', async () => {
  const q = identityCount();
  await readWithCache(store.db, q, async () => {
    await writeIdentities();
    return 0;
  });
  assert.equal(cacheSize(), 0);
  assert.equal(await reads(q, 2), 1);
});

test('results are bounded by weight: a page too heavy is not kept, and heavy ones push out the oldest', async () => {
  const q = (k: number) => sql`select count(*) from identities where name = ${`w${k}`}`.compile(store.db);
  await readWithCache(
    store.db,
    q(0),
    async () => 0,
    () => 20_001,
  );
  assert.equal(cacheSize(), 0);
  await readWithCache(store.db, q(1), async () => 1);
  await readWithCache(
    store.db,
    q(2),
    async () => 2,
    () => 15_000,
  );
  await readWithCache(
    store.db,
    q(3),
    async () => 3,
    () => 5_000,
  );
  // 1 + 15,000 + 5,000 exceeds the bound of 20,000: the oldest entry went.
  assert.equal(cacheSize(), 2);
  assert.equal(await reads(q(1), 1), 1);
});

test('two stores in one process never answer each other', async () => {
  const other = await openStore(':memory:');
  try {
    await sql`insert into config_types (id, name, "createdAt", "updatedAt", schema, tags, "isSystem") values ('a', 'only-in-a', '', '', '{}', '{}', 0)`.execute(
      store.db,
    );
    const q = (db: Executor) => sql`select name from config_types where name = 'only-in-a'`.compile(db);
    const names = (db: Executor) =>
      readWithCache(db, q(db), async () => (await db.executeQuery<{ name: string }>(q(db))).rows.map((r) => r.name));
    assert.deepEqual(await names(store.db), ['only-in-a']);
    assert.deepEqual(await names(other.db), []);
    assert.deepEqual(await names(store.db), ['only-in-a']);
  } finally {
    await other.close();
    await sql`delete from config_types where id = 'a'`.execute(store.db);
  }
});
