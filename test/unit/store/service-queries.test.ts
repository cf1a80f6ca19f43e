/**
 * The identity, session and enrollment query modules answer in domain values (docs/design.md, "Store"):
 * booleans from 0/1, JSON parsed, counts as numbers, absent things as undefined or false, never a throw.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type OpenedStore } from '../../../src/store/db.js';
import {
  apiSessionByTokenHash,
  deleteApiSessionsOfIdentity,
  identitiesWithApiSession,
  idleApiSessionIds,
  insertApiSession,
} from '../../../src/store/api-sessions.js';
import { authenticatorIdOf, passwordAuthenticatorByUsername } from '../../../src/store/authenticators.js';
import { deleteEnrollmentWithTokenHash, enrollmentByTokenHash } from '../../../src/store/enrollments.js';
import {
  defaultAdminExists,
  identityAuthPolicyId,
  identityStanding,
  isDefaultAdminIdentity,
  setIdentityDisabled,
} from '../../../src/store/identities.js';
import { insertSessionIfAbsent, sessionOf, type StoredSession } from '../../../src/store/sessions.js';
import { createEntity } from '../../../src/model/crud.js';
import { identities, services } from '../../../src/model/resources/index.js';
import { sessionEventFor } from '../../harness/events.js';
import { storeCtx } from '../../harness/store.js';

let dir: string;
let store: OpenedStore;
let identityId: string;
let serviceId: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'edgectl-store-svc-'));
  store = await openStore(join(dir, 'db.sqlite'));
  const ctx = storeCtx(store);
  identityId = await createEntity(ctx, identities, { name: 'alice', type: 'User', isAdmin: true });
  serviceId = await createEntity(ctx, services, { name: 'svc' });
});
after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

test('identities: flags as booleans, absent identities as undefined or false', async () => {
  assert.equal(await isDefaultAdminIdentity(store.db, identityId), false);
  assert.equal(await isDefaultAdminIdentity(store.db, 'nobody'), false);
  assert.equal(await defaultAdminExists(store.db), false);
  assert.equal(await identityAuthPolicyId(store.db, identityId), 'default');
  assert.equal(await identityAuthPolicyId(store.db, 'nobody'), undefined);
  await setIdentityDisabled(
    store.db,
    identityId,
    { disabledAt: '2026-01-01T00:00:00.000Z', disabledUntil: null },
    '2026-01-01T00:00:00.000Z',
  );
  assert.equal((await identityStanding(store.db, identityId))?.disabledAt, '2026-01-01T00:00:00.000Z');
  await setIdentityDisabled(
    store.db,
    identityId,
    { disabledAt: null, disabledUntil: null },
    '2026-01-01T00:00:00.000Z',
  );
  assert.equal((await identityStanding(store.db, identityId))?.disabledAt, null);
  assert.equal(await authenticatorIdOf(store.db, identityId, 'updb'), undefined);
  assert.equal(await passwordAuthenticatorByUsername(store.db, 'nobody'), undefined);
});

test('API sessions: the token lookup answers booleans and parsed JSON; idle ones are found and removed', async () => {
  const createdAt = '2026-01-01T00:00:00.000Z';
  await insertApiSession(store.db, {
    id: 'as-1',
    tokenHash: 'hash-1',
    identityId,
    authenticatorId: 'auth-1',
    ipAddress: '127.0.0.1',
    configTypes: ['all'],
    authQueries: [{ typeId: 'MFA' }],
    isMfaRequired: true,
    createdAt,
  });
  const principal = await apiSessionByTokenHash(store.db, 'hash-1');
  assert.deepEqual(
    principal && {
      isAdmin: principal.isAdmin,
      isDefaultAdmin: principal.isDefaultAdmin,
      authQueries: principal.authQueries,
    },
    {
      isAdmin: true,
      isDefaultAdmin: false,
      authQueries: [{ typeId: 'MFA' }],
    },
  );
  assert.equal(await apiSessionByTokenHash(store.db, 'no-such-hash'), undefined);
  assert.deepEqual([...(await identitiesWithApiSession(store.db, [identityId, 'nobody']))], [identityId]);
  assert.deepEqual(await idleApiSessionIds(store.db, createdAt, 10), ['as-1']);
  assert.deepEqual(await idleApiSessionIds(store.db, '2025-12-31T00:00:00.000Z', 10), []);

  const session: StoredSession = {
    id: 's-1',
    createdAt,
    updatedAt: createdAt,
    tags: { a: 1 },
    isSystem: false,
    tokenHash: 's-hash-1',
    type: 'Dial',
    apiSessionId: 'as-1',
    serviceId,
    identityId,
  };
  assert.equal(await insertSessionIfAbsent(store.db, session, sessionEventFor(session.id)), true);
  assert.equal(
    await insertSessionIfAbsent(store.db, { ...session, id: 's-2', tokenHash: 's-hash-2' }, sessionEventFor('s-2')),
    false,
    'one per API session, service and type',
  );
  assert.deepEqual(await sessionOf(store.db, 'as-1', serviceId, 'Dial'), session);
  assert.equal(await sessionOf(store.db, 'as-1', serviceId, 'Bind'), undefined);

  assert.equal(await deleteApiSessionsOfIdentity(store.db, identityId), 1);
  assert.equal(await sessionOf(store.db, 'as-1', serviceId, 'Dial'), undefined, 'sessions go with their API session');
});

test('enrollments: an unknown token hash is undefined and its conditional delete answers false', async () => {
  assert.equal(await enrollmentByTokenHash(store.db, 'no-such-hash'), undefined);
  assert.equal(await deleteEnrollmentWithTokenHash(store.db, 'no-such-id', 'no-such-hash'), false);
});
