/** Config keys for listener bounds and CORS, and the bounds on durations: mistakes fail at load time. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../src/daemon/config.js';
import { parseDuration } from '../../../src/daemon/duration.js';

function withYaml(yaml: string) {
  const file = join(mkdtempSync(join(tmpdir(), 'edgectl-cfg-')), 'c.yml');
  writeFileSync(file, yaml);
  return () => loadConfig({ flags: { config: file }, env: {} });
}

test('limits and CORS have safe defaults: bounded connections, no cross-origin access', () => {
  const c = loadConfig({ flags: {}, env: {} });
  assert.deepEqual(c.limits, {
    maxConnections: 10_000,
    maxConnectionsPerAddress: 500,
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 60_000,
  });
  assert.deepEqual(c.corsAllowedOrigins, []);
});

test('limits and allowed origins are read from the config file', () => {
  const c = withYaml(
    'limits:\n  maxConnections: 50\n  maxConnectionsPerAddress: 5\n  headersTimeout: 2s\n  requestTimeout: 1m\nweb:\n  cors:\n    allowedOrigins: [https://console.example, "http://localhost:8443/"]\n',
  )();
  assert.deepEqual(c.limits, {
    maxConnections: 50,
    maxConnectionsPerAddress: 5,
    headersTimeoutMs: 2000,
    requestTimeoutMs: 60_000,
  });
  assert.deepEqual(c.corsAllowedOrigins, ['https://console.example', 'http://localhost:8443']);
});

test('bad limits are refused with the key named', () => {
  assert.throws(withYaml('limits:\n  maxConnections: 0\n'), /limits\.maxConnections/);
  assert.throws(withYaml('limits:\n  maxConnectionsPerAddress: lots\n'), /limits\.maxConnectionsPerAddress/);
  assert.throws(withYaml('limits:\n  headersTimeout: 20m\n'), /limits\.headersTimeout must be at most/);
  assert.throws(
    withYaml('limits:\n  headersTimeout: 30s\n  requestTimeout: 10s\n'),
    /requestTimeout must be at least limits\.headersTimeout/,
  );
});

test('CORS origins must be exact origins', () => {
  for (const bad of ['"*"', 'https://console.example/app', 'console.example', 'ftp://console.example', 'null']) {
    assert.throws(withYaml(`web:\n  cors:\n    allowedOrigins: [${bad}]\n`), /web\.cors\.allowedOrigins/, bad);
  }
  assert.throws(withYaml('web:\n  cors:\n    allowedOrigins: https://console.example\n'), /must be a list/);
});

test('a duration too large for a date is refused at load, naming the setting', () => {
  assert.throws(
    withYaml('edge:\n  api:\n    sessionTimeout: 999999999999h\n'),
    /edge\.api\.sessionTimeout must be at most 8784h/,
  );
  assert.throws(
    withYaml('edge:\n  enrollment:\n    edgeIdentity:\n      duration: 100000h\n'),
    /edgeIdentity\.duration must be at most/,
  );
  assert.throws(() => parseDuration('9'.repeat(400) + 'h'), /too large/);
  assert.equal(withYaml('edge:\n  api:\n    sessionTimeout: 8784h\n')().sessionTimeoutMs, 8784 * 3_600_000);
});
