/**
 * The suite-wide response check (test/harness/schemas.ts, test/harness/http.ts): which schema a response is held
 * to, and that a violating response fails the request that received it, so the check can fail.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { operationOf, responseViolations, schemaGuard } from '../../harness/schemas.js';
import { injectTransport, SchemaViolation } from '../../harness/http.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const meta = { apiVersion: '0.0.1', apiEnrollmentVersion: '0.0.1' };
const error = (code: string, extra: Record<string, unknown> = {}) => ({
  error: { code, message: 'm', requestId: 'r', args: { urlVars: {} }, ...extra },
  meta,
});

test('a request path falls under its API and operation, literal paths before templates, slashes folded', () => {
  assert.deepEqual(operationOf('/edge/client/v1/current-identity/mfa'), {
    api: 'client',
    path: '/current-identity/mfa',
  });
  assert.deepEqual(operationOf('/edge/management/v1//identities/abc/'), {
    api: 'management',
    path: '/identities/{id}',
  });
  assert.deepEqual(operationOf('/fabric/v1//routers'), { api: 'fabric', path: '/routers' });
  assert.deepEqual(operationOf('/edge/management/v1/no-such-thing'), { api: 'management', path: undefined });
  assert.deepEqual(operationOf('/version'), { api: 'client', path: '/version' });
  assert.equal(operationOf('/elsewhere'), undefined);
});

test('posture data with mfa.passedAt null violates the schema; a date-time conforms', () => {
  const data = (passedAt: unknown) => ({
    data: {
      mac: { postureCheckId: '', timedOut: false, lastUpdatedAt: '0001-01-01T00:00:00.000Z', addresses: [] },
      domain: { postureCheckId: '', timedOut: false, lastUpdatedAt: '0001-01-01T00:00:00.000Z', domain: '' },
      os: {
        postureCheckId: '',
        timedOut: false,
        lastUpdatedAt: '0001-01-01T00:00:00.000Z',
        type: '',
        version: '',
        build: '',
      },
      processes: [],
      apiSessionPostureData: {
        s1: {
          mfa: { apiSessionId: 's1', passedMfa: false, passedOnWake: false, passedOnUnlock: false, passedAt },
          endpointState: { wokenAt: '0001-01-01T00:00:00.000Z', unlockedAt: '0001-01-01T00:00:00.000Z' },
        },
      },
    },
    meta,
  });
  const url = 'https://127.0.0.1/edge/management/v1/identities/x/posture-data';
  const bad = responseViolations('GET', url, 200, JSON_TYPE, data(null));
  assert.ok(
    bad.some((v) => v.includes('passedAt')),
    bad.join('\n'),
  );
  assert.deepEqual(responseViolations('GET', url, 200, JSON_TYPE, data('0001-01-01T00:00:00.000Z')), []);
});

test('errors are held to the error envelope, listed or not, on known and unknown paths', () => {
  const mfa = 'https://127.0.0.1/edge/client/v1/current-identity/mfa';
  assert.deepEqual(responseViolations('GET', mfa, 404, JSON_TYPE, error('NOT_FOUND')), []);
  // `cause: null` where the schema says object.
  assert.notDeepEqual(responseViolations('GET', mfa, 404, JSON_TYPE, error('NOT_FOUND', { cause: null })), []);
  // 418 is listed nowhere: still an error envelope.
  assert.deepEqual(responseViolations('GET', mfa, 418, JSON_TYPE, error('X')), []);
  assert.notDeepEqual(responseViolations('GET', mfa, 418, JSON_TYPE, { meta }), []);
  const unknown = 'https://127.0.0.1/edge/management/v1/no-such-thing';
  assert.deepEqual(responseViolations('GET', unknown, 404, JSON_TYPE, error('NOT_FOUND')), []);
  assert.notDeepEqual(responseViolations('GET', unknown, 404, JSON_TYPE, { data: {} }), []);
});

test('a success status the operation does not list, or a path of edgectl’s own, is held to the envelope only', () => {
  const ids = 'https://127.0.0.1/edge/management/v1/identities';
  assert.deepEqual(responseViolations('GET', ids, 202, JSON_TYPE, { data: { anything: 1 }, meta }), []);
  assert.notDeepEqual(responseViolations('GET', ids, 202, JSON_TYPE, { nothing: true }), []);
  const own = 'https://127.0.0.1/edge/management/v1/no-such-thing';
  assert.deepEqual(responseViolations('GET', own, 200, JSON_TYPE, { data: [], meta }), []);
  assert.notDeepEqual(responseViolations('GET', own, 200, JSON_TYPE, { data: [] }), []);
});

test('not checked: non-JSON bodies, paths outside the APIs', () => {
  const ids = 'https://127.0.0.1/edge/management/v1/identities';
  assert.deepEqual(responseViolations('GET', ids, 200, 'application/x-pem-file', '-----BEGIN'), []);
  assert.deepEqual(responseViolations('GET', 'https://127.0.0.1/health', 200, JSON_TYPE, {}), []);
  // JSON announced but not sent.
  assert.deepEqual(responseViolations('GET', ids, 200, JSON_TYPE, 'not json'), ['the body is not JSON']);
});

test('fabric routers are held to the fabric routerDetail', () => {
  const router = {
    id: 'r1',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    tags: {},
    _links: { self: { href: './routers/r1' } },
    name: 'r1',
    fingerprint: '',
    cost: 0,
    noTraversal: false,
    disabled: false,
  };
  const url = 'https://127.0.0.1/fabric/v1/routers';
  const missing = responseViolations('GET', url, 200, JSON_TYPE, { data: [router], meta });
  assert.ok(
    missing.some((v) => v.includes('connected')),
    missing.join('\n'),
  );
  assert.deepEqual(
    responseViolations('GET', url, 200, JSON_TYPE, { data: [{ ...router, connected: false }], meta }),
    [],
  );
});

test('a violating response rejects the request that received it', async () => {
  const app = Fastify();
  app.get('/edge/management/v1/identities/:id', async () => ({ data: { id: 'x' }, meta }));
  app.get('/edge/management/v1/identities', async () => ({
    data: [],
    meta: { ...meta, pagination: { limit: 10, offset: 0, totalCount: 0 } },
  }));
  await app.ready();
  try {
    const send = injectTransport(app, '');
    await assert.rejects(send('GET', 'https://127.0.0.1/edge/management/v1/identities/x'), SchemaViolation);
    const ok = await send('GET', 'https://127.0.0.1/edge/management/v1/identities');
    assert.equal(ok.status, 200);
  } finally {
    await app.close();
  }
});

test("the test servers' guard turns a violating answer into a 500 naming it, and leaves a conforming one", async () => {
  const app = Fastify();
  app.addHook('onSend', schemaGuard);
  app.get('/edge/client/v1/version', async () => ({ data: { version: 7 }, meta }));
  app.get('/version', async () => ({ data: { version: 'v1' }, meta }));
  app.get('/elsewhere', async () => ({ anything: true }));
  const bad = await app.inject({ method: 'GET', url: '/edge/client/v1/version' });
  assert.equal(bad.statusCode, 500);
  assert.equal(bad.json().error.code, 'RESPONSE_SCHEMA_VIOLATION');
  assert.match(bad.json().error.message, /\/data\/version must be string/);
  assert.deepEqual(responseViolations('GET', '/version', 500, JSON_TYPE, bad.json()), [], 'the 500 itself conforms');
  assert.equal((await app.inject({ method: 'GET', url: '/version' })).statusCode, 200);
  assert.equal((await app.inject({ method: 'GET', url: '/elsewhere' })).statusCode, 200, 'outside the APIs');
  await app.close();
});
