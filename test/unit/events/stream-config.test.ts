/**
 * `events.stream.*` in the config file (docs/events.md, "The live stream"): the live stream's bounds, with their
 * defaults, read from the file, each refused with its key named when out of range or mistyped.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../src/daemon/config.js';

function withYaml(yaml: string) {
  const file = join(mkdtempSync(join(tmpdir(), 'edgectl-cfg-')), 'c.yml');
  writeFileSync(file, yaml);
  return () => loadConfig({ flags: { config: file }, env: {} });
}

test('the stream’s bounds default to 32 clients, 256 KiB, a 10 s write timeout and a 15 s heartbeat', () => {
  assert.deepEqual(loadConfig({ flags: {}, env: {} }).events.stream, {
    maxClients: 32,
    bufferBytes: 256 * 1024,
    writeTimeoutMs: 10_000,
    heartbeatMs: 15_000,
    pollMs: 500,
    batch: 100,
  });
});

test('the stream’s bounds are read from events.stream', () => {
  const c = withYaml(
    'events:\n  stream:\n    maxClients: 4\n    bufferKiB: 64\n    writeTimeout: 2s\n    heartbeat: 30s\n    pollInterval: 250ms\n    batchSize: 20\n',
  )();
  assert.deepEqual(c.events.stream, {
    maxClients: 4,
    bufferBytes: 64 * 1024,
    writeTimeoutMs: 2000,
    heartbeatMs: 30_000,
    pollMs: 250,
    batch: 20,
  });
});

test('bad stream bounds are refused with the key named', () => {
  const bad: [string, RegExp][] = [
    ['maxClients: 0', /events\.stream\.maxClients must be a whole number from 1 to 10000/],
    ['maxClients: many', /events\.stream\.maxClients/],
    ['bufferKiB: 8', /events\.stream\.bufferKiB must be a whole number from 16 to 65536/],
    ['bufferKiB: 1.5', /events\.stream\.bufferKiB/],
    ['writeTimeout: 10ms', /events\.stream\.writeTimeout must be at least 100 ms/],
    ['writeTimeout: 1h', /events\.stream\.writeTimeout must be at most/],
    ['heartbeat: soon', /events\.stream\.heartbeat/],
    ['heartbeat: 100ms', /events\.stream\.heartbeat must be at least 1000 ms/],
    ['pollInterval: 1ms', /events\.stream\.pollInterval must be at least 50 ms/],
    ['batchSize: 0', /events\.stream\.batchSize must be a whole number from 1 to 10000/],
    [
      'maxClient: 3',
      /unknown key "events\.stream\.maxClient" \(the nearest known key is "events\.stream\.maxClients"\)/,
    ],
  ];
  for (const [line, error] of bad) assert.throws(withYaml(`events:\n  stream:\n    ${line}\n`), error, line);
});
