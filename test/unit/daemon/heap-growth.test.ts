/**
 * The controller fixes V8's heap growth between full collections (src/daemon/heap-growth.ts), unless the operator
 * gave their own on the node command line or in NODE_OPTIONS.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HEAP_GROWING_PERCENT, heapGrowthFlag } from '../../../src/daemon/heap-growth.js';

test('the controller asks for its heap growth when nothing sets one', () => {
  const own = `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
  assert.equal(heapGrowthFlag([], undefined), own);
  assert.equal(heapGrowthFlag(['--enable-source-maps'], '--max-old-space-size=2048 --trace-warnings'), own);
  assert.equal(heapGrowthFlag([], ''), own);
  // Another flag that merely starts alike is not the growth.
  assert.equal(heapGrowthFlag(['--heap-growing-percentile=3'], undefined), own);
  assert.ok(HEAP_GROWING_PERCENT > 0 && HEAP_GROWING_PERCENT < 100);
});

test("an operator's own heap growth is left alone, on the command line or in NODE_OPTIONS, in either spelling", () => {
  assert.equal(heapGrowthFlag(['--heap-growing-percent=20'], undefined), undefined);
  assert.equal(heapGrowthFlag([], '--max-old-space-size=2048 --heap_growing_percent=0'), undefined);
  assert.equal(heapGrowthFlag(['--heap-growing-percent', '80'], undefined), undefined);
});
