/**
 * `GET /metrics` (Prometheus text, off unless configured) and `GET /health` (anonymous, 200 while the store
 * answers, 503 otherwise).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN, createIdentity, startTestServer, type TestServer } from '../harness/server.js';
import { testStoreKind } from '../harness/pg.js';

const get = (s: TestServer, path: string) => s.request('GET', path, { headers: { accept: '*/*' } });

/** One sample's value, e.g. `edgectl_http_requests_total{method="GET",…}`; undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = (m[3] ?? '').split(',');
    if (want.every((w) => have.includes(w))) return Number(m[4]);
  }
  return undefined;
}

test('metrics are off by default: /metrics is 404 on the main listener', async () => {
  const s = await startTestServer();
  try {
    const res = await get(s, '/metrics');
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'NOT_FOUND');
    assert.equal(s.daemon.metricsUrl, undefined);
  } finally {
    await s.close();
  }
});

test('metrics.enabled serves Prometheus text on the main listener, by route pattern, without ids or tokens', async () => {
  const s = await startTestServer({ yaml: 'metrics:\n  enabled: true\n' });
  try {
    const admin = await s.admin();
    const id = await createIdentity(admin);
    assert.equal((await admin.get(`/identities/${id}`)).status, 200);
    assert.equal((await admin.get(`/identities/${id}`)).status, 200);
    assert.equal((await admin.get('/identities/no-such-id')).status, 404);
    assert.equal((await s.client('client').login(ADMIN.username, 'wrong-Passw0rd!')).status, 401);
    assert.equal((await s.client('client').post('/authenticate?method=bogus-method', {})).status, 400);
    assert.equal((await get(s, `/no/such/${id}`)).status, 404);

    const res = await get(s, '/metrics');
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    const text = res.text;
    for (const name of [
      'edgectl_http_requests_total',
      'edgectl_http_request_duration_seconds_bucket',
      'edgectl_authentications_total',
      'edgectl_api_sessions',
      'edgectl_sessions',
      'edgectl_access_cache_hits_total',
      'edgectl_access_cache_misses_total',
      'edgectl_store_size_bytes',
      'edgectl_store_integrity_ok',
      'nodejs_eventloop_lag_seconds',
    ]) {
      assert.match(text, new RegExp(`^${name}[{ ]`, 'm'), name);
    }
    const route = '/edge/management/v1/identities/:id';
    assert.equal(sample(text, 'edgectl_http_requests_total', { method: 'GET', route, status: '200' }), 2);
    assert.equal(sample(text, 'edgectl_http_requests_total', { method: 'GET', route, status: '404' }), 1);
    assert.equal(sample(text, 'edgectl_http_request_duration_seconds_count', { method: 'GET', route }), 3);
    assert.equal(
      sample(text, 'edgectl_http_requests_total', { method: 'GET', route: '(unmatched)', status: '404' }),
      1,
    );
    // Other replicas' writes are read before each request on PostgreSQL; SQLite has no such reads.
    const feedReads = sample(text, 'edgectl_store_change_reads_total', {});
    if (testStoreKind() === 'postgres') {
      assert.ok(feedReads! > 0, `change counters were read (${feedReads})`);
      assert.equal(sample(text, 'edgectl_store_change_read_failures_total', {}), 0);
    } else assert.equal(feedReads, 0);
    assert.equal(sample(text, 'edgectl_authentications_total', { method: 'password', result: 'success' }), 1);
    assert.equal(sample(text, 'edgectl_authentications_total', { method: 'password', result: 'failure' }), 1);
    assert.equal(sample(text, 'edgectl_authentications_total', { method: 'other', result: 'failure' }), 1);
    assert.equal(sample(text, 'edgectl_api_sessions', {}), 1);
    assert.equal(sample(text, 'edgectl_store_integrity_ok', {}), 1);
    assert.ok((sample(text, 'edgectl_store_size_bytes', { file: 'db' }) ?? 0) > 0);
    // Labels name patterns and fixed words only: no id, no token, no raw method name from the client.
    assert.ok(!text.includes(id), 'an id appears in the metrics');
    assert.ok(!text.includes('no-such-id'));
    assert.ok(!text.includes(admin.token!), 'a token appears in the metrics');
    assert.ok(!text.includes('bogus-method'));
  } finally {
    await s.close();
  }
});

test('refused authentications are counted as rate_limited', async () => {
  const yaml =
    'metrics:\n  enabled: true\nedge:\n  api:\n    rateLimit:\n      auth:\n        failuresPerAccount:\n          burst: 1\n          perMinute: 1\n';
  const s = await startTestServer({ yaml });
  try {
    const c = s.client('management');
    assert.equal((await c.login(ADMIN.username, 'wrong-Passw0rd!')).status, 401);
    assert.equal((await c.login(ADMIN.username, 'wrong-Passw0rd!')).status, 429);
    const text = (await get(s, '/metrics')).text;
    assert.equal(sample(text, 'edgectl_authentications_total', { method: 'password', result: 'failure' }), 1);
    assert.equal(sample(text, 'edgectl_authentications_total', { method: 'password', result: 'rate_limited' }), 1);
  } finally {
    await s.close();
  }
});

test('access-cache lookups are counted', async () => {
  const s = await startTestServer({ yaml: 'metrics:\n  enabled: true\n' });
  try {
    const client = (await s.admin()).other('client');
    const hitsOf = async () =>
      sample((await get(s, '/metrics')).text, 'edgectl_access_cache_hits_total', { cache: 'identities' }) ?? 0;
    // Listing services reads the caller's access through the engine's identity cache; repeats are hits.
    for (let i = 0; i < 3; i++) assert.equal((await client.get('/services')).status, 200);
    const hits = await hitsOf();
    assert.ok(hits >= 2, `identities hits ${hits}`);
    for (let i = 0; i < 3; i++) await client.get('/services');
    const later = await hitsOf();
    assert.ok(later >= hits + 3, `identities hits ${hits} then ${later}`);
  } finally {
    await s.close();
  }
});

test('metrics.listen serves /metrics and /health on a separate plain-HTTP listener only', async () => {
  const s = await startTestServer({ yaml: 'metrics:\n  listen: 127.0.0.1:0\n' });
  try {
    const base = s.daemon.metricsUrl;
    assert.ok(base?.startsWith('http://127.0.0.1:'), String(base));
    await (await s.admin()).get('/identities');
    const metrics = await fetch(`${base}/metrics`);
    assert.equal(metrics.status, 200);
    const text = await metrics.text();
    assert.equal(
      sample(text, 'edgectl_http_requests_total', {
        method: 'GET',
        route: '/edge/management/v1/identities',
        status: '200',
      }),
      1,
    );
    const health = await fetch(`${base}/health`);
    assert.equal(health.status, 200);
    assert.equal(((await health.json()) as { data: { status: string } }).data.status, 'ok');
    const other = await fetch(`${base}/edge/management/v1/identities`);
    assert.equal(other.status, 404);
    assert.equal(((await other.json()) as { error: { code: string } }).error.code, 'NOT_FOUND');
    assert.equal((await fetch(`${base}/metrics`, { method: 'POST' })).status, 405);
    // Not on the public listener unless metrics.enabled says so.
    assert.equal((await get(s, '/metrics')).status, 404);
  } finally {
    await s.close();
  }
  // Closed with the daemon.
  await assert.rejects(fetch(`${s.daemon.metricsUrl}/health`));
});

test('a metrics.listen address that cannot be bound stops the start with the setting named', async () => {
  const first = await startTestServer({ yaml: 'metrics:\n  listen: 127.0.0.1:0\n' });
  try {
    const taken = new URL(first.daemon.metricsUrl!).port;
    await assert.rejects(
      startTestServer({ yaml: `metrics:\n  listen: 127.0.0.1:${taken}\n` }),
      /metrics\.listen: cannot listen on 127\.0\.0\.1:/,
    );
  } finally {
    await first.close();
  }
});

test('/health answers anonymously 200 while the store answers, 503 with the envelope once it is closed', async () => {
  const s = await startTestServer();
  try {
    const ok = await get(s, '/health');
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body.data, { status: 'ok', store: testStoreKind() }, 'it names the store');
    await s.daemon.store.close();
    const down = await get(s, '/health');
    assert.equal(down.status, 503);
    assert.equal(down.body.error.code, 'TIMEOUT');
    assert.equal(typeof down.body.error.requestId, 'string');
    assert.equal((await get(s, '/health')).status, 503);
  } finally {
    await s.close();
  }
});

test('/metrics still answers when the store does not, the session counts NaN', async () => {
  const s = await startTestServer({ yaml: 'metrics:\n  enabled: true\n' });
  try {
    assert.equal(sample((await get(s, '/metrics')).text, 'edgectl_api_sessions', {}), 0);
    await s.daemon.store.close();
    const res = await get(s, '/metrics');
    assert.equal(res.status, 200);
    assert.ok(Number.isNaN(sample(res.text, 'edgectl_api_sessions', {})), 'edgectl_api_sessions is NaN');
    assert.ok(Number.isNaN(sample(res.text, 'edgectl_sessions', {})), 'edgectl_sessions is NaN');
    assert.match(res.text, /^edgectl_http_requests_total\{/m);
  } finally {
    await s.close();
  }
});

test('/health never counts as session activity and ignores a session header', async () => {
  const s = await startTestServer({ clock: 'frozen', yaml: 'edge:\n  api:\n    sessionTimeout: 10s\n' });
  try {
    const admin = await s.admin();
    s.clock.advance(6000);
    const res = await s.request('GET', `/health`, { headers: { 'zt-session': admin.token! } });
    assert.equal(res.status, 200);
    s.clock.advance(6000);
    await s.sweep();
    // 12 s idle: had /health refreshed the session at 6 s, it would still be alive.
    assert.equal((await admin.get('/current-api-session')).status, 401);
  } finally {
    await s.close();
  }
});
