/**
 * Posture at session create (docs/reference-notes.md §4.5 step 3, §9.2, §9.3): refused with 409
 * INVALID_POSTURE and recorded as a failed service request until the client reports a matching posture;
 * OR across the granting policies, AND within one; `postureQueries` on the client's service list; posture
 * responses validated; posture data per identity and API session; MFA with a timeout; sessions removed when
 * their posture stops passing; `service-updates` moving on a posture change.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRecord, createUser, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { checkResponse } from '../harness/schemas.js';
import { assertError, assertFieldError, unique } from '../harness/assert.js';
import { recordMfaPassed } from '../../src/model/posture/posture-of.js';
import { mfaRemoved } from '../../src/model/posture/responses.js';

let server: TestServer;
let admin: ApiClient;

before(async () => {
  server = await startTestServer();
  admin = await server.admin();
});
after(() => server.close());

const create = (path: string, body: Record<string, unknown>) => createRecord(admin, path, body);
const check = (typeId: string, body: Record<string, unknown>) =>
  create('/posture-checks', { name: unique(`pc-${typeId}`), typeId, ...body });

/** A user who may Dial a service through one router, under the given policies' posture check lists. */
async function setup(policies: string[][]) {
  const u = await createUser(server, admin);
  const s = await create('/services', { name: unique('svc'), encryptionRequired: true });
  const r = await create('/edge-routers', { name: unique('er') });
  const spIds: string[] = [];
  for (const checks of policies) {
    spIds.push(
      await create('/service-policies', {
        name: unique('sp'),
        type: 'Dial',
        semantic: 'AnyOf',
        identityRoles: [`@${u.id}`],
        serviceRoles: [`@${s}`],
        postureCheckRoles: checks.map((c) => `@${c}`),
      }),
    );
  }
  await create('/edge-router-policies', {
    name: unique('erp'),
    semantic: 'AnyOf',
    identityRoles: [`@${u.id}`],
    edgeRouterRoles: [`@${r}`],
  });
  await create('/service-edge-router-policies', {
    name: unique('serp'),
    semantic: 'AnyOf',
    serviceRoles: [`@${s}`],
    edgeRouterRoles: [`@${r}`],
  });
  const apiSessionId = (await u.client.get('/current-api-session')).body.data.id as string;
  return { user: u, service: s, policies: spIds, apiSessionId };
}

const dial = (c: ApiClient, serviceId: string) => c.post('/sessions', { serviceId, type: 'Dial' });

