/**
 * The reference's web console (ZAC 4.5.2) replayed: every Management API request it sent while a headless browser
 * opened each page and saved each create and edit form against edgectl (test/fixtures/console/
 * management-requests.json), asserting the statuses it got and the fields the console reads from the answers.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { assertError, unique } from '../harness/assert.js';
import { newRootCa } from '../harness/third-party-pki.js';

interface Recorded {
  path: string;
  status: number;
}
interface Form {
  form: string;
  collection: string;
  create: Record<string, unknown>;
  edit?: { method: 'PUT' | 'PATCH'; body: Record<string, unknown> };
  delete: boolean;
}
const FIXTURE = JSON.parse(
  readFileSync(new URL('../fixtures/console/management-requests.json', import.meta.url), 'utf8'),
) as {
  prefix: string;
  pages: Record<string, Recorded[]>;
  forms: Form[];
  actions: { action: string; method: 'GET' | 'POST'; path: string; body?: Record<string, unknown>; status: number }[];
};

let server: TestServer;
let admin: ApiClient;

before(async () => {
  server = await startTestServer();
  admin = await server.admin();
});
after(() => server.close());

/** The fields the console reads from a page's answers, beyond the list envelope. */
function assertReads(path: string, body: any): void {
  const route = path.replace(/\?.*$/, '').replace(/^\/+/, '/');
  if (Array.isArray(body.data) && route !== '/network-jwts') {
    // Every list page reads the rows and pages with meta.pagination.totalCount.
    assert.equal(typeof body.meta?.pagination?.totalCount, 'number', `${path}: totalCount`);
  }
  if (route === '/summary') {
    for (const k of ['identities', 'services', 'routers', 'routers.edge'])
      assert.equal(typeof body.data[k], 'number', k);
  }
  if (route === '/network-jwts') {
    // The JWT signers page links data[0].token as the network JWT download.
    assert.equal(typeof body.data[0]?.token, 'string', 'network JWT token');
    assert.equal(body.data[0].token.split('.').length, 3);
  }
  if (route === '/current-identity') {
    assert.equal(body.data.isAdmin, true);
    assert.equal(typeof body.data.id, 'string');
  }
  if (route === '/version') {
    // The login page takes the management prefix from here.
    assert.equal(body.data.apiVersions['edge-management'].v1.path, FIXTURE.prefix);
  }
}

describe('pages: what each page asks for on opening', () => {
  for (const [page, requests] of Object.entries(FIXTURE.pages)) {
    test(`${page} gets the recorded answers`, async () => {
      for (const { path, status } of requests) {
        const res = await admin.get(path);
        assert.equal(res.status, status, `${path}: ${res.text}`);
        if (status === 200) assertReads(path, res.body);
        // The console's own faults are answered as the reference answers them.
        else if (path.includes('/undefined/')) assertError(res, 404, 'NOT_FOUND');
        else if (path.includes('filter=identity')) assertError(res, 400, 'INVALID_FILTER');
      }
    });
  }
});

/** The recorded body with this replay's unique values in place of the placeholders. */
function fill(body: Record<string, unknown>, values: Record<string, string>): Record<string, unknown> {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return /^\{\w+\}$/.test(v) && v.slice(1, -1) in values ? values[v.slice(1, -1)] : v;
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(body) as Record<string, unknown>;
}

