/** Config resolution and duration strings. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, parseListen } from '../../../src/daemon/config.js';
import { parseDuration } from '../../../src/daemon/duration.js';

test('durations accept Go-style units and combinations', () => {
  assert.equal(parseDuration('30m'), 1_800_000);
  assert.equal(parseDuration('90s'), 90_000);
  assert.equal(parseDuration('1h'), 3_600_000);
  assert.equal(parseDuration('1h30m'), 5_400_000);
  assert.equal(parseDuration('500ms'), 500);
  for (const bad of ['', '10', 'soon', '5 m', '1x']) assert.throws(() => parseDuration(bad), /duration/, bad);
});

test('listen addresses', () => {
  assert.deepEqual(parseListen('127.0.0.1:1280'), { host: '127.0.0.1', port: 1280 });
  assert.deepEqual(parseListen('[::1]:99'), { host: '::1', port: 99 });
  assert.throws(() => parseListen('nohost'), /HOST:PORT/);
});

test('defaults, file, env and flags in order of precedence', () => {
  const dir = mkdtempSync(join(tmpdir(), 'edgectl-cfg-'));
  const file = join(dir, 'c.yml');
  writeFileSync(
    file,
    'listen: 0.0.0.0:2000\nlog:\n  level: debug\nedge:\n  api:\n    sessionTimeout: 1s\n  enrollment:\n    edgeIdentity:\n      duration: 5m\n',
  );
  assert.throws(
    () => loadConfig({ flags: { config: file }, env: {} }),
    /needs the address clients should use: set --advertise/,
  );
  writeFileSync(
    file,
    'listen: 0.0.0.0:2000\nlog:\n  level: debug\nedge:\n  api:\n    address: ctrl.example.test\n    sessionTimeout: 1s\n  enrollment:\n    edgeIdentity:\n      duration: 5m\n',
  );
  const d = loadConfig({ flags: {}, env: {} });
  assert.equal(d.port, 1280);
  assert.equal(d.host, '127.0.0.1');
  assert.equal(d.sessionTimeoutMs, 1_800_000);
  assert.equal(d.identityEnrollmentDurationMs, 180 * 60_000);
  const f = loadConfig({ flags: { config: file }, env: {} });
  assert.equal(f.port, 2000);
  assert.equal(f.logLevel, 'debug');
  assert.equal(f.sessionTimeoutMs, 1000);
  assert.equal(f.identityEnrollmentDurationMs, 300_000);
  assert.equal(f.advertisedHost, 'ctrl.example.test', 'the advertised host from the file');
  assert.equal(f.advertisedPort, undefined, 'no advertised port: the bound one is used');
  const e = loadConfig({
    flags: { config: file },
    env: { EDGECTL_LISTEN: '127.0.0.2:3000', EDGECTL_LOG_LEVEL: 'warn' },
  });
  assert.equal(e.port, 3000);
  assert.equal(e.logLevel, 'warn');
  const fl = loadConfig({
    flags: { config: file, listen: '127.0.0.3:4000', logLevel: 'error' },
    env: { EDGECTL_LISTEN: '127.0.0.2:3000' },
  });
  assert.equal(fl.port, 4000);
  assert.equal(fl.logLevel, 'error');
  writeFileSync(file, 'edge:\n  api:\n    sessionTimeout: 500ms\n');
  assert.throws(() => loadConfig({ flags: { config: file }, env: {} }), /at least 1s/);
  assert.throws(() => loadConfig({ flags: { logLevel: 'loud' }, env: {} }), /log level/);
});
