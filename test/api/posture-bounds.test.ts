/**
 * Posture data is bounded (docs/decisions.md, "Posture data bounds"): responses are kept only
 * for checks that apply to the caller, with the check's type, one record per check (and per named process of a
 * multi-process check) replacing the earlier one; an identity keeps at most MAX_REPORTED_BYTES; the posture of
 * an API session goes when the session ends, even when a response for it arrives after the end.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createPostureCheck,
  createRecord,
  createUser,
  startTestServer,
  type ApiClient,
  type TestServer,
} from '../harness/server.js';
import { assertFieldError, unique } from '../harness/assert.js';
import { identityPosture } from '../../src/model/posture/posture-of.js';
import { sessionPosturesOfIdentity } from '../../src/store/posture-state.js';
import { MAX_REPORTED_BYTES } from '../../src/model/posture/kept.js';
import { submitPostureResponses } from '../../src/model/posture/responses.js';

let server: TestServer;
let admin: ApiClient;

before(async () => {
  server = await startTestServer();
  admin = await server.admin();
});
after(() => server.close());

/** A user granted a service by one Dial policy carrying the checks. */
async function userUnder(checks: string[]) {
  const user = await createUser(server, admin);
  const service = await createRecord(admin, '/services', { name: unique('svc'), encryptionRequired: true });
  const policy = await createRecord(admin, '/service-policies', {
    name: unique('sp'),
    type: 'Dial',
    semantic: 'AnyOf',
    identityRoles: [`@${user.id}`],
    serviceRoles: [`@${service}`],
    postureCheckRoles: checks.map((c) => `@${c}`),
  });
  return { user, policy };
}

const postureData = async (identityId: string) => {
  const res = await admin.get(`/identities/${identityId}/posture-data`);
  assert.equal(res.status, 200);
  return res;
};

const running = (id: string, path: string, more: Record<string, unknown> = {}) => ({
  id,
  typeId: 'PROCESS',
  path,
  isRunning: true,
  ...more,
});

