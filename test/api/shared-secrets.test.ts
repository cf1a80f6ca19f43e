/**
 * Controllers started on one PostgreSQL database with the same master key, each with its own data dir and
 * port, serve one network with no other set-up (docs/decisions.md, "Shared controller secrets"): the first one
 * creates the PKI, the token key and the default admin, sealed in the database; the others use them. Clients
 * that trust the CA bundle accept every replica, an API session made on one works on the other, and an
 * enrollment JWT from one enrolls through the other. A wrong master key is refused at start and changes
 * nothing. The tests open databases of their own.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { join } from 'node:path';
import { sql } from 'kysely';
import { unique } from '../harness/assert.js';
import { request } from '../harness/http.js';
import { freshDatabase, postgresSkip, testStoreKind } from '../harness/pg.js';
import {
  ADMIN,
  createIdentity,
  createUser,
  startTestServer,
  storedBytes,
  TEST_MASTER_KEY,
  type ApiClient,
  type TestServer,
} from '../harness/server.js';
import {
  certificateCoversHost,
  generateKeyAndCsr,
  parseCertificate,
  verifyEnrollmentJwt,
} from '../../src/pki/index.js';

/** Its databases are its own whatever the pass; it runs once, in the PostgreSQL pass of the API tests. */
const skip =
  testStoreKind() === 'postgres' ? await postgresSkip() : 'runs in the PostgreSQL pass (EDGECTL_TEST_STORE=postgres)';

type Database = Awaited<ReturnType<typeof freshDatabase>>;

const secretRows = async (server: TestServer) =>
  (
    await sql<{
      name: string;
      ciphertext: string;
    }>`select name, ciphertext from controller_secrets order by name`.execute(server.daemon.store.db)
  ).rows;

/** Completes a TLS handshake with `port`, asking for `servername` and trusting only `ca`; answers whether it was. */
const tlsAccepted = (port: number, servername: string, ca: string): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, servername, ca }, () => {
      resolve(socket.authorized);
      socket.end();
    });
    socket.on('error', () => resolve(false));
  });

describe('two controllers on one database with one master key', { skip }, () => {
  let database: Database;
  let a: TestServer;
  let b: TestServer;
  let adminA: ApiClient;

  before(async () => {
    database = await freshDatabase();
    // Started at the same moment: one of them creates what both use.
    [a, b] = await Promise.all([startTestServer({ db: database.url }), startTestServer({ db: database.url })]);
    adminA = await a.admin();
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await database?.drop();
  });

  test('serve the same CA bundle, and present server certificates of one key that the bundle vouches for', async () => {
    assert.equal(b.ca, a.ca);
    const cacerts = await Promise.all(
      [a, b].map((s) =>
        s.request('GET', '/edge/client/v1/.well-known/est/cacerts', { headers: { accept: 'application/pkcs7-mime' } }),
      ),
    );
    assert.equal(cacerts[0]!.status, 200);
    assert.equal(cacerts[1]!.text, cacerts[0]!.text);
    assert.equal(b.daemon.pki.serverKeyPem, a.daemon.pki.serverKeyPem);
    for (const s of [a, b]) {
      // A client that trusts only the bundle it got from the first replica accepts every replica.
      const res = await request(a.ca, 'GET', `${s.url}/version`);
      assert.equal(res.status, 200);
      assert.ok(certificateCoversHost(s.daemon.pki.server, '127.0.0.1'));
    }
  });

  test('keep the PKI and the token key in the database, sealed, and neither in their data dirs', async () => {
    const rows = await secretRows(a);
    assert.deepEqual(
      rows.map((r) => r.name),
      [
        'pki/intermediate-ca.cert.pem',
        'pki/intermediate-ca.key.pem',
        'pki/root-ca.cert.pem',
        'pki/root-ca.key.pem',
        'pki/server.cert.pem',
        'pki/server.key.pem',
        'token.key',
      ],
    );
    for (const r of rows) assert.match(r.ciphertext, /^edgectl-sealed-v1\./, r.name);
    const everything = [...(await storedBytes(a)).values()].map((bytes) => bytes.toString('utf8')).join('\n');
    assert.ok(!everything.includes('PRIVATE KEY'), 'no private key in clear');
    assert.ok(!everything.includes(TEST_MASTER_KEY), 'the master key is not stored');
    for (const s of [a, b]) {
      assert.equal(existsSync(join(s.dataDir, 'token.key')), false);
      assert.equal(existsSync(join(s.dataDir, 'pki', 'root-ca.key.pem')), false);
      // The public CA bundle is there for operators, as beside a SQLite store.
      assert.equal(readFileSync(join(s.dataDir, 'pki', 'ca-bundle.pem'), 'utf8'), a.ca);
    }
  });

  test('have one default admin, and an API session made on one works on the other', async () => {
    const admins = await sql<{ n: number }>`select count(*) as n from identities where "isDefaultAdmin" = 1`.execute(
      a.daemon.store.db,
    );
    assert.equal(admins.rows[0]!.n, 1);
    const adminB = b.client('management').withToken(adminA.token);
    const me = await adminB.get('/current-identity');
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.data.isDefaultAdmin, true);
    const loggedInOnB = b.client('management');
    assert.equal((await loggedInOnB.login(ADMIN.username, ADMIN.password)).status, 200);
    assert.equal((await a.client('management').withToken(loggedInOnB.token).get('/identities')).status, 200);

    const user = await createUser(a, adminA);
    const onB = b.client('client').withToken(user.client.token);
    const res = await onB.get('/current-api-session');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.data.token, user.client.token, 'the other replica shows the same token again');
  });

  test('an enrollment JWT issued by one enrolls through the other', async () => {
    const id = await createIdentity(adminA, { name: unique('enrolled'), enrollment: { ott: true } });
    const { jwt, token } = (await adminA.get(`/identities/${id}`)).body.data.enrollment.ott;
    // What a client checks first: the JWT against the server certificate of the replica it reaches.
    const claims = await verifyEnrollmentJwt(jwt, b.daemon.pki.serverCertPem);
    assert.equal(claims.jti, token);
    assert.equal(claims.sub, id);
    const { privateKeyPem, csrPem } = await generateKeyAndCsr({ commonName: unique('enrolled') });
    const enrolled = await b.request('POST', `/edge/client/v1/enroll/ott?token=${token}`, {
      raw: csrPem,
      contentType: 'application/pkcs10',
      headers: { accept: 'application/x-x509-user-cert' },
    });
    assert.equal(enrolled.status, 200, enrolled.text);
    assert.ok(a.daemon.pki.verifyClientCertificate(enrolled.text).ok, 'issued by the shared CA');
    // The certificate authenticates on the first replica too.
    const login = await a.request('POST', '/edge/client/v1/authenticate?method=cert', {
      cert: enrolled.text,
      key: privateKeyPem,
    });
    assert.equal(login.status, 200, login.text);
  });

  test('a controller given another master key is refused at start, and nothing is changed', async () => {
    const before = await secretRows(a);
    await assert.rejects(
      startTestServer({ db: database.url, masterKey: 'another-master-key-of-forty-characters-00' }),
      (e: Error) =>
        /the master key does not open the controller secrets stored in the PostgreSQL store/.test(e.message) &&
        !e.message.includes('another-master-key'),
    );
    assert.deepEqual(await secretRows(a), before);
    // The replicas running are untouched.
    assert.equal((await b.client('management').withToken(adminA.token).get('/current-identity')).status, 200);
  });
});

