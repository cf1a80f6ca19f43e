/**
 * Posture check types and posture lifetimes: the `/posture-check-types` listing filters, sorts and pages like every
 * other (docs/reference-notes.md §1.5–1.7) and `/summary` counts its records; posture held in memory goes as soon as
 * its identity is deleted or its API sessions end, whichever way they end (§4.2; docs/decisions.md, "Posture").
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  createPostureCheck,
  createRecord,
  createUser,
  startTestServer,
  type ApiClient,
  type TestServer,
} from '../harness/server.js';
import { assertError, filterParam, unique } from '../harness/assert.js';
import { checkResponse } from '../harness/schemas.js';
import { identityPosture, recordFailedRequest } from '../../src/model/posture/posture-of.js';
import { failedRequests, sessionPosturesOfIdentity } from '../../src/store/posture-state.js';

let server: TestServer;
let admin: ApiClient;

before(async () => {
  server = await startTestServer({ clock: 'frozen', yaml: 'edge:\n  api:\n    sessionTimeout: 10s\n' });
  admin = await server.admin();
});
after(() => server.close());

const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((r) => r.id);

describe('GET /posture-check-types', () => {
  it('lists the five types in id order with paging metadata and the filterable fields', async () => {
    const res = await admin.get('/posture-check-types');
    assert.equal(res.status, 200);
    assert.deepEqual(checkResponse('management', '/posture-check-types', 'GET', 200, res.body), []);
    assert.deepEqual(ids(res), ['DOMAIN', 'MAC', 'OS', 'PROCESS', 'PROCESS_MULTI']);
    assert.deepEqual(res.body.meta.pagination, { limit: 10, offset: 0, totalCount: 5 });
    for (const f of ['id', 'name', 'createdAt', 'updatedAt', 'tags'])
      assert.ok(res.body.meta.filterableFields.includes(f), f);
    assert.equal(res.body.data[2].name, 'Operating System Check');
    assert.ok(res.body.data[2].operatingSystems.length > 0);
  });

  it('honours limit and offset, and refuses ones that are not integers', async () => {
    const res = await admin.get('/posture-check-types?limit=2&offset=1');
    assert.deepEqual(ids(res), ['MAC', 'OS']);
    assert.deepEqual(res.body.meta.pagination, { limit: 2, offset: 1, totalCount: 5 });
    assert.deepEqual(ids(await admin.get('/posture-check-types?offset=4')), ['PROCESS_MULTI']);
    assertError(await admin.get('/posture-check-types?limit=two'), 400, 'INVALID_PAGINATION');
  });

  it('filters on the records fields, with the filter sort, skip and limit winning', async () => {
    assert.deepEqual(ids(await admin.get(`/posture-check-types?${filterParam('name contains "Process"')}`)), [
      'PROCESS',
      'PROCESS_MULTI',
    ]);
    const some = await admin.get(
      `/posture-check-types?${filterParam('id in ["OS", "MAC", "DOMAIN"] sort by id desc')}`,
    );
    assert.deepEqual(ids(some), ['OS', 'MAC', 'DOMAIN']);
    assert.equal(some.body.meta.pagination.totalCount, 3);
    const paged = await admin.get(`/posture-check-types?${filterParam('true sort by name skip 1 limit 2')}&limit=1`);
    // By name: MAC Address, Operating System, Process, Process Multi, Windows Domain.
    assert.deepEqual(ids(paged), ['OS', 'PROCESS']);
    assert.deepEqual(paged.body.meta.pagination, { limit: 2, offset: 1, totalCount: 5 });
    assert.deepEqual(ids(await admin.get(`/posture-check-types?${filterParam('tags.x = "y"')}`)), []);
    assert.equal(
      (await admin.get(`/posture-check-types?${filterParam('createdAt < datetime(2000-01-01T00:00:00Z)')}`)).body.data
        .length,
      5,
    );
    assertError(
      await admin.get(`/posture-check-types?${filterParam('operatingSystems = "x"')}`),
      400,
      'INVALID_FILTER',
    );
    assertError(await admin.get(`/posture-check-types?${filterParam('name = 1 and')}`), 400, 'INVALID_FILTER');
  });

  it('sorts by the URL sort when the filter has none', async () => {
    assert.deepEqual(ids(await admin.get('/posture-check-types?sort=name%20desc&limit=2')), [
      'DOMAIN',
      'PROCESS_MULTI',
    ]);
    assertError(await admin.get('/posture-check-types?sort=nope'), 400, 'INVALID_SORT_IDENTIFIER');
  });

  it('shows one type by id and answers 404 for any other id', async () => {
    const one = await admin.get('/posture-check-types/PROCESS');
    assert.equal(one.status, 200);
    assert.equal(one.body.data.name, 'Process Check');
    assertError(await admin.get('/posture-check-types/MFA'), 404, 'NOT_FOUND');
    assertError(await admin.get('/posture-check-types/os'), 404, 'NOT_FOUND');
  });

  it('is counted by /summary', async () => {
    assert.equal((await admin.get('/summary')).body.data.postureCheckTypes, 5);
  });
});

describe('stored posture ends with what it belongs to', () => {
  /** The API sessions of the identity holding posture in the store. */
  const heldSessions = async (identityId: string) =>
    (await sessionPosturesOfIdentity(server.daemon.store.db, identityId)).map((s) => s.apiSessionId);

  let osCheck: string;
  before(async () => {
    // Only responses to a check that applies to the identity are kept (docs/decisions.md, "Posture data bounds").
    osCheck = await createPostureCheck(admin, 'OS', { operatingSystems: [{ type: 'Linux' }] });
    const service = await createRecord(admin, '/services', { name: unique('svc'), encryptionRequired: true });
    await createRecord(admin, '/service-policies', {
      name: unique('sp'),
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#posture-reporting'],
      serviceRoles: [`@${service}`],
      postureCheckRoles: [`@${osCheck}`],
    });
  });

  /** A user whose API session and identity both hold posture: an OS report and an endpoint state. */
  async function reportingUser() {
    const user = await createUser(server, admin, {
      api: 'client',
      identity: { roleAttributes: ['posture-reporting'] },
    });
    const res = await user.client.post('/posture-response-bulk', [
      { id: osCheck, typeId: 'OS', type: 'Linux', version: '6.1.0' },
      { id: '0', typeId: 'ENDPOINT_STATE', woken: true },
    ]);
    assert.equal(res.status, 200, res.text);
    assert.equal((await heldSessions(user.id)).length, 1);
    return user;
  }
  const sessionData = async (identityId: string) =>
    (await admin.get(`/identities/${identityId}/posture-data`)).body.data.apiSessionPostureData;

  it('disabling an identity drops the posture of its API sessions at once, keeping what the identity reported', async () => {
    const user = await reportingUser();
    assert.equal(Object.keys(await sessionData(user.id)).length, 1);
    assert.equal((await admin.post(`/identities/${user.id}/disable`, { durationMinutes: 0 })).status, 200);
    assert.equal((await heldSessions(user.id)).length, 0);
    assert.equal((await identityPosture(server.daemon.store.db, user.id))?.os?.type, 'Linux');
    assert.deepEqual(await sessionData(user.id), {});
  });

  it('an admin deleting an API session drops its posture', async () => {
    const user = await reportingUser();
    const [apiSessionId] = await heldSessions(user.id);
    assert.equal((await admin.delete(`/api-sessions/${apiSessionId}`)).status, 200);
    assert.equal((await heldSessions(user.id)).length, 0);
  });

  it('deleting an identity forgets all of its posture and failed service requests', async () => {
    const user = await reportingUser();
    await recordFailedRequest(server.daemon.store.db, user.id, { serviceId: 'x' });
    assert.equal((await admin.get(`/identities/${user.id}/failed-service-requests`)).body.data.length, 1);
    assert.equal((await admin.delete(`/identities/${user.id}`)).status, 200);
    assert.equal(await identityPosture(server.daemon.store.db, user.id), undefined);
    assert.equal((await heldSessions(user.id)).length, 0);
    assert.deepEqual(await failedRequests(server.daemon.store.db, user.id), []);
  });

  it('the sweeper ending idle API sessions drops their posture', async () => {
    const user = await reportingUser();
    server.clock.advance(11_000);
    await server.sweep();
    assert.equal((await heldSessions(user.id)).length, 0);
    admin = await server.admin();
  });
});
