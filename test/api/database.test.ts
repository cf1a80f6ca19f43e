/**
 * Database operations of the Management API, on either store: the data-integrity check and fix (each derived
 * structure is damaged directly in the store, past the controller: a second SQLite connection to the file, or
 * a PostgreSQL connection of its own; then reported, repaired and found clean), foreign logic in the schema,
 * the one-at-a-time rule with the scan running in the background while requests are served, snapshots (0600,
 * at most one a minute by the controller's clock: SQLite's backup beside the file, pg_dump's archive in the
 * data dir), admin only, and the results' reference shape.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { checkResponse } from '../harness/schemas.js';
import { assertError, unique } from '../harness/assert.js';
import {
  ALTERED_DESCRIPTION,
  FOREIGN_DESCRIPTION,
  injectForeignLogic,
  MISSING_DESCRIPTION,
  POSTGRES_DESCRIPTIONS,
  POSTGRES_FOREIGN_LOGIC,
} from '../harness/schema-damage.js';
import { createDatabase, PG_SERVER, testStoreKind } from '../harness/pg.js';
import { writeStore, type Exec } from '../harness/raw-store.js';
import {
  createIdentity,
  createRecord,
  createUser,
  startTestServer,
  type ApiClient,
  type TestServer,
} from '../harness/server.js';

let s: TestServer;
let admin: ApiClient;
const postgres = testStoreKind() === 'postgres';

before(async () => {
  s = await startTestServer({ clock: 'frozen', yaml: 'metrics:\n  enabled: true\n' });
  admin = await s.admin();
});
after(() => s?.close());

interface Details {
  inProgress: boolean;
  fixingErrors: boolean;
  error: string;
  tooManyErrors: boolean;
  results: { description: string; fixed: boolean }[];
}

/** Polls the results until the scan is over; checks the answer against the reference schema. */
async function waitResults(): Promise<Details> {
  for (let i = 0; i < 1200; i++) {
    const res = await admin.get('/database/data-integrity-results');
    assert.equal(res.status, 200);
    if (!res.body.data.inProgress) {
      assert.deepEqual(
        checkResponse('management', '/database/data-integrity-results', 'GET', 200, res.body),
        [],
        res.text,
      );
      assert.deepEqual(res.body.meta.pagination, { limit: -1, offset: 0, totalCount: res.body.data.results.length });
      assert.deepEqual(res.body.meta.filterableFields, []);
      return res.body.data;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the scan did not finish');
}

async function check(): Promise<Details> {
  const res = await admin.post('/database/check-data-integrity');
  assert.equal(res.status, 202, res.text);
  assert.deepEqual(res.body.data, {});
  return waitResults();
}

/** A second connection to the live store; `fkOff` lets it write rows whose references point nowhere. */
const damage = (fn: (exec: Exec) => Promise<void>, fkOff = false): Promise<void> => writeStore(s, fn, fkOff);

async function metric(name: string): Promise<number | undefined> {
  const res = await s.request('GET', `/metrics`, { headers: { accept: '*/*' } });
  const line = res.text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}

const NOW = () => new Date().toISOString();

test('a clean store checks clean; the results have the reference shape', async () => {
  const d = await check();
  assert.equal(d.error, '');
  assert.equal(d.fixingErrors, false);
  assert.equal(d.tooManyErrors, false);
  assert.deepEqual(d.results, []);
  assert.equal(await metric('edgectl_store_integrity_ok'), 1);
});

test('every derived structure damaged in the file is reported, fixed after a snapshot, then checks clean', async () => {
  // The model: a service selected by a Dial policy, an edge router policy and a service edge router policy,
  // two edge routers (one a tunneler with its system records), an identity with an API session.
  const svc = await createRecord(admin, '/services', {
    name: unique('svc'),
    roleAttributes: ['web'],
    encryptionRequired: true,
  });
  const other = await createRecord(admin, '/services', {
    name: unique('svc2'),
    roleAttributes: ['db'],
    encryptionRequired: true,
  });
  const sp = await createRecord(admin, '/service-policies', {
    name: unique('sp'),
    type: 'Dial',
    semantic: 'AnyOf',
    identityRoles: ['#all'],
    serviceRoles: ['#web'],
  });
  const serp = await createRecord(admin, '/service-edge-router-policies', {
    name: unique('serp'),
    semantic: 'AnyOf',
    serviceRoles: ['#web'],
    edgeRouterRoles: ['#all'],
  });
  const tunneler = await createRecord(admin, '/edge-routers', { name: unique('tun'), isTunnelerEnabled: true });
  const plain = await createRecord(admin, '/edge-routers', { name: unique('plain'), roleAttributes: ['edge'] });
  const erp = await createRecord(admin, '/edge-router-policies', {
    name: unique('erp'),
    semantic: 'AnyOf',
    identityRoles: ['#all'],
    edgeRouterRoles: ['#edge'],
  });
  const user = await createUser(s, admin);
  const identity = await createIdentity(admin);

  await damage(async (exec) => {
    // The tunneler's system records: policy and identity gone; a system policy of no router.
    await exec('delete from edge_router_policies where id = ?', [tunneler]);
    await exec('delete from identities where id = ?', [tunneler]);
    await exec(
      `insert into edge_router_policies (id, "createdAt", "updatedAt", "isSystem", name, semantic)
       values ('ghost-erp', ?, ?, 1, 'edge-router-ghost-system', 'AnyOf')`,
      [NOW(), NOW()],
    );
    // A dangling @id role entry, a terminator of no router, a missing access marker.
    await exec('insert into "service_policies_serviceRoles" ("ownerId", value, position) values (?, ?, 9)', [
      sp,
      '@no-such-service',
    ]);
    await exec(
      `insert into terminators (id, "createdAt", "updatedAt", "serviceId", "routerId", binding, address)
       values ('term-orphan', ?, ?, ?, 'no-such-router', 'transport', 'tcp:x:1')`,
      [NOW(), NOW(), svc],
    );
    await exec(`delete from access_markers where name = 'router'`);
    // A trigger that keeps the access caches honest (PostgreSQL's is one per table, for every event).
    await exec(
      postgres ? 'drop trigger access_catalog_services on services' : 'drop trigger access_catalog_services_update',
    );
  });
  await damage(async (exec) => {
    // Orphans written past the foreign keys: a session of a gone API session, an API-session certificate of a
    // gone API session, an authenticator and an attribute of a gone identity, a service config of a gone config.
    await exec(
      `insert into sessions (id, "createdAt", "updatedAt", "tokenHash", "apiSessionId", "identityId", "serviceId", type)
       values ('sess-orphan', ?, ?, 'h1', 'gone-api-session', ?, ?, 'Dial')`,
      [NOW(), NOW(), user.id, svc],
    );
    await exec(
      `insert into api_session_certs (id, "createdAt", "updatedAt", "apiSessionId", "identityId", subject, fingerprint,
         certificate, "validFrom", "validTo")
       values ('cert-orphan', ?, ?, 'gone-api-session-2', ?, 'cn', 'fp', 'pem', ?, ?)`,
      [NOW(), NOW(), identity, NOW(), NOW()],
    );
    await exec(
      `insert into authenticators (id, "createdAt", "updatedAt", "identityId", method, username)
       values ('auth-orphan', ?, ?, 'gone-identity', 'updb', 'ghost-user')`,
      [NOW(), NOW()],
    );
    await exec('insert into "identities_roleAttributes" ("ownerId", value, position) values (?, ?, 0)', [
      'gone-identity-2',
      'attr',
    ]);
    await exec('insert into services_configs ("ownerId", value, position) values (?, ?, 0)', [svc, 'gone-config']);
  }, true);

  const expected: RegExp[] = [
    new RegExp(`edge router ${tunneler} is tunneler-enabled but has no Router identity`),
    new RegExp(`edge router ${tunneler} is tunneler-enabled but has no system edge router policy`),
    /system edge router policy ghost-erp .* belongs to no tunneler-enabled edge router/,
    new RegExp(`service-policies ${sp}: serviceRoles names @no-such-service`),
    /terminators term-orphan: routerId names router no-such-router/,
    /access marker router is missing/,
    postgres
      ? /^trigger access_catalog_services on services is missing$/
      : /^trigger access_catalog_services_update on services is missing$/,
    /sessions sess-orphan: apiSessionId names api_sessions gone-api-session,/,
    /api_session_certs cert-orphan: apiSessionId names api_sessions gone-api-session-2/,
    /authenticators auth-orphan: identityId names identities gone-identity,/,
    /identities_roleAttributes ownerId=gone-identity-2, value=attr: ownerId names identities gone-identity-2/,
    new RegExp(`services_configs ownerId=${svc}, value=gone-config: value names configs gone-config`),
  ];
  const found = await check();
  assert.equal(found.error, '');
  for (const re of expected) {
    assert.ok(
      found.results.some((r) => re.test(r.description) && !r.fixed),
      `${re} not among\n${found.results.map((r) => r.description).join('\n')}`,
    );
  }
  assert.equal(await metric('edgectl_store_integrity_ok'), 0);
  assert.equal(await metric('edgectl_store_integrity_findings'), found.results.length);

  // Fix, with a check sent at the same time: one of them runs, the other is refused.
  const snapshotsBefore = snapshots();
  const [fix, second] = await Promise.all([
    admin.post('/database/fix-data-integrity'),
    admin.post('/database/check-data-integrity'),
  ]);
  const statuses = [fix.status, second.status].sort();
  assert.deepEqual(statuses, [202, 429], `${fix.text} ${second.text}`);
  assertError(fix.status === 429 ? fix : second, 429, 'RATE_LIMITED');
  let fixed = await waitResults();
  if (fix.status === 429) {
    // The check won the race: run the fix now.
    assert.equal((await admin.post('/database/fix-data-integrity')).status, 202);
    fixed = await waitResults();
  }
  assert.equal(fixed.fixingErrors, true);
  assert.equal(fixed.error, '');
  assert.ok(fixed.results.length >= expected.length);
  assert.deepEqual(
    fixed.results.filter((r) => !r.fixed),
    [],
  );

  const taken = snapshots().filter((f) => !snapshotsBefore.includes(f));
  assert.equal(taken.length, 1, `snapshots: ${taken.join(', ')}`);
  assert.equal(statSync(join(s.dataDir, taken[0]!)).mode & 0o777, 0o600);

  const clean = await check();
  assert.deepEqual(clean.results, []);
  assert.equal(await metric('edgectl_store_integrity_ok'), 1);

  // The repaired model answers as before.
  const routers = await admin.get(`/edge-router-policies/${erp}/edge-routers`);
  assert.deepEqual(
    routers.body.data.map((r: { id: string }) => r.id),
    [plain],
  );
  // Policy matches are answered from the role lists, so the damage above left them as they were.
  const serpServices = await admin.get(`/service-edge-router-policies/${serp}/services`);
  assert.deepEqual(
    serpServices.body.data.map((r: { id: string }) => r.id),
    [svc],
  );
  assert.deepEqual((await admin.get(`/services/${other}/service-edge-router-policies`)).body.data, []);
  assert.equal((await admin.get(`/identities/${tunneler}`)).body.data.type.id, 'Router');
  assert.equal((await admin.get(`/edge-router-policies/${tunneler}`)).body.data.isSystem, true);
  assert.equal((await admin.get('/edge-router-policies/ghost-erp')).status, 404);
  const granted = await admin.get(`/services/${svc}/service-policies`);
  assert.deepEqual(
    granted.body.data.map((p: { id: string }) => p.id),
    [sp],
  );
});

/** The snapshots in the data dir: the SQLite file's backups beside it, or pg_dump's archives. */
function snapshots(): string[] {
  const name = postgres ? /^edgectl-postgres-\d{8}-\d{6}(-\d+)?\.dump$/ : /^edgectl\.db-\d{8}-\d{6}(-\d+)?$/;
  return readdirSync(s.dataDir).filter((f) => name.test(f));
}

/** How many identities a snapshot holds: the SQLite copy read directly, a dump restored into a new database. */
async function identitiesIn(path: string): Promise<number> {
  if (!postgres) {
    const copy = new Database(path, { readonly: true });
    try {
      return (copy.prepare('select count(*) as n from identities').get() as { n: number }).n;
    } finally {
      copy.close();
    }
  }
  // Named and labelled as the harness's test databases, so a run killed half-way leaves nothing for long.
  const name = `edgectl_t_restore_${process.pid}_${Date.now()}`;
  const server = new pg.Client({ connectionString: PG_SERVER });
  await server.connect();
  try {
    await server.query(createDatabase(name));
    await server.query(`comment on database "${name}" is '${new Date().toISOString()}'`);
    const url = new URL(PG_SERVER);
    url.pathname = `/${name}`;
    execFileSync('pg_restore', ['--no-owner', `--dbname=${url.toString()}`, path]);
    const copy = new pg.Client({ connectionString: url.toString() });
    await copy.connect();
    try {
      return Number((await copy.query('select count(*) as n from identities')).rows[0].n);
    } finally {
      await copy.end();
    }
  } finally {
    await server.query(`drop database if exists "${name}" with (force)`);
    await server.end();
  }
}

test('snapshot: a 0600 copy beside the store, at most once a minute by the controller clock', async () => {
  const first = await admin.post('/database/snapshot');
  assert.equal(first.status, 200, first.text);
  const path: string = first.body.data.path;
  assert.equal(dirname(path), s.dataDir);
  assert.ok(snapshots().includes(path.slice(s.dataDir.length + 1)), `${path} is named as a snapshot`);
  assert.ok(existsSync(path));
  assert.equal(statSync(path).mode & 0o777, 0o600);
  // The copy is a complete store.
  assert.ok((await identitiesIn(path)) >= 1);

  assertError(await admin.post('/database/snapshot'), 429, 'RATE_LIMITED');
  s.clock.advance(59_000);
  assertError(await admin.post('/database/snapshot'), 429, 'RATE_LIMITED');
  s.clock.advance(1_000);
  const again = await admin.post('/database/snapshot');
  assert.equal(again.status, 200, again.text);
  assert.notEqual(again.body.data.path, path);
});

test(
  'PostgreSQL without pg_dump: a snapshot is a clear 501 naming pg_dump, a fix repairs nothing and says why',
  { skip: !postgres && 'SQLite snapshots are its own online backup: no pg_dump is involved' },
  async () => {
    s.clock.advance(60_000);
    await damage((exec) => exec(`delete from access_markers where name = 'catalog'`));
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      const res = await admin.post('/database/snapshot');
      assertError(res, 501, 'SNAPSHOT_UNAVAILABLE');
      assert.match(res.body.error.message, /pg_dump, which is not on the PATH/);
      assert.equal((await admin.post('/database/fix-data-integrity')).status, 202);
      const fixed = await waitResults();
      assert.match(
        fixed.error,
        /the fix starts with a snapshot and none could be taken .*pg_dump.*nothing was repaired/,
      );
      assert.deepEqual(
        fixed.results.map((r) => [r.description, r.fixed]),
        [['access marker catalog is missing (the access caches cannot tell when its data changes)', false]],
      );
    } finally {
      process.env.PATH = path;
    }
    // A failed snapshot does not count against the minute; with pg_dump back, both work.
    assert.equal((await admin.post('/database/snapshot')).status, 200);
    assert.equal((await admin.post('/database/fix-data-integrity')).status, 202);
    assert.deepEqual(
      (await waitResults()).results.map((r) => r.fixed),
      [true],
    );
  },
);

test('database operations are for admins: anonymous and non-admin callers get 401', async () => {
  const { client } = await createUser(s, admin, { api: 'management' });
  const anonymous = s.client('management');
  for (const c of [client, anonymous]) {
    assertError(await c.post('/database/check-data-integrity'), 401, 'UNAUTHORIZED');
    assertError(await c.post('/database/fix-data-integrity'), 401, 'UNAUTHORIZED');
    assertError(await c.get('/database/data-integrity-results'), 401, 'UNAUTHORIZED');
    assertError(await c.post('/database/snapshot'), 401, 'UNAUTHORIZED');
  }
});

test('more than 1000 findings: the first 1000 are kept and tooManyErrors says so; the fix repairs them all', async () => {
  await damage(async (exec) => {
    const ids = Array.from({ length: 1005 }, (_, i) => `gone-service-${String(i).padStart(4, '0')}`);
    await exec(
      `insert into "services_roleAttributes" ("ownerId", value, position) values ${ids.map(() => "(?, 'x', 0)").join(', ')}`,
      ids,
    );
  }, true);
  const many = await check();
  assert.equal(many.tooManyErrors, true);
  assert.equal(many.results.length, 1000);
  assert.equal((await admin.post('/database/fix-data-integrity')).status, 202);
  const fixed = await waitResults();
  assert.equal(fixed.tooManyErrors, true);
  assert.ok(fixed.results.every((r) => r.fixed));
  const clean = await check();
  assert.equal(clean.tooManyErrors, false);
  assert.deepEqual(clean.results, []);
});

test('foreign logic written into the live store is found; the fix drops it and restores what it altered or removed', async () => {
  if (postgres) await damage((exec) => exec(POSTGRES_FOREIGN_LOGIC));
  else {
    const db = new Database(join(s.dataDir, 'edgectl.db'));
    try {
      injectForeignLogic(db);
    } finally {
      db.close();
    }
  }
  const isAdmin = async (id: string) => (await admin.get(`/identities/${id}`)).body.data.isAdmin;
  // While the foreign trigger stands, every new identity is an admin.
  assert.equal(await isAdmin(await createIdentity(admin)), true);

  const found = await check();
  assert.equal(found.error, '');
  for (const description of postgres
    ? POSTGRES_DESCRIPTIONS
    : [FOREIGN_DESCRIPTION, ALTERED_DESCRIPTION, MISSING_DESCRIPTION]) {
    assert.ok(
      found.results.some((r) => r.description === description && !r.fixed),
      `${description} not among\n${found.results.map((r) => r.description).join('\n')}`,
    );
  }
  assert.equal((await admin.post('/database/fix-data-integrity')).status, 202);
  const fixed = await waitResults();
  assert.equal(fixed.error, '');
  assert.deepEqual(
    fixed.results.filter((r) => !r.fixed),
    [],
  );
  assert.deepEqual((await check()).results, []);
  assert.equal(await isAdmin(await createIdentity(admin)), false);
});

test('a scan runs in the background: the request is answered at once, others are served, a second start gets 429', async () => {
  // Many policies: the scan compares each policy side on its own turn of the event loop.
  await damage(async (exec) => {
    const ids = Array.from({ length: 400 }, (_, i) => `bulk-sp-${i}`);
    await exec(
      `insert into service_policies (id, "createdAt", "updatedAt", name, type, semantic)
       values ${ids.map(() => "(?, ?, ?, ?, 'Dial', 'AnyOf')").join(', ')}`,
      ids.flatMap((id) => [id, NOW(), NOW(), id]),
    );
  });
  const started = await admin.post('/database/check-data-integrity');
  assert.equal(started.status, 202, started.text);
  // Answered while the scan runs (a scan inside the request would have ended before the 202 went out).
  const during = await admin.get('/database/data-integrity-results');
  assert.equal(during.status, 200);
  assert.equal(during.body.data.inProgress, true);
  assert.equal(during.body.data.endTime, '0001-01-01T00:00:00.000Z');
  assert.deepEqual(
    checkResponse('management', '/database/data-integrity-results', 'GET', 200, during.body),
    [],
    during.text,
  );
  assertError(await admin.post('/database/check-data-integrity'), 429, 'RATE_LIMITED');
  assertError(await admin.post('/database/fix-data-integrity'), 429, 'RATE_LIMITED');
  assert.equal((await admin.get('/identities?limit=1')).status, 200, 'other requests are served meanwhile');
  assert.equal((await admin.get('/database/data-integrity-results')).body.data.inProgress, true);

  const done = await waitResults();
  assert.equal(done.fixingErrors, false, 'the refused fix did not replace the running check');
  assert.equal(done.error, '');
  assert.deepEqual(done.results, []);
});
