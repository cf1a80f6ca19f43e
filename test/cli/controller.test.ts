/**
 * `edgectl controller list`, `edgectl controller-setting …` (with `effective`), `edgectl authenticator
 * request-extend` and the external JWT signer's enrollment flags, against a real controller. Subtests run in order.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { edgectl, type Run } from '../harness/cli.js';
import { newCertSigner } from '../harness/jwt-issuer.js';
import { generateKeyAndCsr } from '../../src/pki/index.js';

const ok = (r: Run, what: string) => assert.equal(r.code, 0, `${what}: exit ${r.code}\n${r.stderr}${r.stdout}`);

describe('edgectl controller, controller-setting, authenticator request-extend', () => {
  let server: TestServer;
  let admin: ApiClient;
  let tmp: string;
  let cfg: string;

  before(async () => {
    server = await startTestServer();
    admin = await server.admin();
    tmp = mkdtempSync(join(tmpdir(), 'edgectl-controller-'));
    cfg = join(tmp, 'admin');
    const caFile = join(tmp, 'ca.pem');
    writeFileSync(caFile, server.ca);
    ok(await edgectl(cfg, 'login', server.url, '-u', ADMIN.username, '-p', ADMIN.password, '--ca', caFile), 'login');
  });
  after(async () => {
    await server?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('lists this controller, online', async () => {
    const table = await edgectl(cfg, 'controller', 'list');
    ok(table, 'list');
    assert.match(table.stdout, new RegExp(server.daemon.controllerId));
    assert.match(table.stdout, /results: 1-1 of 1/);
    const json = await edgectl(cfg, 'controller', 'list', '-j');
    ok(json, 'list -j');
    const [c] = JSON.parse(json.stdout).data;
    assert.equal(c.isOnline, true);
  });

  it('creates the global setting and one for this controller; effective merges them; update and delete', async () => {
    ok(
      await edgectl(cfg, 'controller-setting', 'create', 'global', '--redirect-uris', 'https://g.example/cb'),
      'create',
    );
    const id = server.daemon.controllerId;
    ok(await edgectl(cfg, 'controller-setting', 'create', id, '--redirect-uris', 'https://c.example/cb'), 'create own');
    const eff = await edgectl(cfg, 'controller-setting', 'effective', id, '-j');
    ok(eff, 'effective');
    assert.deepEqual(JSON.parse(eff.stdout).data.effective.oidc.redirectUris, [
      'https://g.example/cb',
      'https://c.example/cb',
    ]);
    const text = await edgectl(cfg, 'controller-setting', 'effective', id);
    assert.match(text.stdout, /effective redirect URIs: https:\/\/g\.example\/cb https:\/\/c\.example\/cb/);
    ok(await edgectl(cfg, 'controller-setting', 'update', id, '--post-logout-uris', 'https://c.example/bye'), 'update');
    const shown = await edgectl(cfg, 'controller-setting', 'show', id, '-j');
    assert.deepEqual(JSON.parse(shown.stdout).data.oidc, {
      redirectUris: ['https://c.example/cb'],
      postLogoutUris: ['https://c.example/bye'],
    });
    ok(await edgectl(cfg, 'controller-setting', 'delete', id), 'delete');
    const list = await edgectl(cfg, 'controller-setting', 'list', '-j');
    assert.deepEqual(
      JSON.parse(list.stdout).data.map((s: { controllerId: string }) => s.controllerId),
      ['global'],
    );
    const bad = await edgectl(cfg, 'controller-setting', 'create', 'x', '--redirect-uris', 'relative/path');
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /absolute/);
  });

  it('asks a certificate authenticator to be extended with a new key', async () => {
    const id = (
      await admin.post('/identities', { name: 'cli-extend', type: 'User', isAdmin: false, enrollment: { ott: true } })
    ).body.data.id;
    const token = (await admin.get(`/identities/${id}`)).body.data.enrollment.ott.token;
    const { csrPem } = await generateKeyAndCsr({ commonName: 'cli-extend' });
    const enrolled = await server.request('POST', `/edge/client/v1/enroll/ott?token=${token}`, {
      raw: csrPem,
      contentType: 'application/pkcs10',
    });
    assert.equal(enrolled.status, 200, enrolled.text);
    const authId = (await admin.get(`/identities/${id}`)).body.data.authenticators.cert.id;
    ok(await edgectl(cfg, 'authenticator', 'request-extend', authId, '--roll-keys'), 'request-extend');
    const detail = (await admin.get(`/authenticators/${authId}`)).body.data;
    assert.equal(detail.isExtendRequested, true);
    assert.equal(detail.isKeyRollRequested, true);
  });

  it("sets an external JWT signer's enrollment fields from flags", async () => {
    const certFile = join(tmp, 'signer.pem');
    writeFileSync(certFile, (await newCertSigner('cli enroll idp')).certPem);
    const r = await edgectl(
      cfg,
      'jwt-signer',
      'create',
      'cli-enroll-idp',
      'https://idp.enroll.example',
      '-a',
      'aud',
      '-p',
      certFile,
      '--enroll-to-cert-enabled',
      '--enroll-name-claims-selector',
      '/name',
      '--enroll-auth-policy-id',
      'Default',
      '-j',
    );
    ok(r, 'create');
    const d = (await admin.get(`/external-jwt-signers/${JSON.parse(r.stdout).data.id}`)).body.data;
    assert.equal(d.enrollToCertEnabled, true);
    assert.equal(d.enrollToTokenEnabled, false);
    assert.equal(d.enrollNameClaimsSelector, '/name');
    assert.equal(d.enrollAuthPolicyId, 'default');
  });
});