describe('three controllers started at once on an empty database', { skip }, () => {
  let database: Database;
  let replicas: TestServer[] = [];

  before(async () => {
    database = await freshDatabase();
    const advertised = 'edge:\n  api:\n    address: ctrl.cluster.test\n';
    replicas = await Promise.all([1, 2, 3].map(() => startTestServer({ db: database.url, yaml: advertised })));
  });
  after(async () => {
    for (const r of replicas) await r.close();
    await database?.drop();
  });

  test('end with one PKI, one token key and one default admin', async () => {
    const roots = new Set(replicas.map((r) => r.daemon.pki.root.fingerprint));
    assert.equal(roots.size, 1);
    assert.equal(new Set(replicas.map((r) => r.daemon.pki.serverKeyPem)).size, 1);
    const db = replicas[0]!.daemon.store.db;
    const counts = await sql<{ secrets: number; admins: number }>`select
      (select count(*) from controller_secrets) as secrets,
      (select count(*) from identities where "isDefaultAdmin" = 1) as admins`.execute(db);
    assert.deepEqual(counts.rows[0], { secrets: 7, admins: 1 });
    // A token made by one is shown alike by every other: one token key.
    const admin = await replicas[0]!.admin();
    for (const r of replicas.slice(1))
      assert.equal((await r.client('management').withToken(admin.token).get('/current-identity')).status, 200);
  });

  test("each replica's server certificate covers the shared advertised address, for clients that trust the bundle", async () => {
    for (const r of replicas) {
      const cert = parseCertificate(r.daemon.pki.serverCertPem);
      assert.ok(certificateCoversHost(cert, 'ctrl.cluster.test'));
      assert.ok(certificateCoversHost(cert, '127.0.0.1'));
      assert.ok(await tlsAccepted(r.daemon.port, 'ctrl.cluster.test', replicas[0]!.ca), `replica on ${r.daemon.port}`);
    }
  });
});

describe('the scrypt cost of the sealed secrets', { skip }, () => {
  const databases: Database[] = [];
  after(async () => {
    for (const d of databases) await d.drop();
  });

  test('a controller seals at N = 2^15, r = 8, p = 1; the test servers at the least cost a value may name', async () => {
    for (const [sealCost, params] of [
      ['production', 'scrypt-15-8-1'],
      ['test', 'scrypt-10-8-1'],
    ] as const) {
      const database = await freshDatabase();
      databases.push(database);
      const server = await startTestServer({ db: database.url, sealCost });
      try {
        const rows = await secretRows(server);
        assert.equal(rows.length, 7);
        for (const r of rows)
          assert.ok(r.ciphertext.startsWith(`edgectl-sealed-v1.${params}.`), `${sealCost}: ${r.name}`);
      } finally {
        await server.close();
      }
    }
  });
});
