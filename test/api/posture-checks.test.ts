/**
 * Posture check types and posture checks on the Management API (docs/reference-notes.md §9.1): the type
 * records, CRUD of every type with its own fields, bodies discriminated by `typeId` (another type's fields are
 * ignored and not stored, as the console sends every type's fields; missing required ones are refused, also
 * after merging a patch), the growing `version`, role filters, and service policies selecting checks by
 * attribute.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type ApiClient, type TestServer, createRecord } from '../harness/server.js';
import { checkResponse } from '../harness/schemas.js';
import { assertFieldError, unique } from '../harness/assert.js';

let server: TestServer;
let admin: ApiClient;

before(async () => {
  server = await startTestServer();
  admin = await server.admin();
});
after(() => server.close());

const HASH = 'ab'.repeat(64);
const SIGNER = 'cd'.repeat(20);

/** A valid body of each type. */
const BODIES: Record<string, Record<string, unknown>> = {
  OS: {
    operatingSystems: [
      { type: 'Windows', versions: ['>=10.0.19041'] },
      { type: 'Linux', versions: [] },
    ],
  },
  PROCESS: { process: { osType: 'Windows', path: 'C:\\agent.exe', hashes: [HASH], signerFingerprint: SIGNER } },
  PROCESS_MULTI: {
    semantic: 'AnyOf',
    processes: [{ osType: 'Linux', path: '/usr/bin/agent', hashes: [HASH], signerFingerprints: [SIGNER] }],
  },
  DOMAIN: { domains: ['corp.example'] },
  MAC: { macAddresses: ['00:11:22:33:44:55'] },
  MFA: { timeoutSeconds: 300, promptOnWake: true, promptOnUnlock: false, ignoreLegacyEndpoints: false },
};

const create = (typeId: string, extra: Record<string, unknown> = {}) =>
  createRecord(admin, '/posture-checks', { name: unique('pc'), typeId, ...BODIES[typeId], ...extra });

describe('posture check types', () => {
  test('lists OS, PROCESS, PROCESS_MULTI, DOMAIN and MAC with names and operating systems', async () => {
    const res = await admin.get('/posture-check-types');
    assert.equal(res.status, 200);
    assert.deepEqual(checkResponse('management', '/posture-check-types', 'GET', 200, res.body), []);
    const byId = new Map((res.body.data as { id: string; name: string }[]).map((t) => [t.id, t]));
    assert.deepEqual([...byId.keys()].sort(), ['DOMAIN', 'MAC', 'OS', 'PROCESS', 'PROCESS_MULTI']);
    assert.equal(byId.get('OS')!.name, 'Operating System Check');
    assert.equal(byId.get('DOMAIN')!.name, 'Windows Domain Check');
    const one = await admin.get('/posture-check-types/MAC');
    assert.equal(one.status, 200);
    assert.deepEqual(checkResponse('management', '/posture-check-types/{id}', 'GET', 200, one.body), []);
    assert.deepEqual(
      (one.body.data.operatingSystems as { type: string }[]).map((o) => o.type),
      ['Windows', 'Linux', 'macOS', 'Android'],
    );
    assert.equal((await admin.get('/posture-check-types/MFA')).status, 404);
    assert.equal((await admin.get('/posture-check-types/NOPE')).status, 404);
  });
});

