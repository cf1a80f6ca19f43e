/**
 * `edgectl jwt-signer create|list|show|update|delete` and `edgectl login --jwt FILE|-`, against a real controller.
 * Subtests run in order and build on each other.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KeyObject } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ADMIN, createIdentity, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { edgectl, edgectlWithStdin, type Run } from '../harness/cli.js';
import { newCertSigner, signJwt } from '../harness/jwt-issuer.js';

const ok = (r: Run, what: string) => assert.equal(r.code, 0, `${what}: exit ${r.code}\n${r.stderr}${r.stdout}`);

describe('edgectl jwt-signer and login --jwt', () => {
  let server: TestServer;
  let admin: ApiClient;
  let tmp: string;
  let adminCfg: string;
  let userCfg: string;
  let caFile: string;
  let certFile: string;
  let key: KeyObject;
  let identityId = '';
  let signerId = '';
  const issuer = 'https://idp.cli.example';

  before(async () => {
    server = await startTestServer();
    admin = await server.admin();
    tmp = mkdtempSync(join(tmpdir(), 'edgectl-jwt-signer-'));
    adminCfg = join(tmp, 'admin');
    userCfg = join(tmp, 'user');
    caFile = join(tmp, 'ca.pem');
    writeFileSync(caFile, server.ca);
    const signer = await newCertSigner('cli idp');
    key = signer.key;
    certFile = join(tmp, 'signer.pem');
    writeFileSync(certFile, signer.certPem);
    identityId = await createIdentity(admin, { name: 'jwt-user' });
    ok(
      await edgectl(adminCfg, 'login', server.url, '-u', ADMIN.username, '-p', ADMIN.password, '--ca', caFile),
      'login',
    );
  });

  after(async () => {
    await server?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('creates a certificate signer from a file, enabled and matching identity ids by default', async () => {
    const r = await edgectl(
      adminCfg,
      'jwt-signer',
      'create',
      'cli-idp',
      issuer,
      '-a',
      'edge',
      '-p',
      certFile,
      '-k',
      'kid-1',
      '-o',
      'id',
    );
    ok(r, 'create');
    signerId = r.stdout.trim();
    const d = (await admin.get(`/external-jwt-signers/${signerId}`)).body.data;
    assert.equal(d.enabled, true);
    assert.equal(d.useExternalId, false, 'the CLI default is the API default');
    assert.equal(d.claimsProperty, 'sub');
    assert.equal(d.kid, 'kid-1');
    assert.equal(d.commonName, 'cli idp');
  });

  it('lists and shows signers, and refuses a create without a key source', async () => {
    const list = await edgectl(adminCfg, 'jwt-signer', 'list');
    ok(list, 'list');
    assert.match(list.stdout, /cli-idp/);
    assert.match(list.stdout, /https:\/\/idp\.cli\.example/);
    const show = await edgectl(adminCfg, 'jwt-signer', 'show', 'cli-idp', '-o', 'json');
    ok(show, 'show');
    assert.equal(JSON.parse(show.stdout).data.id, signerId);
    const bad = await edgectl(adminCfg, 'jwt-signer', 'create', 'no-key', 'https://other.example', '-a', 'edge');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /certPem/);
  });

  it('logs in with --jwt FILE and with --jwt - (standard input)', async () => {
    const now = Math.floor(Date.now() / 1000);
    const jwt = await signJwt(key, { iss: issuer, aud: 'edge', kid: 'kid-1', claims: { sub: identityId, iat: now } });
    const jwtFile = join(tmp, 'token.jwt');
    writeFileSync(jwtFile, jwt + '\n');
    const byFile = await edgectl(userCfg, 'login', server.url, '--jwt', jwtFile, '--ca', caFile);
    ok(byFile, 'login --jwt FILE');
    assert.match(byFile.stdout, /as jwt-user with an external JWT/);
    const whoami = await edgectl(userCfg, 'whoami');
    ok(whoami, 'whoami');
    assert.match(whoami.stdout, /ext-jwt/);
    const byStdin = await edgectlWithStdin(userCfg, jwt, 'login', server.url, '--jwt', '-', '--ca', caFile);
    ok(byStdin, 'login --jwt -');
    const refused = await edgectlWithStdin(
      userCfg,
      jwt.slice(0, -4) + 'AAAA',
      'login',
      server.url,
      '--jwt',
      '-',
      '--ca',
      caFile,
    );
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /INVALID_AUTH/);
    const usage = await edgectl(userCfg, 'login', server.url, '--jwt', jwtFile, '-u', 'x', '-p', 'y', '--ca', caFile);
    assert.equal(usage.code, 2);
    const notJwt = join(tmp, 'not.jwt');
    writeFileSync(notJwt, 'hello');
    assert.equal((await edgectl(userCfg, 'login', server.url, '--jwt', notJwt, '--ca', caFile)).code, 2);
  });

  it('names signers in auth policies by name', async () => {
    const r = await edgectl(
      adminCfg,
      'auth-policy',
      'create',
      'needs-idp',
      '--require-ext-jwt-signer',
      'cli-idp',
      '--ext-jwt-allowed-signers',
      'cli-idp',
      '-o',
      'id',
    );
    ok(r, 'auth-policy create');
    const p = (await admin.get(`/auth-policies/${r.stdout.trim()}`)).body.data;
    assert.equal(p.secondary.requireExtJwtSigner, signerId);
    assert.deepEqual(p.primary.extJwt.allowedSigners, [signerId]);
    const blocked = await edgectl(adminCfg, 'jwt-signer', 'delete', 'cli-idp', '--yes');
    assert.equal(blocked.code, 1);
    assert.match(blocked.stderr, /CAN_NOT_DELETE_REFERENCED_ENTITY/);
    ok(await edgectl(adminCfg, 'auth-policy', 'delete', 'needs-idp', '--yes'), 'auth-policy delete');
  });

  it('updates and deletes a signer by name', async () => {
    ok(await edgectl(adminCfg, 'jwt-signer', 'update', 'cli-idp', '--no-enabled', '--use-external-id'), 'update');
    const d = (await admin.get(`/external-jwt-signers/${signerId}`)).body.data;
    assert.equal(d.enabled, false);
    assert.equal(d.useExternalId, true);
    ok(await edgectl(adminCfg, 'jwt-signer', 'delete', 'cli-idp', '--yes'), 'delete');
    assert.equal((await admin.get(`/external-jwt-signers/${signerId}`)).status, 404);
  });
});