describe('posture at session create', () => {
  test('a wake reported after MFA starts the grace: the reply lists the services it touches', async () => {
    const mfa = await check('MFA', { timeoutSeconds: 3600, promptOnWake: true });
    const { user, service, apiSessionId } = await setup([[mfa]]);
    await recordMfaPassed(server.daemon.store.db, apiSessionId, user.id, server.clock.now());
    const quiet = await user.client.post('/posture-response', { id: mfa, typeId: 'ENDPOINT_STATE', unlocked: true });
    assert.deepEqual(quiet.body.data.services, []);
    const res = await user.client.post('/posture-response', { id: mfa, typeId: 'ENDPOINT_STATE', woken: true });
    assert.equal(res.status, 201);
    assert.deepEqual(checkResponse('client', '/posture-response', 'POST', 201, res.body), []);
    const listed = res.body.data.services as {
      id: string;
      postureQueryType: string;
      timeout: number;
      timeoutRemaining: number;
    }[];
    assert.equal(listed.length, 1);
    assert.equal(listed[0]!.id, service);
    assert.equal(listed[0]!.postureQueryType, 'MFA');
    assert.equal(listed[0]!.timeout, 3600);
    assert.ok(
      listed[0]!.timeoutRemaining <= 300 && listed[0]!.timeoutRemaining > 290,
      String(listed[0]!.timeoutRemaining),
    );
    assert.equal((await dial(user.client, service)).status, 201);
    server.clock.advance(301_000);
    assertError(await dial(user.client, service), 409, 'INVALID_POSTURE');
  });

  test('an OS and an MFA check: refused and recorded, then allowed once both pass', async () => {
    const os = await check('OS', { operatingSystems: [{ type: 'Windows', versions: ['>=10.0.19041 <11'] }] });
    const mfa = await check('MFA', { timeoutSeconds: 600 });
    const { user, service, policies, apiSessionId } = await setup([[os, mfa]]);

    const refused = await dial(user.client, service);
    assertError(refused, 409, 'INVALID_POSTURE');
    assert.match(
      refused.body.error.cause.message,
      new RegExp(`Failed to pass posture checks for service policies: \\[${policies[0]}\\]`),
    );
    assert.deepEqual(
      (refused.body.error.cause.data[policies[0]!] as { id: string }[]).map((c) => c.id).sort(),
      [os, mfa].sort(),
    );

    // The service list tells the client what is missing.
    const listed = await user.client.get('/services');
    assert.deepEqual(checkResponse('client', '/services', 'GET', 200, listed.body), []);
    const pq = listed.body.data[0].postureQueries as {
      policyId: string;
      isPassing: boolean;
      postureQueries: { id: string; queryType: string; isPassing: boolean; timeout: number }[];
    }[];
    assert.equal(pq.length, 1);
    assert.equal(pq[0]!.policyId, policies[0]);
    assert.equal(pq[0]!.isPassing, false);
    assert.deepEqual(pq[0]!.postureQueries.map((q) => [q.queryType, q.isPassing]).sort(), [
      ['MFA', false],
      ['OS', false],
    ]);
    assert.equal(pq[0]!.postureQueries.find((q) => q.queryType === 'MFA')!.timeout, 600);

    // A wrong OS version still fails; recorded with actual and expected values.
    let res = await user.client.post('/posture-response', {
      id: os,
      typeId: 'OS',
      type: 'windows',
      version: '11.0.22000',
    });
    assert.equal(res.status, 201);
    assert.deepEqual(checkResponse('client', '/posture-response', 'POST', 201, res.body), []);
    assertError(await dial(user.client, service), 409, 'INVALID_POSTURE');
    const failed = await admin.get(`/identities/${user.id}/failed-service-requests`);
    assert.equal(failed.status, 200);
    assert.deepEqual(
      checkResponse('management', '/identities/{id}/failed-service-requests', 'GET', 200, failed.body),
      [],
    );
    assert.equal(failed.body.data.length, 2);
    const last = failed.body.data[1];
    assert.equal(last.serviceId, service);
    assert.equal(last.apiSessionId, apiSessionId);
    assert.equal(last.sessionType, 'Dial');
    const osFailure = last.policyFailures[0].checks.find(
      (c: { postureCheckType: string }) => c.postureCheckType === 'OS',
    );
    assert.deepEqual(osFailure.actualValue, { type: 'windows', version: '11.0.22000' });
    assert.deepEqual(osFailure.expectedValue, [{ type: 'Windows', versions: ['>=10.0.19041 <11'] }]);

    // Matching OS (type compared case-insensitively), MFA still missing.
    res = await user.client.post('/posture-response-bulk', [
      { id: os, typeId: 'OS', type: 'WINDOWS', version: '10.0.19045', build: '1' },
    ]);
    assert.equal(res.status, 200);
    assertError(await dial(user.client, service), 409, 'INVALID_POSTURE');

    // MFA passed on this API session: the session is created.
    await recordMfaPassed(server.daemon.store.db, apiSessionId, user.id, server.clock.now());
    const ok = await dial(user.client, service);
    assert.equal(ok.status, 201, ok.text);
    const pq2 = (await user.client.get('/services')).body.data[0].postureQueries;
    assert.equal(pq2[0].isPassing, true);
    const mfaQuery = pq2[0].postureQueries.find((q: { queryType: string }) => q.queryType === 'MFA');
    assert.ok(mfaQuery.timeoutRemaining > 590 && mfaQuery.timeoutRemaining <= 600, String(mfaQuery.timeoutRemaining));

    // Posture data: the identity's OS, and MFA per API session.
    const data = await admin.get(`/identities/${user.id}/posture-data`);
    assert.equal(data.status, 200);
    assert.deepEqual(checkResponse('management', '/identities/{id}/posture-data', 'GET', 200, data.body), []);
    assert.equal(data.body.data.os.version, '10.0.19045');
    assert.equal(data.body.data.apiSessionPostureData[apiSessionId].mfa.passedMfa, true);

    // The MFA pass times out: a new session is refused (the existing one is returned only while it passes).
    server.clock.advance(601_000);
    await user.client.get('/current-api-session');
    // Refused four times in all: no posture, the wrong OS version, no MFA, MFA timed out.
    assertError(await dial(user.client, service), 409, 'INVALID_POSTURE');
    assert.equal((await admin.get(`/identities/${user.id}/failed-service-requests`)).body.data.length, 4);
  });

  test('OR across policies, AND within one; a policy without checks passes', async () => {
    const dom = await check('DOMAIN', { domains: ['Corp.Example'] });
    const mac = await check('MAC', { macAddresses: ['aa:bb:cc:dd:ee:ff'] });
    const { user, service } = await setup([[dom, mac]]);
    assertError(await dial(user.client, service), 409, 'INVALID_POSTURE');
    await user.client.post('/posture-response', { id: dom, typeId: 'DOMAIN', domain: 'corp.example' });
    assertError(await dial(user.client, service), 409, 'INVALID_POSTURE');
    await user.client.post('/posture-response', {
      id: mac,
      typeId: 'MAC',
      macAddresses: ['00:00:00:00:00:01', 'aa:bb:cc:dd:ee:ff'],
    });
    assert.equal((await dial(user.client, service)).status, 201);

    const other = await setup([[dom], []]);
    const created = await dial(other.user.client, other.service);
    assert.equal(created.status, 201);
    // The management detail names only the policies that pass: the one without checks.
    const detail = await admin.get(`/sessions/${created.body.data.id}`);
    assert.deepEqual(
      (detail.body.data.servicePolicies as { id: string }[]).map((p) => p.id),
      [other.policies[1]],
    );
  });

  test('a reported posture that stops passing removes the session and moves service-updates', async () => {
    const dom = await check('DOMAIN', { domains: ['corp.example'] });
    const { user, service } = await setup([[dom]]);
    await user.client.post('/posture-response', { id: dom, typeId: 'DOMAIN', domain: 'corp.example' });
    const s = await dial(user.client, service);
    assert.equal(s.status, 201);
    const before = (await user.client.get('/current-api-session/service-updates')).body.data.lastChangeAt;
    await new Promise((r) => setTimeout(r, 5));
    await user.client.post('/posture-response', { id: dom, typeId: 'DOMAIN', domain: 'home.example' });
    assert.equal((await user.client.get(`/sessions/${s.body.data.id}`)).status, 404);
    const afterChange = (await user.client.get('/current-api-session/service-updates')).body.data.lastChangeAt;
    assert.ok(afterChange > before, `${afterChange} > ${before}`);
  });

  test('MFA removal removes sessions that needed it', async () => {
    const mfa = await check('MFA', {});
    const { user, service, apiSessionId } = await setup([[mfa]]);
    await recordMfaPassed(server.daemon.store.db, apiSessionId, user.id, server.clock.now());
    const s = await dial(user.client, service);
    assert.equal(s.status, 201);
    await mfaRemoved(server.daemon.ctx, user.id);
    assert.equal((await user.client.get(`/sessions/${s.body.data.id}`)).status, 404);
    assertError(await dial(user.client, service), 409, 'INVALID_POSTURE');
  });

  test('processes: hashes and signers case-insensitive; multi AllOf/AnyOf', async () => {
    const hash = 'AB'.repeat(64);
    const signer = 'cd'.repeat(20);
    const proc = await check('PROCESS', {
      process: { osType: 'Linux', path: '/bin/agent', hashes: [hash], signerFingerprint: signer },
    });
    const multi = await check('PROCESS_MULTI', {
      semantic: 'AllOf',
      processes: [
        { osType: 'Linux', path: '/bin/a' },
        { osType: 'Linux', path: '/bin/b' },
      ],
    });
    const { user, service } = await setup([[proc, multi]]);
    const listed = (await user.client.get('/services')).body.data[0].postureQueries[0].postureQueries;
    assert.deepEqual(listed.find((q: { id: string }) => q.id === proc).process, {
      osType: 'Linux',
      path: '/bin/agent',
    });
    assert.equal(listed.find((q: { id: string }) => q.id === multi).processes.length, 2);
    await user.client.post('/posture-response-bulk', [
      {
        id: proc,
        typeId: 'PROCESS',
        path: '/bin/agent',
        isRunning: true,
        hash: hash.toLowerCase(),
        signerFingerprints: [signer.toUpperCase()],
      },
      { id: multi, typeId: 'PROCESS', path: '/bin/a', isRunning: true },
    ]);
    assertError(await dial(user.client, service), 409, 'INVALID_POSTURE');
    await user.client.post('/posture-response', { id: multi, typeId: 'PROCESS', path: '/bin/b', isRunning: true });
    assert.equal((await dial(user.client, service)).status, 201);
  });

  test('posture responses are validated', async () => {
    const u = await createUser(server, admin);
    assertFieldError(await u.client.post('/posture-response', { id: 'x', typeId: 'NOPE' }), 'typeId');
    // Only the response kinds' own names count: not an object's inherited keys, not a list holding a name.
    for (const typeId of ['toString', '__proto__', ['OS']]) {
      assertFieldError(
        await u.client.post('/posture-response', { id: 'x', typeId, type: 'Linux', version: '1' }),
        'typeId',
      );
    }
    assertFieldError(await u.client.post('/posture-response', { id: 'x', typeId: 'OS', type: 'Linux' }), 'version');
    assertFieldError(
      await u.client.post('/posture-response', { id: 'x', typeId: 'MAC', macAddresses: 'aa' }),
      'macAddresses',
    );
    assertFieldError(
      await u.client.post('/posture-response-bulk', [
        { id: 'x', typeId: 'DOMAIN', domain: 'a' },
        { id: 'y', typeId: 'PROCESS', path: '/x' },
      ]),
      '[1].isRunning',
    );
    assert.equal((await u.client.post('/posture-response', [])).status, 400);
    assert.equal((await u.client.post('/posture-response-bulk', {})).status, 400);
    // Nothing of a refused bulk request is kept.
    const data = (await admin.get(`/identities/${u.id}/posture-data`)).body.data;
    assert.equal(data.domain.domain, '');
    assert.equal((await admin.get('/identities/nope/posture-data')).status, 404);
    assert.equal((await admin.get('/identities/nope/failed-service-requests')).status, 404);
  });
});
