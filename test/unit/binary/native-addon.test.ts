/** The one-file binary's addon cache (scripts/sea/native-addon.ts): content-addressed, private, self-repairing. */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { materialise, nativeCacheRoot } from '../../../scripts/sea/native-addon.js';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), 'edgectl-native-'));
  dirs.push(d);
  return d;
};
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

describe('native addon cache', () => {
  test('writes once under <root>/<sha256>/<name>, 0700 directories, and finds the same file again', () => {
    const root = join(temp(), 'cache', 'native');
    const bytes = new TextEncoder().encode('addon one');
    const file = materialise(bytes, 'native/a.node', root);
    assert.equal(file, join(root, sha(bytes), 'a.node'));
    assert.deepEqual(readFileSync(file), Buffer.from(bytes));
    assert.equal(statSync(root).mode & 0o777, 0o700);
    assert.equal(statSync(join(root, sha(bytes))).mode & 0o777, 0o700);
    const mtime = statSync(file).mtimeMs;
    assert.equal(materialise(bytes, 'native/a.node', root), file);
    assert.equal(statSync(file).mtimeMs, mtime, 'not rewritten');
    assert.deepEqual(readdirSync(join(root, sha(bytes))), ['a.node'], 'no temporary files left');
  });

  test('another content gets another directory; a torn or altered copy is replaced', () => {
    const root = temp();
    const one = materialise(new TextEncoder().encode('v1'), 'x.node', root);
    const two = materialise(new TextEncoder().encode('v2'), 'x.node', root);
    assert.notEqual(one, two);
    writeFileSync(two, 'v');
    assert.equal(materialise(new TextEncoder().encode('v2'), 'x.node', root), two);
    assert.equal(readFileSync(two, 'utf8'), 'v2');
  });

  test('a cache directory others may write to is refused', () => {
    const root = temp();
    const bytes = new TextEncoder().encode('z');
    mkdirSync(join(root, sha(bytes)));
    chmodSync(join(root, sha(bytes)), 0o777);
    assert.throws(() => materialise(bytes, 'z.node', root), /not a private directory/);
  });

  test('the cache root follows XDG_CACHE_HOME, else HOME', () => {
    assert.equal(nativeCacheRoot({ XDG_CACHE_HOME: '/c', HOME: '/h' }), join('/c', 'edgectl', 'native'));
    assert.equal(
      nativeCacheRoot({ XDG_CACHE_HOME: 'relative', HOME: '/h' }),
      join('/h', '.cache', 'edgectl', 'native'),
    );
    assert.equal(nativeCacheRoot({ HOME: '/h' }), join('/h', '.cache', 'edgectl', 'native'));
  });
});
