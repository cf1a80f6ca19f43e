/**
 * Entity ids (src/model/ids.ts): 16 base-62 characters that sort by creation time, so new keys land at the end of
 * the indexes on them, and that differ even when made in the same millisecond.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newEntityId } from '../../../src/model/ids.js';

test('entity ids are 16 URL-safe characters', () => {
  for (let i = 0; i < 100; i++) assert.match(newEntityId(), /^[0-9A-Za-z]{16}$/);
});

test('entity ids sort by their creation time, as text', () => {
  const times = [0, 1, 61, 62, 3843, 1_700_000_000_000, 1_800_000_000_000, 1_800_000_000_001, 3e12];
  const ids = times.map((t) => newEntityId(t));
  assert.deepEqual([...ids].sort(), ids, 'text order is time order, across digit and case boundaries');
});

test('ids made in the same millisecond differ', () => {
  const now = Date.now();
  const ids = new Set(Array.from({ length: 10_000 }, () => newEntityId(now)));
  assert.equal(ids.size, 10_000);
  for (const id of ids) assert.equal(id.slice(0, 7), newEntityId(now).slice(0, 7), 'the time prefix is shared');
});
