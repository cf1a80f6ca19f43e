/**
 * The listing cache (src/store/list-cache.ts): a kept result is answered only while nothing was written since
 * it was read; the activity touch leaves results that do not read `api_sessions` alone; reads inside a
 * transaction and reads disturbed by a write are never kept.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { sql, type CompiledQuery } from 'kysely';
import { openStore, withTx, type OpenedStore } from '../../../src/store/db.js';
import { clearListCache, listCacheSize, readWithCache } from '../../../src/store/list-cache.js';
import { touchApiSession } from '../../../src/store/api-sessions.js';

let store: OpenedStore;
before(async () => {
  store = await openStore(':memory:');
});
after(() => store.close());
beforeEach(() => clearListCache());

const identityCount = (): CompiledQuery => sql`select count(*) as n from identities`.compile(store.db);
const sessionCount = (): CompiledQuery => sql`select count(*) as n from api_sessions`.compile(store.db);

/** Reads through the cache, answering how many times the read itself ran. */
async function reads(q: CompiledQuery, times: number, inTransaction = false): Promise<number> {
  let ran = 0;
  for (let i = 0; i < times; i++) {
    await readWithCache(q, inTransaction, async () => {
      ran++;
      return ran;
    });
  }
  return ran;
}

const write = () => sql`update auth_policies set name = name where id = 'none'`.execute(store.db);

test('a repeated read is answered from the cache until the next write', async () => {
  assert.equal(await reads(identityCount(), 3), 1);
  await write();
  assert.equal(await reads(identityCount(), 3), 1);
  await withTx(store.db, (trx) => sql`select 1`.execute(trx)); // a commit counts as a write
  assert.equal(await reads(identityCount(), 2), 1);
});

test('the same SQL with other bound values is another entry', async () => {
  const a = sql`select count(*) from identities where name = ${'a'}`.compile(store.db);
  const b = sql`select count(*) from identities where name = ${'b'}`.compile(store.db);
  assert.equal(await reads(a, 2), 1);
  assert.equal(await reads(b, 2), 1);
  assert.equal(listCacheSize(), 2);
});

test('the activity touch keeps results that do not read api_sessions, and only those', async () => {
  assert.equal(await reads(identityCount(), 1), 1);
  assert.equal(await reads(sessionCount(), 1), 1);
  await touchApiSession(store.db, 'none', new Date().toISOString());
  assert.equal(await reads(identityCount(), 1), 0);
  assert.equal(await reads(sessionCount(), 1), 1);
});

test('reads in a transaction are neither answered nor kept', async () => {
  assert.equal(await reads(identityCount(), 3, true), 3);
  assert.equal(listCacheSize(), 0);
  assert.equal(await reads(identityCount(), 1), 1);
  assert.equal(await reads(identityCount(), 2, true), 2);
});

test('a read during which the store was written to is not kept', async () => {
  const q = identityCount();
  await readWithCache(q, false, async () => {
    await write();
    return 0;
  });
  assert.equal(listCacheSize(), 0);
  assert.equal(await reads(q, 2), 1);
});

test('results are bounded by weight: a page too heavy is not kept, and heavy ones push out the oldest', async () => {
  const q = (k: number) => sql`select count(*) from identities where name = ${`w${k}`}`.compile(store.db);
  await readWithCache(
    q(0),
    false,
    async () => 0,
    () => 20_001,
  );
  assert.equal(listCacheSize(), 0);
  await readWithCache(q(1), false, async () => 1);
  await readWithCache(
    q(2),
    false,
    async () => 2,
    () => 15_000,
  );
  await readWithCache(
    q(3),
    false,
    async () => 3,
    () => 5_000,
  );
  // 1 + 15,000 + 5,000 exceeds the bound of 20,000: the oldest entry went.
  assert.equal(listCacheSize(), 2);
  assert.equal(await reads(q(1), 1), 1);
});
