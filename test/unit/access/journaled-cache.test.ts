/**
 * The access engine's caches are bounded by their entries' count and, where entries grow with the model (a policy
 * set's services or routers), by what the entries hold together (docs/policy-engine.md, "Answering access per
 * request").
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JournaledCache } from '../../../src/model/access/journaled-cache.js';
import type { Markers } from '../../../src/store/access-markers.js';
import type { Executor } from '../../../src/store/db.js';

const m = { catalog: { gen: 1, changedAt: '' } } as unknown as Markers;
const db = {} as Executor;
const keep = <V>(v: V) => v;

test('a weighed cache keeps its entries within the summed weight, oldest out first', async () => {
  const cache = new JournaledCache<string, number[]>(100, ['catalog'], { max: 10, of: (v) => v.length });
  let computed = 0;
  const get = (key: string, size: number) =>
    cache.get(db, key, m, async () => (computed++, Array.from({ length: size }, (_, i) => i)), keep);
  await get('a', 4);
  await get('b', 4);
  assert.equal(cache.size, 2);
  await get('c', 4); // 12 > 10: the oldest goes
  assert.equal(cache.size, 2);
  assert.equal(computed, 3);
  await get('c', 4);
  await get('b', 4);
  assert.equal(computed, 3, 'b and c are still there');
  await get('a', 4);
  assert.equal(computed, 4, 'a was pushed out and is computed again');
  await get('big', 11); // heavier than the whole bound: answered, not kept
  assert.equal(computed, 5);
  await get('big', 11);
  assert.equal(computed, 6);
});

test('without a weight only the count bounds the cache', async () => {
  const cache = new JournaledCache<string, number[]>(2, ['catalog']);
  for (const key of ['a', 'b', 'c']) await cache.get(db, key, m, async () => new Array<number>(1000).fill(0), keep);
  assert.equal(cache.size, 2);
});
