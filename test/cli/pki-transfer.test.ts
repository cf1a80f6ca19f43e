/**
 * `edgectl pki export` and `edgectl pki import` move a SQLite controller's PKI and token key into a PostgreSQL
 * store (docs/decisions.md, "Shared controller secrets"): the export is a file of mode 0600 sealed under the
 * master key, the import refuses another master key and a store that holds a PKI already (unless `--replace`),
 * and a controller started on the store afterwards serves the old controller's CA, signs with its server key
 * (its enrollment JWTs still verify) and derives the same tokens.
 */
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { edgectlEnv, type Run } from '../harness/cli.js';
import { freshDatabase, postgresSkip } from '../harness/pg.js';
import { scratch } from '../harness/processes.js';
import { createIdentity, startTestServer, type TestServer } from '../harness/server.js';
import { verifyEnrollmentJwt } from '../../src/pki/index.js';

const skip = await postgresSkip();
const tmp = scratch('edgectl-pki-transfer-');

const KEY = 'cluster-master-key-0123456789-abcdefghij';
const OTHER_KEY = 'some-other-master-key-0123456789-abcdefg';

describe('edgectl pki export / import', { skip }, () => {
  let single: TestServer;
  let work: string;
  let file: string;
  let jwt: string;
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  const pki = (env: Record<string, string>, ...args: string[]): Promise<Run> =>
    edgectlEnv(
      join(work, 'config'),
      { EDGECTL_CONFIG: '', EDGECTL_DB_URL: '', EDGECTL_MASTER_KEY: '', ...env },
      'pki',
      ...args,
    );

  before(async () => {
    work = tmp.tempDir();
    file = join(work, 'controller.pki');
    single = await startTestServer();
    const admin = await single.admin();
    const id = await createIdentity(admin, { enrollment: { ott: true } });
    jwt = (await admin.get(`/identities/${id}`)).body.data.enrollment.ott.jwt;
    database = await freshDatabase();
  });
  after(async () => {
    await single?.close();
    await database?.drop();
  });

  it('export is refused while the controller runs, and without a master key', async () => {
    const running = await pki({ EDGECTL_MASTER_KEY: KEY }, 'export', '--data-dir', single.dataDir, '--out', file);
    assert.equal(running.code, 1);
    assert.match(running.stderr, new RegExp(`in use by process ${process.pid}`));
    await single.daemon.close();
    const keyless = await pki({}, 'export', '--data-dir', single.dataDir, '--out', file);
    assert.equal(keyless.code, 2);
    assert.match(keyless.stderr, /EDGECTL_MASTER_KEY .*store\.masterKey.*store\.masterKeyFile/);
  });

  it('export writes a file of mode 0600 with every key sealed, and never over a file', async () => {
    const r = await pki({ EDGECTL_MASTER_KEY: KEY }, 'export', '--data-dir', single.dataDir, '--out', file);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`root CA ${single.daemon.pki.root.fingerprint}`));
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const text = readFileSync(file, 'utf8');
    const exported = JSON.parse(text);
    assert.equal(exported.format, 'edgectl-controller-secrets');
    assert.equal(exported.rootFingerprint, single.daemon.pki.root.fingerprint);
    assert.deepEqual(Object.keys(exported.secrets).sort(), [
      'pki/intermediate-ca.cert.pem',
      'pki/intermediate-ca.key.pem',
      'pki/root-ca.cert.pem',
      'pki/root-ca.key.pem',
      'pki/server.cert.pem',
      'pki/server.key.pem',
      'token.key',
    ]);
    assert.ok(!text.includes('PRIVATE KEY'));
    assert.ok(!text.includes(readFileSync(join(single.dataDir, 'token.key'), 'utf8').trim()));
    assert.ok(!text.includes(KEY));

    const again = await pki({ EDGECTL_MASTER_KEY: KEY }, 'export', '--data-dir', single.dataDir, '--out', file);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /exists/);
    assert.equal(readFileSync(file, 'utf8'), text, 'the file is left as it was');
  });

  it('import refuses another master key, then stores the secrets; run again it has nothing to do', async () => {
    const wrong = await pki({ EDGECTL_MASTER_KEY: OTHER_KEY }, 'import', file, '--db', database.url);
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /does not open with this master key/);
    assert.ok(!wrong.stderr.includes(OTHER_KEY));

    const r = await pki({ EDGECTL_MASTER_KEY: KEY, EDGECTL_DB_URL: database.url }, 'import', file);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /imported the PKI/);
    const again = await pki({ EDGECTL_MASTER_KEY: KEY }, 'import', file, '--db', database.url);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /nothing to do/);
  });

  it('a controller on the store then serves the old CA, signs with the old server key and derives the same tokens', async () => {
    const replica = await startTestServer({ db: database.url, masterKey: KEY });
    try {
      assert.equal(replica.ca, single.ca);
      assert.equal(replica.daemon.pki.serverKeyPem, single.daemon.pki.serverKeyPem);
      // An enrollment JWT the single controller handed out checks against the replica's server certificate.
      await verifyEnrollmentJwt(jwt, replica.daemon.pki.serverCertPem);
      assert.equal(
        replica.daemon.ctx.tokens.token('api-session', 'some-id'),
        single.daemon.ctx.tokens.token('api-session', 'some-id'),
      );
    } finally {
      await replica.close();
    }
  });

  it('import refuses a store holding another PKI unless told to replace it', async () => {
    const other = await startTestServer();
    const otherFile = join(work, 'other.pki');
    try {
      await other.daemon.close();
      const exported = await pki(
        { EDGECTL_MASTER_KEY: KEY },
        'export',
        '--data-dir',
        other.dataDir,
        '--out',
        otherFile,
      );
      assert.equal(exported.code, 0, exported.stderr);
    } finally {
      await other.close();
    }
    const refused = await pki({ EDGECTL_MASTER_KEY: KEY }, 'import', otherFile, '--db', database.url);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /holds a controller PKI already .*--replace/);
    const replaced = await pki({ EDGECTL_MASTER_KEY: KEY }, 'import', otherFile, '--db', database.url, '--replace');
    assert.equal(replaced.code, 0, replaced.stderr);
    assert.match(replaced.stdout, /replacing what it held/);
  });

  it('import refuses a file that is not an export', async () => {
    const junk = join(work, 'junk.pki');
    writeFileSync(junk, '{"hello": 1}');
    const r = await pki({ EDGECTL_MASTER_KEY: KEY }, 'import', junk, '--db', database.url);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /is not a file written by `edgectl pki export`/);
  });
});
