/**
 * The file sink rotates past its size, keeping `maxFiles` older files, each 0600; the `events` config section
 * takes days, paths in the data dir and namespace filters, and refuses what it does not know.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileSink } from '../../../src/daemon/event-sinks.js';
import { parseEventsConfig } from '../../../src/daemon/events-config.js';

test('past its size the file is rotated, the oldest dropped, every file 0600', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'edgectl-sink-'));
  try {
    const path = join(dir, 'logs', 'events.jsonl');
    const sink = new FileSink({ type: 'file', name: `file:${path}`, path, maxBytes: 40, maxFiles: 2 });
    const ev = (n: number) => JSON.stringify({ id: `e${n}`, pad: 'x'.repeat(10) });
    for (let n = 1; n <= 5; n++) await sink.write([ev(n)]);
    assert.equal(readFileSync(path, 'utf8'), `${ev(5)}\n`);
    assert.equal(readFileSync(`${path}.1`, 'utf8'), `${ev(4)}\n`);
    assert.equal(readFileSync(`${path}.2`, 'utf8'), `${ev(3)}\n`);
    assert.equal(existsSync(`${path}.3`), false, 'only maxFiles rotated files are kept');
    for (const f of [path, `${path}.1`, `${path}.2`]) assert.equal(statSync(f).mode & 0o777, 0o600, f);
    assert.equal(sink.accepts('authentication'), true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the events config: defaults, days, relative paths and namespace filters; bad settings are named', () => {
  const d = parseEventsConfig(undefined, undefined, '/data');
  assert.equal(d.retentionMs, 30 * 86_400_000);
  assert.deepEqual(d.sinks, []);
  const c = parseEventsConfig(
    '7d',
    [{ type: 'file', path: 'ev.jsonl', namespaces: ['authentication'], maxFiles: 0 }],
    '/data',
  );
  assert.equal(c.retentionMs, 7 * 86_400_000);
  assert.deepEqual(c.sinks[0], {
    type: 'file',
    name: 'file:/data/ev.jsonl',
    path: '/data/ev.jsonl',
    namespaces: ['authentication'],
    maxBytes: 100 * 1024 * 1024,
    maxFiles: 0,
  });
  assert.equal(parseEventsConfig('720h', [], '/d').retentionMs, 30 * 86_400_000);
  assert.throws(() => parseEventsConfig('soon', [], '/d'), /events\.retention/);
  assert.throws(() => parseEventsConfig(undefined, [{ type: 'webhook', url: 'x' }], '/d'), /unknown key "url"/);
  assert.throws(() => parseEventsConfig(undefined, [{ type: 'kafka' }], '/d'), /type must be "file"/);
  assert.throws(
    () => parseEventsConfig(undefined, [{ type: 'file', path: 'a', namespaces: ['x'] }], '/d'),
    /namespaces/,
  );
  assert.throws(
    () =>
      parseEventsConfig(
        undefined,
        [
          { type: 'file', path: 'a' },
          { type: 'file', path: '/d/a' },
        ],
        '/d',
      ),
    /another sink/,
  );
  assert.throws(() => parseEventsConfig(undefined, { type: 'file' }, '/d'), /must be a list/);
});