describe('posture data is bounded', () => {
  test('responses naming no check that applies to the caller, or naming one of another type, are ignored', async () => {
    const proc = await createPostureCheck(admin, 'PROCESS', { process: { osType: 'Linux', path: '/bin/agent' } });
    const mac = await createPostureCheck(admin, 'MAC', { macAddresses: ['aa:bb:cc:dd:ee:ff'] });
    const othersOs = await createPostureCheck(admin, 'OS', { operatingSystems: [{ type: 'Linux' }] });
    await userUnder([othersOs]);
    const { user } = await userUnder([proc, mac]);

    // The probe's shape: bulk requests of made-up process ids, each answered as the reference would (200).
    for (let r = 0; r < 20; r++) {
      const items = Array.from({ length: 200 }, (_, i) =>
        running(`made-up-${r}-${i}`, `/x/${'p'.repeat(200)}/${i}`, { signerFingerprints: ['ab'.repeat(20)] }),
      );
      const res = await user.client.post('/posture-response-bulk', items);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.data.services, []);
    }
    const res = await user.client.post('/posture-response-bulk', [
      { id: othersOs, typeId: 'OS', type: 'Linux', version: '6.1.0' },
      { id: mac, typeId: 'OS', type: 'Linux', version: '6.1.0' },
      { id: proc, typeId: 'MAC', macAddresses: ['aa:bb:cc:dd:ee:ff'] },
      { id: mac, typeId: 'DOMAIN', domain: 'corp.example' },
      { id: 'nope', typeId: 'MAC', macAddresses: ['aa:bb:cc:dd:ee:ff'] },
    ]);
    assert.equal(res.status, 200, res.text);

    const data = await postureData(user.id);
    assert.deepEqual(data.body.data.processes, []);
    assert.equal(data.body.data.os.type, '');
    assert.deepEqual(data.body.data.mac.addresses, []);
    assert.equal(data.body.data.domain.domain, '');
    assert.ok(Buffer.byteLength(data.text) < 2048, `posture-data answered ${Buffer.byteLength(data.text)} bytes`);
    assert.equal((await identityPosture(server.daemon.store.db, user.id))?.processes.size ?? 0, 0);
  });

  test('repeated responses keep one record per check, and one per named process of a multi-process check', async () => {
    const proc = await createPostureCheck(admin, 'PROCESS', { process: { osType: 'Linux', path: '/bin/agent' } });
    const multi = await createPostureCheck(admin, 'PROCESS_MULTI', {
      semantic: 'AllOf',
      processes: [
        { osType: 'Linux', path: '/bin/a' },
        { osType: 'Linux', path: '/bin/b' },
      ],
    });
    const os = await createPostureCheck(admin, 'OS', { operatingSystems: [{ type: 'Linux' }] });
    const { user } = await userUnder([proc, multi, os]);
    for (let i = 0; i < 50; i++) {
      const res = await user.client.post('/posture-response-bulk', [
        // A PROCESS check is judged by its id alone: whatever path is reported, it keeps one record.
        running(proc, `/bin/agent-${i}`),
        running(multi, '/bin/a'),
        running(multi, '/BIN/B'),
        running(multi, `/bin/c-${i}`),
        { id: os, typeId: 'OS', type: 'Linux', version: `6.1.${i}` },
      ]);
      assert.equal(res.status, 200, res.text);
    }
    const data = (await postureData(user.id)).body.data;
    const processes = data.processes as { postureCheckId: string; path: string }[];
    assert.deepEqual(
      processes.map((p) => [p.postureCheckId, p.path]).sort(),
      [
        [multi, '/BIN/B'],
        [multi, '/bin/a'],
        [proc, '/bin/agent-49'],
      ].sort(),
    );
    assert.equal(data.os.version, '6.1.49');
    assert.equal((await identityPosture(server.daemon.store.db, user.id))?.processes.size, 3);
  });

  test('records of a check that stops applying go with the next response', async () => {
    const proc = await createPostureCheck(admin, 'PROCESS', { process: { osType: 'Linux', path: '/bin/agent' } });
    const mac = await createPostureCheck(admin, 'MAC', { macAddresses: ['aa:bb:cc:dd:ee:ff'] });
    const { user, policy } = await userUnder([proc, mac]);
    await user.client.post('/posture-response', running(proc, '/bin/agent'));
    assert.equal((await postureData(user.id)).body.data.processes.length, 1);
    const patched = await admin.patch(`/service-policies/${policy}`, { postureCheckRoles: [`@${mac}`] });
    assert.equal(patched.status, 200, patched.text);
    const res = await user.client.post('/posture-response', {
      id: mac,
      typeId: 'MAC',
      macAddresses: ['aa:bb:cc:dd:ee:ff'],
    });
    assert.equal(res.status, 201, res.text);
    const data = (await postureData(user.id)).body.data;
    assert.deepEqual(data.processes, []);
    assert.deepEqual(data.mac.addresses, ['aa:bb:cc:dd:ee:ff']);
  });

  test(`at most ${MAX_REPORTED_BYTES} bytes per identity: a response over it is refused, nothing changes`, async () => {
    const mac = await createPostureCheck(admin, 'MAC', { macAddresses: ['aa:bb:cc:dd:ee:ff'] });
    const proc = await createPostureCheck(admin, 'PROCESS', { process: { osType: 'Linux', path: '/bin/agent' } });
    const { user } = await userUnder([mac, proc]);
    const addresses = (n: number, len: number) => Array.from({ length: n }, (_, i) => `${i}:`.padEnd(len, 'f'));
    const small = await user.client.post('/posture-response', {
      id: mac,
      typeId: 'MAC',
      macAddresses: addresses(100, 17),
    });
    assert.equal(small.status, 201, small.text);

    // About 100 KiB of addresses: under the body limit, over the identity's bound.
    const tooBig = addresses(1000, 100);
    assertFieldError(
      await user.client.post('/posture-response', { id: mac, typeId: 'MAC', macAddresses: tooBig }),
      'id',
    );
    // In a bulk request the item taking the total over is named; the items before it are not kept either.
    const bulk = await user.client.post('/posture-response-bulk', [
      running(proc, '/bin/agent'),
      { id: mac, typeId: 'MAC', macAddresses: tooBig },
    ]);
    assertFieldError(bulk, '[1].id');

    const data = await postureData(user.id);
    assert.equal(data.body.data.mac.addresses.length, 100);
    assert.deepEqual(data.body.data.processes, []);
    assert.ok(Buffer.byteLength(data.text) < MAX_REPORTED_BYTES);
    // Replacing the record with one of the same size again and again never adds up.
    for (let i = 0; i < 20; i++) {
      const res = await user.client.post('/posture-response', {
        id: mac,
        typeId: 'MAC',
        macAddresses: addresses(400, 100),
      });
      assert.equal(res.status, 201, res.text);
    }
    assert.equal((await postureData(user.id)).body.data.mac.addresses.length, 400);
  });

  test('an API session keeps one fixed record, dropped when the session ends', async () => {
    const user = await createUser(server, admin);
    const apiSessionId = (await user.client.get('/current-api-session')).body.data.id as string;
    // The reference's clients send endpoint state under id "0": it belongs to the API session, not to a check.
    for (let i = 0; i < 20; i++) {
      const res = await user.client.post('/posture-response', { id: '0', typeId: 'ENDPOINT_STATE', woken: true });
      assert.equal(res.status, 201, res.text);
    }
    const sessions = (await postureData(user.id)).body.data.apiSessionPostureData;
    assert.deepEqual(Object.keys(sessions), [apiSessionId]);
    assert.notEqual(sessions[apiSessionId].endpointState.wokenAt, '0001-01-01T00:00:00.000Z');
    assert.equal((await user.client.delete('/current-api-session')).status, 200);
    assert.deepEqual((await postureData(user.id)).body.data.apiSessionPostureData, {});
    assert.equal((await sessionPosturesOfIdentity(server.daemon.store.db, user.id)).length, 0);
  });

  test('a response for an API session that ended while it was handled keeps nothing for the session', async () => {
    const user = await createUser(server, admin);
    const apiSessionId = (await user.client.get('/current-api-session')).body.data.id as string;
    assert.equal((await admin.delete(`/api-sessions/${apiSessionId}`)).status, 200);
    // The request got past authentication before the session ended: the model sees the ended session's id.
    await submitPostureResponses(server.daemon.ctx, { identityId: user.id, apiSessionId }, [
      { id: '0', typeId: 'ENDPOINT_STATE', woken: true },
    ]);
    assert.equal((await sessionPosturesOfIdentity(server.daemon.store.db, user.id)).length, 0);
    assert.deepEqual((await postureData(user.id)).body.data.apiSessionPostureData, {});
  });
});
