/**
 * Input bounds (docs/decisions.md, "Input bounds"): oversized lists, deeply nested JSON and costly filters
 * are refused with the error envelope, change nothing, and never echo a large rejected value.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, createIdentity, createRecord, type ApiClient, type TestServer } from '../harness/server.js';
import type { HttpResponse } from '../harness/http.js';
import { assertError, assertFieldError, filterParam, unique } from '../harness/assert.js';

let server: TestServer;
let admin: ApiClient;

before(async () => {
  server = await startTestServer();
  admin = await server.admin();
});
after(() => server.close());

const list = (n: number, prefix = 'a') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
/** A JSON array nested `depth` deep, as text (JSON.stringify itself would overflow on the deep ones). */
const nested = (depth: number) => '['.repeat(depth) + '1' + ']'.repeat(depth);
const postRaw = (path: string, json: string): Promise<HttpResponse> =>
  admin.req('POST', path, { raw: json, contentType: 'application/json' });
const count = async (path: string): Promise<number> =>
  (await admin.get(`${path}?limit=1`)).body.meta.pagination.totalCount;

describe('lists sent by clients', () => {
  test('role attributes beyond 1000 entries are refused on the field and nothing is stored', async () => {
    const before = await count('/identities');
    const res = await admin.post('/identities', {
      name: unique('big'),
      type: 'User',
      isAdmin: false,
      roleAttributes: list(11_000),
    });
    assertFieldError(res, 'roleAttributes');
    assert.equal(res.body.error.cause.value, undefined, 'the rejected list is not echoed');
    assert.equal(await count('/identities'), before);
  });

  test('exactly 1000 role attributes are accepted and stored', async () => {
    const id = await createIdentity(admin, { roleAttributes: list(1000) });
    const res = await admin.get(`/identities/${id}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.data.roleAttributes.length, 1000);
  });

  test('policy role lists beyond 1000 entries are refused on the field', async () => {
    const res = await admin.post('/service-policies', {
      name: unique('p'),
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: list(1001, '#a'),
    });
    assertFieldError(res, 'identityRoles');
    const patch = await admin.post('/edge-router-policies', {
      name: unique('p'),
      semantic: 'AnyOf',
      edgeRouterRoles: list(20_000, '#r'),
    });
    assertFieldError(patch, 'edgeRouterRoles');
  });

  test('configTypes beyond 1000 entries at authenticate are refused and start no session', async () => {
    const before = await count('/api-sessions');
    const res = await server.client('client').login('admin', 'admin-Passw0rd!', { configTypes: list(11_000) });
    assertFieldError(res, 'configTypes');
    assert.equal(await count('/api-sessions'), before);
  });

  test('1000 configTypes at authenticate are accepted', async () => {
    const res = await server.client('client').login('admin', 'admin-Passw0rd!', { configTypes: list(1000) });
    assert.equal(res.status, 200, res.text);
  });

  test('roleFilter and configTypes query lists beyond 1000 entries are refused', async () => {
    // Unencoded and short, so the request line stays under the header size limit.
    const roles = Array.from({ length: 1001 }, () => 'roleFilter=@').join('&');
    assertFieldError(await admin.get(`/identities?${roles}`), 'roleFilter');
    assertFieldError(await admin.get(`/services?configTypes=${list(1001, 'c').join(',')}`), 'configTypes');
  });
});

describe('deeply nested JSON', () => {
  test('appData nested 10,000 deep is a field error, not a 500, and stores nothing', async () => {
    const before = await count('/identities');
    const res = await postRaw(
      '/identities',
      `{"name":"${unique('deep')}","type":"User","isAdmin":false,"appData":{"a":${nested(10_000)}}}`,
    );
    assertFieldError(res, 'appData');
    assert.equal(res.body.error.cause.value, undefined);
    assert.equal(await count('/identities'), before);
  });

  test('deep tags answer the error envelope', async () => {
    const res = await postRaw(
      '/identities',
      `{"name":"${unique('deep')}","type":"User","isAdmin":false,"tags":{"a":${nested(10_000)}}}`,
    );
    assertFieldError(res, 'tags');
  });

  test('a deep config-type schema and deep config data are field errors', async () => {
    assertFieldError(
      await postRaw('/config-types', `{"name":"${unique('ct')}","schema":{"a":${nested(10_000)}}}`),
      'schema',
    );
    const typeId = await createRecord(admin, '/config-types', { name: unique('ct') });
    assertFieldError(
      await postRaw('/configs', `{"name":"${unique('c')}","configTypeId":"${typeId}","data":{"a":${nested(5_000)}}}`),
      'data',
    );
  });

  test('a top-level array nested too deep is refused on the root', async () => {
    assertFieldError(await postRaw('/identities', nested(100)), '(root)');
  });

  test('nesting up to 64 levels (the body counting as one) is accepted', async () => {
    const res = await postRaw(
      '/identities',
      `{"name":"${unique('ok')}","type":"User","isAdmin":false,"appData":{"a":${nested(62)}}}`,
    );
    assert.equal(res.status, 201, res.text);
    assertFieldError(
      await postRaw(
        '/identities',
        `{"name":"${unique('no')}","type":"User","isAdmin":false,"appData":{"a":${nested(63)}}}`,
      ),
      'appData',
    );
  });
});

describe('rejected values', () => {
  test('a large rejected value is not echoed; a small one still is', async () => {
    const large = await admin.post('/identities', {
      name: unique('v'),
      type: 'User',
      isAdmin: false,
      roleAttributes: ['#' + 'x'.repeat(5000)],
    });
    assertFieldError(large, 'roleAttributes');
    assert.equal(large.body.error.cause.value, undefined);
    assert.ok(large.text.length < 2000, 'the answer stays small');
    const small = await admin.post('/identities', {
      name: unique('v'),
      type: 'User',
      isAdmin: false,
      roleAttributes: ['#x'],
    });
    assertFieldError(small, 'roleAttributes');
    assert.equal(small.body.error.cause.value, '#x');
  });
});

describe('filter cost', () => {
  const terms = (n: number) => Array.from({ length: n }, (_, i) => `anyOf(roleAttributes) = "v${i}"`).join(' or ');

  test('100 terms are accepted, 101 are refused as INVALID_FILTER', async () => {
    assert.equal((await admin.get(`/identities?${filterParam(terms(100))}`)).status, 200);
    const res = await admin.get(`/identities?${filterParam(terms(101))}`);
    assertError(res, 400, 'INVALID_FILTER');
    assert.match(res.body.error.cause.message, /too many terms/);
  });

  test('nesting beyond 32 levels is refused as INVALID_FILTER', async () => {
    assert.equal((await admin.get(`/identities?${filterParam('not '.repeat(31) + 'true')}`)).status, 200);
    const res = await admin.get(`/identities?${filterParam('not '.repeat(40) + 'true')}`);
    assertError(res, 400, 'INVALID_FILTER');
    assert.match(res.body.error.cause.message, /nested too deeply/);
    assertError(
      await admin.get(`/identities?${filterParam('(not '.repeat(40) + 'true' + ')'.repeat(40))}`),
      400,
      'INVALID_FILTER',
    );
    const alternating = await admin.get(
      `/identities?${filterParam('(name = "x" and (isAdmin = true or '.repeat(20) + 'true' + '))'.repeat(20))}`,
    );
    assertError(alternating, 400, 'INVALID_FILTER');
    assert.match(alternating.body.error.cause.message, /nested too deeply/);
    // Parentheses alone add no level: they leave no node behind.
    assert.equal(
      (await admin.get(`/identities?${filterParam('('.repeat(2000) + 'true' + ')'.repeat(2000))}`)).status,
      200,
    );
  });

  test('more than 1000 values in in-lists are refused as INVALID_FILTER', async () => {
    const values = (n: number) =>
      `id in [${Array.from({ length: n }, (_, i) => i).join(',')}]`.replace('id in', 'count(roleAttributes) in');
    assert.equal((await admin.get(`/identities?${filterParam(values(1000))}`)).status, 200);
    const res = await admin.get(`/identities?${filterParam(values(1001))}`);
    assertError(res, 400, 'INVALID_FILTER');
    assert.match(res.body.error.cause.message, /too many values/);
  });

  test('role-attribute listings apply the same bounds', async () => {
    assertError(
      await admin.get(
        `/identity-role-attributes?${filterParam(Array.from({ length: 101 }, (_, i) => `id = "${i}"`).join(' or '))}`,
      ),
      400,
      'INVALID_FILTER',
    );
  });
});

describe('well-formed strings', () => {
  // JSON.stringify writes a lone surrogate as its `\ud800` escape, as a client producing one would.
  const identity = (extra: Record<string, unknown>) => ({ name: unique('wf'), type: 'User', isAdmin: false, ...extra });

  test('names with a lone surrogate are refused on the field and nothing is stored', async () => {
    const before = await count('/identities');
    for (const name of ['x\ud800', 'x\udbff', '\udc00x']) {
      const res = await admin.post('/identities', identity({ name }));
      assertFieldError(res, 'name');
      assert.equal(res.body.error.cause.value, undefined, 'the bad string is not echoed');
    }
    assert.equal(await count('/identities'), before);
    assertFieldError(await admin.post('/services', { name: 'svc\ud800', encryptionRequired: true }), 'name');
  });

  test('tag values and keys, role attributes and nested config data are checked at any depth', async () => {
    assertFieldError(await admin.post('/identities', identity({ tags: { env: 'prod\udfff' } })), 'tags.env');
    assertFieldError(await admin.post('/identities', identity({ tags: { ['env\ud800']: 'prod' } })), 'tags');
    assertFieldError(
      await admin.post('/identities', identity({ roleAttributes: ['ok', 'x\ud800'] })),
      'roleAttributes.1',
    );
    const typeId = await createRecord(admin, '/config-types', { name: unique('ct') });
    const config = await admin.post('/configs', {
      name: unique('c'),
      configTypeId: typeId,
      data: { a: { b: ['fine', { c: 'x\ud800' }] } },
    });
    assertFieldError(config, 'data.a.b.1.c');
  });

  test('authenticate refuses a lone surrogate before looking at the credentials', async () => {
    const before = await count('/api-sessions');
    const res = await server.client('client').login('admin\ud800', 'admin-Passw0rd!');
    assertFieldError(res, 'username');
    assert.equal(await count('/api-sessions'), before);
  });

  test('emoji, sent raw or as an escaped surrogate pair, are accepted and read back intact', async () => {
    const name = unique('emoji-😀-\u{1F680}');
    const id = await createIdentity(admin, { name, tags: { '🔑': '🌍' } });
    const read = await admin.get(`/identities/${id}`);
    assert.equal(read.body.data.name, name);
    assert.deepEqual(read.body.data.tags, { '🔑': '🌍' });
    const escaped = unique('esc');
    const res = await postRaw('/identities', `{"name":"${escaped}-\\ud83d\\ude00","type":"User","isAdmin":false}`);
    assert.equal(res.status, 201, res.text);
    assert.equal((await admin.get(`/identities/${res.body.data.id}`)).body.data.name, `${escaped}-😀`);
  });

  test('a body that is not UTF-8 is refused as unparsable and stores nothing', async () => {
    const before = await count('/identities');
    const bytes = Buffer.concat([
      Buffer.from(`{"name":"${unique('bin')}`),
      Buffer.from([0xff, 0xed, 0xa0, 0x80]),
      Buffer.from('","type":"User","isAdmin":false}'),
    ]);
    const res = await admin.req('POST', '/identities', { raw: bytes, contentType: 'application/json' });
    assertError(res, 400, 'COULD_NOT_PARSE_BODY');
    assert.equal(await count('/identities'), before);
  });

  test('query parameters whose escapes are not UTF-8 (a lone surrogate, a stray byte) are refused on the parameter', async () => {
    // `%ED%A0%80` is U+D800 as UTF-8 would write it: what a client keeping lone surrogates sends.
    assertFieldError(await admin.get('/identities?filter=name%20%3D%20%22x%ED%A0%80%22'), 'filter');
    assertFieldError(await admin.get('/identities?roleFilter=%23x%FF'), 'roleFilter');
    assertFieldError(await admin.get('/services?limit=10&configTypes=%ED%B0%80'), 'configTypes');
    // Escapes of real characters, an escaped `%` and the emoji's own bytes are fine.
    const emoji = await admin.get(`/identities?${filterParam('name = "😀%"')}`);
    assert.equal(emoji.status, 200, emoji.text);
  });

  test('a path id whose escapes are not UTF-8 is not found, as any undecodable path', async () => {
    assertError(await admin.get('/identities/%ED%A0%80'), 404, 'NOT_FOUND');
  });
});
