/**
 * The catalog's layered maps (layered-map.ts) answer like a plain map through random sets and removals, across
 * the folds into a new base, and a version once made never changes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LayeredMap } from '../../../src/model/access/layered-map.js';
import { rng } from '../../harness/random.js';

test('a layered map answers like a plain map, and older versions keep their answers', () => {
  const rand = rng(11);
  const keys = Array.from({ length: 300 }, (_, i) => `k${i}`);
  const plain = new Map(keys.slice(0, 200).map((k, i) => [k, i]));
  let layered = LayeredMap.of(new Map(plain));
  const versions: [LayeredMap<string, number>, Map<string, number>][] = [];
  for (let step = 0; step < 400; step++) {
    const changes: [string, number | undefined][] = [];
    for (let i = 0; i < 1 + Math.floor(rand() * 4); i++) {
      const k = keys[Math.floor(rand() * keys.length)]!;
      changes.push([k, rand() < 0.3 ? undefined : step * 10 + i]);
    }
    layered = layered.with(changes);
    for (const [k, v] of changes) {
      if (v === undefined) plain.delete(k);
      else plain.set(k, v);
    }
    if (step % 50 === 0) versions.push([layered, new Map(plain)]);
    for (const k of keys) {
      assert.equal(layered.get(k), plain.get(k), `step ${step}: ${k}`);
      assert.equal(layered.has(k), plain.has(k), `step ${step}: has ${k}`);
    }
  }
  for (const [version, was] of versions) for (const k of keys) assert.equal(version.get(k), was.get(k));
});
