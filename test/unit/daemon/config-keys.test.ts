/** Unknown config keys, the advertised address and its precedence. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONFIG_KEYS, checkKeys, isUnspecifiedHost, loadConfig } from '../../../src/daemon/config.js';
import { AUTH_RATE_LIMIT_DEFAULTS } from '../../../src/daemon/auth-limiter.js';
import { CERT_RATE_LIMIT_DEFAULTS } from '../../../src/daemon/issuance-limiter.js';

const dir = mkdtempSync(join(tmpdir(), 'edgectl-keys-'));
function fileWith(yaml: string): string {
  const f = join(dir, `c${Math.random().toString(36).slice(2)}.yml`);
  writeFileSync(f, yaml);
  return f;
}
const load = (yaml: string, flags = {}, env = {}) => loadConfig({ flags: { config: fileWith(yaml), ...flags }, env });

test('an unknown key is refused, naming it and the nearest known key at its level', () => {
  assert.throws(() => load('lisen: 1.2.3.4:5\n'), /unknown key "lisen" \(the nearest known key is "listen"\)/);
  assert.throws(
    () => load('edge:\n  api:\n    adress: x.example\n'),
    /unknown key "edge.api.adress" .*"edge.api.address"/,
  );
  assert.throws(() => load('limits:\n  maxConnection: 5\n'), /"limits.maxConnection" .*"limits.maxConnections"/);
  assert.throws(
    () => load('web:\n  cors:\n    allowedOrigin: []\n'),
    /"web.cors.allowedOrigin" .*"web.cors.allowedOrigins"/,
  );
  assert.throws(
    () => load('edge:\n  api:\n    rateLimit:\n      auth:\n        maxConcurent: 2\n'),
    /"edge.api.rateLimit.auth.maxConcurent" .*"edge.api.rateLimit.auth.maxConcurrent"/,
  );
  assert.throws(() => load('edge: 5\n'), /edge must be a mapping/);
  assert.throws(() => load('- a\n- b\n'), /the top level must be a mapping/);
});

test('every key the loader reads is accepted, with valid values', () => {
  const yaml = [
    'dataDir: ./somewhere',
    'listen: 127.0.0.1:1280',
    'log: {level: warn}',
    'edge:',
    '  api:',
    '    address: ctrl.example.test:8443',
    '    sessionTimeout: 5m',
    '    rateLimit:',
    '      auth: {enabled: true, maxConcurrent: 2, maxQueued: 3, perSource: {burst: 5, perMinute: 6}, failuresPerSource: {burst: 5, perMinute: 6}, failuresPerAccount: {burst: 5, perMinute: 6}}',
    '      certificates: {enabled: true, perApiSession: {burst: 4, perMinute: 1}, perIdentity: {burst: 8, perMinute: 2}}',
    '  enrollment: {edgeIdentity: {duration: 10m}, edgeRouter: {duration: 20m}}',
    'web: {cors: {allowedOrigins: [https://console.example.net]}}',
    'limits: {maxConnections: 10, maxConnectionsPerAddress: 5, headersTimeout: 5s, requestTimeout: 10s}',
  ].join('\n');
  const c = load(yaml);
  assert.equal(c.advertisedHost, 'ctrl.example.test');
  assert.equal(c.advertisedPort, 8443);
  assert.equal(c.authRateLimit.maxQueued, 3);
  assert.deepEqual(c.certRateLimit.perIdentity, { burst: 8, perMinute: 2 });
  assert.equal(c.routerEnrollmentDurationMs, 20 * 60_000);
  assert.equal(c.limits.requestTimeoutMs, 10_000);
});

test('the known keys cover every rate-limit member the defaults define', () => {
  const limiters = { auth: AUTH_RATE_LIMIT_DEFAULTS, certificates: CERT_RATE_LIMIT_DEFAULTS };
  for (const [section, defaults] of Object.entries(limiters)) {
    for (const [k, v] of Object.entries(defaults)) {
      const paths = typeof v === 'object' ? Object.keys(v).map((m) => `${k}.${m}`) : [k];
      for (const p of paths) {
        const key = `edge.api.rateLimit.${section}.${p}`;
        assert.ok((CONFIG_KEYS as readonly string[]).includes(key), key);
      }
    }
  }
  assert.doesNotThrow(() => checkKeys({ edge: { api: { rateLimit: { auth: { perSource: { burst: 1 } } } } } }, 'x'));
});

test('a wildcard listen address needs an advertised one; flag beats env beats file', () => {
  assert.ok(isUnspecifiedHost('0.0.0.0') && isUnspecifiedHost('::') && isUnspecifiedHost('0:0::0'));
  assert.ok(!isUnspecifiedHost('::1') && !isUnspecifiedHost('127.0.0.1'));
  assert.throws(
    () => loadConfig({ flags: { listen: '0.0.0.0:1280' }, env: {} }),
    /--advertise HOST\[:PORT\], EDGECTL_ADVERTISE or edge.api.address/,
  );
  assert.throws(() => loadConfig({ flags: { listen: '[::]:1280' }, env: {} }), /listening on ::/);
  assert.throws(() => loadConfig({ flags: { listen: ':1280' }, env: {} }), /listening on 0.0.0.0/);
  const file = 'edge:\n  api:\n    address: from-file.example\n';
  assert.equal(load(file, { listen: '0.0.0.0:1' }).advertisedHost, 'from-file.example');
  assert.equal(
    load(file, { listen: '0.0.0.0:1' }, { EDGECTL_ADVERTISE: 'from-env.example' }).advertisedHost,
    'from-env.example',
  );
  const f = load(file, { listen: '0.0.0.0:1', advertise: '[fd00::5]:9443' }, { EDGECTL_ADVERTISE: 'from-env.example' });
  assert.deepEqual([f.advertisedHost, f.advertisedPort], ['fd00::5', 9443]);
  assert.equal(loadConfig({ flags: { listen: '0.0.0.0:1', advertise: 'fd00::6' }, env: {} }).advertisedHost, 'fd00::6');
  for (const bad of ['bad host', 'x.example:0', 'x.example:70000', '0.0.0.0', '[::]:5', 'a:b:c', '-x.example']) {
    assert.throws(
      () => loadConfig({ flags: { listen: '0.0.0.0:1', advertise: bad }, env: {} }),
      /advertised address/,
      bad,
    );
  }
  assert.equal(
    loadConfig({ flags: { listen: '10.1.2.3:1' }, env: {} }).advertisedHost,
    '10.1.2.3',
    'a specific listen host is advertised',
  );
});