describe('posture checks', () => {
  test('every type is created and read back with its own fields and version 1', async () => {
    for (const typeId of Object.keys(BODIES)) {
      const id = await create(typeId, { roleAttributes: ['corp'] });
      const res = await admin.get(`/posture-checks/${id}`);
      assert.equal(res.status, 200, typeId);
      assert.deepEqual(checkResponse('management', '/posture-checks/{id}', 'GET', 200, res.body), [], typeId);
      const d = res.body.data;
      assert.equal(d.typeId, typeId);
      assert.equal(d.version, 1);
      assert.deepEqual(d.roleAttributes, ['corp']);
      for (const [k, v] of Object.entries(BODIES[typeId]!)) assert.deepEqual(d[k], v, `${typeId}.${k}`);
      // No field of another type is rendered.
      for (const other of Object.keys(BODIES).filter((t) => t !== typeId)) {
        for (const k of Object.keys(BODIES[other]!)) assert.ok(!(k in d), `${typeId} renders ${k}`);
      }
    }
    const list = await admin.get('/posture-checks');
    assert.equal(list.status, 200);
    assert.deepEqual(checkResponse('management', '/posture-checks', 'GET', 200, list.body), []);
  });

  test('MFA fields default when left out', async () => {
    const id = await createRecord(admin, '/posture-checks', { name: unique('mfa'), typeId: 'MFA' });
    const d = (await admin.get(`/posture-checks/${id}`)).body.data;
    assert.equal(d.timeoutSeconds, -1);
    assert.equal(d.promptOnWake, false);
    assert.equal(d.promptOnUnlock, false);
    assert.equal(d.ignoreLegacyEndpoints, false);
  });

  test('a missing or invalid field of the type is a 400 field error', async () => {
    const post = (body: Record<string, unknown>) => admin.post('/posture-checks', { name: unique('bad'), ...body });
    assertFieldError(await post({ typeId: 'OS' }), 'operatingSystems');
    assertFieldError(await post({ typeId: 'PROCESS' }), 'process');
    assertFieldError(await post({ typeId: 'PROCESS_MULTI', processes: BODIES.PROCESS_MULTI!.processes }), 'semantic');
    assertFieldError(await post({ typeId: 'DOMAIN', domains: [] }), 'domains');
    assertFieldError(await post({ typeId: 'MAC' }), 'macAddresses');
    assertFieldError(
      await post({ typeId: 'OS', operatingSystems: [{ type: 'Windows', versions: ['not a range!'] }] }),
      'operatingSystems.0.versions.0',
    );
    assertFieldError(await post({ typeId: 'OS', operatingSystems: [{ type: 'BeOS' }] }), 'operatingSystems.0.type');
    assertFieldError(
      await post({ typeId: 'PROCESS', process: { osType: 'Linux', path: '/x', hashes: ['abc'] } }),
      'process.hashes.0',
    );
    assertFieldError(await post({ typeId: 'MFA', timeoutSeconds: 'soon' }), 'timeoutSeconds');
    assert.equal((await post({ typeId: 'NOPE' })).status, 400);
    assert.equal(
      (await admin.get(`/posture-checks?filter=${encodeURIComponent('name contains "bad"')}`)).body.data.length,
      0,
    );
  });

  test("the console's form bodies (every type's fields, the unused ones empty) create checks of each type", async () => {
    /** What the console's posture check form sends: every type's fields, empty but the chosen type's. */
    const form = (typeId: string, own: Record<string, unknown>) => ({
      name: unique('console'),
      typeId,
      semantic: 'AllOf',
      roleAttributes: [],
      domains: [],
      macAddresses: [],
      operatingSystems: [],
      processes: [{ hashes: [], osType: '', path: '', signerFingerprints: [] }],
      process: { hashes: [], osType: '', path: '', signerFingerprint: '' },
      promptOnWake: false,
      promptOnUnlock: false,
      timeoutSeconds: 0,
      tags: {},
      ...own,
    });
    const bodies: Record<string, Record<string, unknown>> = {
      OS: form('OS', { operatingSystems: [{ type: 'Windows', versions: ['>=10.0.19041'] }] }),
      PROCESS: form('PROCESS', {
        process: { hashes: [], osType: 'Windows', path: 'C:\\Program Files\\app\\app.exe', signerFingerprint: '' },
      }),
      PROCESS_MULTI: form('PROCESS_MULTI', {
        semantic: 'AnyOf',
        processes: [{ hashes: [], osType: 'Linux', path: '/usr/bin/agent', signerFingerprints: [] }],
      }),
      DOMAIN: form('DOMAIN', { domains: ['corp.example'] }),
      MAC: form('MAC', { macAddresses: ['00:11:22:33:44:55'] }),
      MFA: form('MFA', { timeoutSeconds: 300, promptOnWake: true }),
    };
    const ownFields: Record<string, string[]> = {
      OS: ['operatingSystems'],
      PROCESS: ['process'],
      PROCESS_MULTI: ['semantic', 'processes'],
      DOMAIN: ['domains'],
      MAC: ['macAddresses'],
      MFA: ['timeoutSeconds', 'promptOnWake', 'promptOnUnlock', 'ignoreLegacyEndpoints'],
    };
    const everyField = new Set(Object.values(ownFields).flat());
    for (const [typeId, body] of Object.entries(bodies)) {
      const res = await admin.post('/posture-checks', body);
      assert.equal(res.status, 201, `${typeId}: ${res.text}`);
      const d = (await admin.get(`/posture-checks/${res.body.data.id}`)).body.data;
      for (const f of everyField)
        assert.equal(f in d, ownFields[typeId]!.includes(f), `${typeId}: ${f} is rendered only for its own type`);
      // The same body again as a full update, and a patch carrying another type's field: both accepted.
      assert.equal((await admin.put(`/posture-checks/${d.id}`, { ...body, name: d.name })).status, 200);
      const other = [...everyField].find((f) => !ownFields[typeId]!.includes(f))!;
      assert.equal((await admin.patch(`/posture-checks/${d.id}`, { [other]: body[other] })).status, 200);
    }
    const proc = (await admin.get(`/posture-checks?filter=${encodeURIComponent('typeId = "PROCESS"')}`)).body.data;
    const stored = (proc as { name: string; process: Record<string, unknown> }[]).find(
      (p) => p.name === bodies.PROCESS!.name,
    )!;
    assert.equal(stored.process.path, 'C:\\Program Files\\app\\app.exe');
    assert.equal('signerFingerprint' in stored.process, false, 'an empty signer fingerprint is none');
  });

  test('update and patch grow version; a patch is checked merged; typeId stays', async () => {
    const id = await create('DOMAIN');
    assert.equal((await admin.patch(`/posture-checks/${id}`, { domains: ['a.example', 'b.example'] })).status, 200);
    let d = (await admin.get(`/posture-checks/${id}`)).body.data;
    assert.equal(d.version, 2);
    assert.deepEqual(d.domains, ['a.example', 'b.example']);
    // Another type's field is ignored.
    assert.equal((await admin.patch(`/posture-checks/${id}`, { macAddresses: ['x'] })).status, 200);
    assert.equal('macAddresses' in (await admin.get(`/posture-checks/${id}`)).body.data, false);
    assertFieldError(await admin.patch(`/posture-checks/${id}`, { domains: [] }), 'domains');
    // PUT replaces: the type's required fields must be there.
    assertFieldError(await admin.put(`/posture-checks/${id}`, { name: d.name }), 'domains');
    assert.equal(
      (await admin.put(`/posture-checks/${id}`, { name: d.name, domains: ['c.example'], typeId: 'MAC' })).status,
      200,
    );
    d = (await admin.get(`/posture-checks/${id}`)).body.data;
    assert.equal(d.version, 4);
    assert.equal(d.typeId, 'DOMAIN');
    assert.deepEqual(d.domains, ['c.example']);
    assert.equal((await admin.patch(`/posture-checks/${id}`, { tags: { a: 'b' } })).status, 200);
    assert.equal((await admin.get(`/posture-checks/${id}`)).body.data.version, 5);
    assert.equal((await admin.delete(`/posture-checks/${id}`)).status, 200);
    assert.equal((await admin.get(`/posture-checks/${id}`)).status, 404);
  });

  test('roleFilter on the listing; service policies select checks by attribute and @id', async () => {
    const attr = unique('attr');
    const a = await create('MAC', { roleAttributes: [attr] });
    const b = await create('OS', { roleAttributes: [attr, 'other'] });
    const c = await create('MFA');
    const listed = async (q: string) =>
      ((await admin.get(`/posture-checks?${q}`)).body.data as { id: string }[]).map((x) => x.id).sort();
    assert.deepEqual(await listed(`roleFilter=${encodeURIComponent('#' + attr)}`), [a, b].sort());
    assert.deepEqual(await listed(`roleFilter=${encodeURIComponent('@' + c)}`), [c]);
    const sp = await createRecord(admin, '/service-policies', {
      name: unique('sp'),
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#all'],
      serviceRoles: ['#all'],
      postureCheckRoles: [`#${attr}`, `@${c}`],
    });
    const res = await admin.get(`/service-policies/${sp}/posture-checks`);
    assert.equal(res.status, 200);
    assert.deepEqual((res.body.data as { id: string }[]).map((x) => x.id).sort(), [a, b, c].sort());
    // An attribute change moves the check out of the policy.
    assert.equal((await admin.patch(`/posture-checks/${a}`, { roleAttributes: [] })).status, 200);
    const after = await admin.get(`/service-policies/${sp}/posture-checks`);
    assert.deepEqual((after.body.data as { id: string }[]).map((x) => x.id).sort(), [b, c].sort());
    await admin.delete(`/service-policies/${sp}`);
  });
});
