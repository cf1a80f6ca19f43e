/** The metrics keys: off by default, a separate listener only when given, mistakes refused at load time. */
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

test('metrics are off by default: not on the main listener, no listener of their own', () => {
  assert.deepEqual(loadConfig({ flags: {}, env: {} }).metrics, { enabled: false });
});

test('metrics.enabled and metrics.listen are read from the config file', () => {
  assert.deepEqual(withYaml('metrics:\n  enabled: true\n')().metrics, { enabled: true });
  assert.deepEqual(withYaml('metrics:\n  listen: 127.0.0.1:9464\n')().metrics, {
    enabled: false,
    listen: { host: '127.0.0.1', port: 9464 },
  });
});

test('bad metrics settings are refused with the key named', () => {
  assert.throws(withYaml('metrics:\n  enabled: "yes"\n'), /metrics\.enabled/);
  assert.throws(withYaml('metrics:\n  listen: 9464\n'), /metrics\.listen/);
  assert.throws(withYaml('metrics:\n  listen: localhost\n'), /metrics\.listen/);
  assert.throws(withYaml('metrics:\n  listen: 127.0.0.1:70000\n'), /metrics\.listen/);
});
