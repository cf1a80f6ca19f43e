/** The one bounded map of the store runtime's caches (src/store/weighed-map.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WeighedMap } from '../../../src/store/weighed-map.js';

test('bounded by entries and by weight, oldest out first; a touched entry becomes the youngest', () => {
  const m = new WeighedMap<string>(3, 10, 6);
  m.set('a', 'A', 2);
  m.set('b', 'B', 2);
  m.set('c', 'C', 2);
  assert.equal(m.get('a', true), 'A'); // a is now the youngest
  m.set('d', 'D', 2); // four entries: the oldest (b) goes
  assert.deepEqual(
    ['a', 'b', 'c', 'd'].map((k) => m.get(k)),
    ['A', undefined, 'C', 'D'],
  );
  m.set('e', 'E', 6); // a full map: the oldest (c) goes, and then 4 + 6 fits the weight
  assert.deepEqual(
    ['a', 'c', 'd', 'e'].map((k) => m.get(k)),
    ['A', undefined, 'D', 'E'],
  );
  m.set('g', 'G', 3); // full again, then 8 + 3 > 10: the oldest (a, then d) go until it fits
  assert.deepEqual(
    ['a', 'd', 'e', 'g'].map((k) => m.get(k)),
    [undefined, undefined, 'E', 'G'],
  );
  m.set('e', 'too heavy', 7); // heavier than one item may be: not kept, and the old value is gone
  assert.equal(m.get('e'), undefined);
  assert.equal(m.size, 1);
  m.clear();
  m.set('f', 'F', 10); // the whole weight is free again, but above the item bound
  assert.equal(m.size, 0);
  m.set('f', 'F', 6);
  assert.equal(m.size, 1);
});