describe('forms: create, read back, edit and delete as the console does', () => {
  for (const f of FIXTURE.forms) {
    test(f.form, async () => {
      const tag = unique('console');
      const values: Record<string, string> = {
        name: tag,
        issuer: `https://issuer.example/${tag}`,
        audience: `aud-${tag}`,
        caPem: (await newRootCa(`${tag} ca`)).certPem,
        signerPem: (await newRootCa(`${tag} signer`)).certPem,
      };
      const created = await admin.post(f.collection, fill(f.create, values));
      assert.equal(created.status, 201, created.text);
      const id = created.body.data.id as string;
      values.id = id;

      const detail = await admin.get(`${f.collection}/${id}`);
      assert.equal(detail.status, 200, detail.text);
      assert.equal(detail.body.data.name, tag);
      const data = detail.body.data;
      for (const k of ['typeId', 'semantic', 'isAdmin', 'encryptionRequired', 'cost', 'noTraversal'] as const) {
        // A posture check shows `semantic` only for PROCESS_MULTI.
        if (k in data) assert.deepEqual(data[k], f.create[k] ?? data[k], k);
      }
      // An identity's type reads back as typeId, a service policy's as type.
      if (typeof f.create.type === 'string') assert.equal(data.typeId ?? data.type, f.create.type);
      // Empty fields the console always sends read back as the reference's defaults.
      if (f.create.terminatorStrategy === '') assert.equal(detail.body.data.terminatorStrategy, 'smartrouting');
      if (f.create.claimsProperty === '') assert.equal(detail.body.data.claimsProperty, 'sub');

      if (f.edit) {
        const path = `${f.collection}/${id}`;
        const body = fill(f.edit.body, values);
        const edited = f.edit.method === 'PUT' ? await admin.put(path, body) : await admin.patch(path, body);
        assert.equal(edited.status, 200, edited.text);
        assert.equal((await admin.get(path)).body.data.name, tag);
      }
      assert.equal((await admin.delete(`${f.collection}/${id}`)).status, 200);
      assertError(await admin.get(`${f.collection}/${id}`), 404, 'NOT_FOUND');
    });
  }
});

describe('row menu actions and record sub-lists', () => {
  test('answer as recorded for an identity waiting for enrollment and a new edge router', async () => {
    const identity = await admin.post('/identities', {
      name: unique('console-id'),
      type: 'Device',
      isAdmin: false,
      enrollment: { ott: true },
    });
    assert.equal(identity.status, 201, identity.text);
    const identityId = identity.body.data.id as string;
    const router = await admin.post('/edge-routers', { name: unique('console-er'), isTunnelerEnabled: true });
    assert.equal(router.status, 201, router.text);
    const enrollment = (await admin.get(`/identities/${identityId}`)).body.data.enrollment.ott;
    const values: Record<string, string> = {
      identityId,
      routerId: router.body.data.id,
      enrollmentId: enrollment.id,
      expiresAt: new Date(Date.now() + 2 * 86_400_000).toISOString(),
    };
    for (const a of FIXTURE.actions) {
      const path = a.path.replace(/\{(\w+)\}/g, (_, k: string) => values[k]!);
      const res = a.method === 'GET' ? await admin.get(path) : await admin.post(path, fill(a.body ?? {}, values));
      assert.equal(res.status, a.status, `${a.action}: ${res.text}`);
      if (a.method === 'GET') assert.ok(Array.isArray(res.body.data) || res.body.data?.id, a.action);
    }
    // The reissued enrollment is a new token: the row's Download JWT and QR code read enrollment.ott.jwt.
    const after = (await admin.get(`/identities/${identityId}`)).body.data.enrollment.ott;
    assert.equal(typeof after.jwt, 'string');
    assert.notEqual(after.jwt, enrollment.jwt);
  });
});

describe('external JWT signer claimsProperty', () => {
  test('blank means the default sub on create, PUT and PATCH, as the reference stores it', async () => {
    const ca = await newRootCa(unique('claims signer'));
    const base = { issuer: `https://${unique('iss')}.example`, audience: 'a', enabled: true, certPem: ca.certPem };
    const created = await admin.post('/external-jwt-signers', { ...base, name: unique('claims'), claimsProperty: '' });
    assert.equal(created.status, 201, created.text);
    const path = `/external-jwt-signers/${created.body.data.id}`;
    assert.equal((await admin.get(path)).body.data.claimsProperty, 'sub');

    assert.equal((await admin.patch(path, { claimsProperty: '/email' })).status, 200);
    assert.equal((await admin.get(path)).body.data.claimsProperty, '/email');
    assert.equal((await admin.patch(path, { claimsProperty: '  ' })).status, 200);
    assert.equal((await admin.get(path)).body.data.claimsProperty, 'sub');
    assert.equal((await admin.put(path, { ...base, name: unique('claims'), claimsProperty: '' })).status, 200);
    assert.equal((await admin.get(path)).body.data.claimsProperty, 'sub');
    // A pointer that names nothing is still refused.
    assertError(await admin.patch(path, { claimsProperty: '/' }), 400, 'COULD_NOT_VALIDATE', 'claimsProperty');
  });
});
