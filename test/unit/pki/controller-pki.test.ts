import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:https';
import type { RequestOptions } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { describe, it } from 'node:test';
import {
  certificateCoversHost,
  generateKeyAndCsr,
  INTERMEDIATE_RENEW_BEFORE_MS,
  isIssuedBy,
  isPkiError,
  loadOrCreateControllerPki,
  loadOrCreateControllerPkiIn,
  parseCertificate,
  PKI_FILES,
  PkiMemory,
  verifyChain,
} from '../../../src/pki/index.js';
import type { ControllerPki } from '../../../src/pki/index.js';
import { tempDir } from './helpers.js';

const mode = (p: string): number => statSync(p).mode & 0o777;

describe('controller PKI on disk', () => {
  it('is created on first start and reused, with the same fingerprints, on the next', async () => {
    const dir = join(tempDir(), 'pki');
    const first = await loadOrCreateControllerPki(dir, { hosts: ['ctrl.example.test'] });
    assert.deepEqual(first.changes, { root: 'created', intermediate: 'created', server: 'created' });
    const second = await loadOrCreateControllerPki(dir, { hosts: ['ctrl.example.test'] });
    assert.deepEqual(second.changes, { root: 'loaded', intermediate: 'loaded', server: 'loaded' });
    assert.equal(second.root.fingerprint, first.root.fingerprint);
    assert.equal(second.intermediate.certificate.fingerprint, first.intermediate.certificate.fingerprint);
    assert.equal(second.server.fingerprint, first.server.fingerprint);
    assert.equal(second.serverKeyPem, first.serverKeyPem);
    assert.equal(second.caBundlePem, first.caBundlePem);
  });

  it('keeps private keys 0600 in a 0700 directory, and tightens looser key files', async () => {
    const dir = join(tempDir(), 'nested', 'pki');
    await loadOrCreateControllerPki(dir, { hosts: [] });
    assert.equal(mode(dir), 0o700);
    for (const key of [PKI_FILES.rootKey, PKI_FILES.intermediateKey, PKI_FILES.serverKey]) {
      assert.equal(mode(join(dir, key)), 0o600, key);
    }
    assert.equal(mode(join(dir, PKI_FILES.rootCert)), 0o644);
    chmodSync(join(dir, PKI_FILES.serverKey), 0o644);
    chmodSync(dir, 0o755);
    await loadOrCreateControllerPki(dir, { hosts: [] });
    assert.equal(mode(join(dir, PKI_FILES.serverKey)), 0o600);
    assert.equal(mode(dir), 0o700);
  });

  it('server certificate covers the listen host plus localhost, 127.0.0.1 and ::1', async () => {
    const pki = await loadOrCreateControllerPki(tempDir(), {
      hosts: ['Ctrl.Example.Test', '10.20.30.40', '[fd00::1]', '0.0.0.0'],
    });
    const cert = parseCertificate(pki.serverCertPem);
    for (const host of ['ctrl.example.test', '10.20.30.40', 'fd00::1', 'localhost', '127.0.0.1', '::1', '[::1]']) {
      assert.ok(certificateCoversHost(cert, host), host);
    }
    assert.equal(certificateCoversHost(cert, '0.0.0.0'), false);
    assert.equal(cert.commonName, 'ctrl.example.test');
    assert.deepEqual(cert.sans.dns, ['ctrl.example.test', 'localhost']);
    assert.ok(isIssuedBy(cert, pki.intermediate.certificate));
    assert.ok(verifyChain(cert, { intermediates: [pki.intermediateCertPem], trusted: [pki.rootCertPem] }).ok);
    assert.deepEqual(parseCertificate(pki.serverCertChainPem).fingerprint, cert.fingerprint);
    assert.equal(readFileSync(join(pki.dir, PKI_FILES.caBundle), 'utf8'), pki.caBundlePem);
  });

  it('re-issues only the server certificate when the listen host changes', async () => {
    const dir = tempDir();
    const first = await loadOrCreateControllerPki(dir, { hosts: ['a.example.test'] });
    const same = await loadOrCreateControllerPki(dir, { hosts: ['localhost', 'A.example.test'] });
    assert.equal(same.changes.server, 'loaded');
    const moved = await loadOrCreateControllerPki(dir, { hosts: ['b.example.test'] });
    assert.deepEqual(moved.changes, {
      root: 'loaded',
      intermediate: 'loaded',
      server: 'reissued',
      serverReason: 'hosts-not-covered',
    });
    assert.equal(moved.root.fingerprint, first.root.fingerprint);
    assert.equal(moved.intermediate.certificate.fingerprint, first.intermediate.certificate.fingerprint);
    assert.notEqual(moved.server.fingerprint, first.server.fingerprint);
    assert.ok(certificateCoversHost(moved.server, 'b.example.test'));
    assert.ok(isIssuedBy(moved.server, first.intermediate.certificate));
    const again = await loadOrCreateControllerPki(dir, { hosts: ['b.example.test'] });
    assert.equal(again.server.fingerprint, moved.server.fingerprint);
  });

  it('re-issues a server certificate whose key file does not match', async () => {
    const dir = tempDir();
    await loadOrCreateControllerPki(dir, { hosts: [] });
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    writeFileSync(join(dir, PKI_FILES.serverKey), privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
    const pki = await loadOrCreateControllerPki(dir, { hosts: [] });
    assert.equal(pki.changes.serverReason, 'key-mismatch');
    writeFileSync(join(dir, PKI_FILES.serverCert), 'garbage');
    const again = await loadOrCreateControllerPki(dir, { hosts: [] });
    assert.equal(again.changes.serverReason, 'unreadable');
    assert.equal(again.changes.intermediate, 'loaded');
  });

  it('renews an intermediate close to expiry with the same key, so issued certificates stay valid', async () => {
    const dir = tempDir();
    const pki = await loadOrCreateControllerPki(dir, { hosts: [] });
    const { csrPem } = await generateKeyAndCsr({ commonName: 'old-client' });
    const client = await pki.signClientCsr(csrPem, { id: 'client1' });
    const later = new Date(pki.intermediate.certificate.notAfter.getTime() - INTERMEDIATE_RENEW_BEFORE_MS / 2);
    const renewed = await loadOrCreateControllerPki(dir, { hosts: [], now: later });
    assert.equal(renewed.changes.intermediate, 'renewed');
    assert.equal(renewed.changes.server, 'reissued');
    assert.notEqual(renewed.intermediate.certificate.fingerprint, pki.intermediate.certificate.fingerprint);
    assert.equal(renewed.intermediate.certificate.subject, pki.intermediate.certificate.subject);
    assert.ok(renewed.intermediate.certificate.notAfter > pki.intermediate.certificate.notAfter);
    assert.ok(isIssuedBy(client.certPem, renewed.intermediate.certificate));
    assert.ok(renewed.verifyClientCertificate(client.certPem, [renewed.intermediateCertPem]).ok);
  });

  it('refuses inconsistent CA files instead of silently replacing trust', async () => {
    const dir = tempDir();
    await loadOrCreateControllerPki(dir, { hosts: [] });
    rmSync(join(dir, PKI_FILES.rootCert));
    await assert.rejects(loadOrCreateControllerPki(dir, { hosts: [] }), (e: unknown) => isPkiError(e, 'corrupt-pki'));

    const other = tempDir();
    await loadOrCreateControllerPki(other, { hosts: [] });
    const dir2 = tempDir();
    await loadOrCreateControllerPki(dir2, { hosts: [] });
    writeFileSync(join(dir2, PKI_FILES.intermediateCert), readFileSync(join(other, PKI_FILES.intermediateCert)));
    await assert.rejects(loadOrCreateControllerPki(dir2, { hosts: [] }), (e: unknown) => isPkiError(e, 'corrupt-pki'));

    const dir3 = tempDir();
    await loadOrCreateControllerPki(dir3, { hosts: [] });
    writeFileSync(join(dir3, PKI_FILES.intermediateKey), 'not a key');
    await assert.rejects(loadOrCreateControllerPki(dir3, { hosts: [] }), (e: unknown) => isPkiError(e, 'corrupt-pki'));
  });

  it('creates RSA CAs on request, and keeps the key type on later starts', async () => {
    const dir = tempDir();
    const pki = await loadOrCreateControllerPki(dir, { hosts: [], keyType: 'rsa-2048' });
    assert.deepEqual(pki.root.keyDescription, { kind: 'rsa', bits: 2048 });
    assert.deepEqual(pki.server.keyDescription, { kind: 'rsa', bits: 2048 });
    const moved = await loadOrCreateControllerPki(dir, { hosts: ['new.example.test'] });
    assert.equal(moved.changes.server, 'reissued');
    assert.deepEqual(moved.server.keyDescription, { kind: 'rsa', bits: 2048 });
  });
});

describe('controller PKI shared by several controllers (kept in memory for a store)', () => {
  it('is created once; a re-issue keeps the server key and adds the new hosts to the old ones', async () => {
    const memory = new PkiMemory('the store');
    const first = await loadOrCreateControllerPkiIn(memory, { hosts: ['ctrl.example.test', '10.0.0.1'], shared: true });
    assert.deepEqual(first.changes, { root: 'created', intermediate: 'created', server: 'created' });
    assert.equal(memory.changed.size, 6);
    assert.equal(first.dir, 'the store');

    const again = new PkiMemory('the store', memory.items);
    const same = await loadOrCreateControllerPkiIn(again, { hosts: ['ctrl.example.test', '10.0.0.1'], shared: true });
    assert.equal(same.changes.server, 'loaded');
    assert.equal(again.changed.size, 0, 'nothing to store');

    // Another replica, listening elsewhere behind the same advertised name.
    const other = new PkiMemory('the store', memory.items);
    const moved = await loadOrCreateControllerPkiIn(other, { hosts: ['ctrl.example.test', '10.0.0.2'], shared: true });
    assert.equal(moved.changes.serverReason, 'hosts-not-covered');
    assert.deepEqual([...other.changed], [PKI_FILES.serverCert], 'only the certificate is new');
    assert.equal(moved.serverKeyPem, first.serverKeyPem);
    for (const host of ['ctrl.example.test', '10.0.0.1', '10.0.0.2', 'localhost'])
      assert.ok(certificateCoversHost(moved.server, host), host);
    // An enrollment JWT signed by the first verifies against the re-issued certificate.
    const jwt = await first.signEnrollmentJwt({
      method: 'ott',
      issuer: 'https://ctrl.example.test',
      subject: 's',
      token: 't',
    });
    assert.equal((await moved.verifyEnrollmentJwt(jwt)).sub, 's');
  });
});

describe('controller PKI over real TLS', () => {
  const listen = (pki: ControllerPki, mutual: boolean) =>
    new Promise<{ port: number; close: () => Promise<void> }>((resolve) => {
      const server = createServer(
        {
          key: pki.serverKeyPem,
          cert: pki.serverCertChainPem,
          ...(mutual ? { requestCert: true, rejectUnauthorized: true, ca: pki.rootCertPem } : {}),
        },
        (req, res) => {
          const peer = (req.socket as TLSSocket).getPeerCertificate();
          res.end(peer.fingerprint === undefined ? 'anonymous' : peer.fingerprint.replaceAll(':', '').toLowerCase());
        },
      );
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        resolve({ port, close: () => new Promise((r) => server.close(() => r())) });
      });
    });

  const get = (opts: RequestOptions) =>
    new Promise<string>((resolve, reject) => {
      const req = request(opts, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve(body));
      });
      req.on('error', reject);
      req.end();
    });

  it('a client trusting the CA bundle connects to the server by localhost and by IP', async () => {
    const pki = await loadOrCreateControllerPki(tempDir(), { hosts: ['127.0.0.1'] });
    const srv = await listen(pki, false);
    try {
      const base = { host: '127.0.0.1', port: srv.port, path: '/', ca: pki.caBundlePem, agent: false } as const;
      assert.equal(await get({ ...base, servername: 'localhost' }), 'anonymous');
      assert.equal(await get(base), 'anonymous');
      await assert.rejects(get({ ...base, servername: 'not-covered.example.test' }), /altnames|Hostname/i);
      await assert.rejects(
        get({
          ...base,
          servername: 'localhost',
          ca: (await loadOrCreateControllerPki(tempDir(), { hosts: [] })).caBundlePem,
        }),
      );
    } finally {
      await srv.close();
    }
  });

  it('a client certificate signed from a CSR authenticates with mutual TLS', async () => {
    const pki = await loadOrCreateControllerPki(tempDir(), { hosts: [] });
    const { privateKeyPem, csrPem } = await generateKeyAndCsr({ commonName: 'alice', keyType: 'ec-p256' });
    const issued = await pki.signClientCsr(csrPem, { id: 'alice-id' });
    const srv = await listen(pki, true);
    try {
      const base = {
        host: '127.0.0.1',
        port: srv.port,
        path: '/',
        ca: pki.caBundlePem,
        servername: 'localhost',
        agent: false,
      } as const;
      const seen = await get({ ...base, key: privateKeyPem, cert: issued.chainPem });
      assert.equal(seen, issued.fingerprint);
      await assert.rejects(get(base));
    } finally {
      await srv.close();
    }
  });
});
