import assert from 'node:assert/strict';
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { before, describe, it } from 'node:test';
import {
  certificateFingerprint,
  decodePemBlocks,
  encodePem,
  isPkiError,
  loadOrCreateControllerPki,
  parseCertificate,
  parseCertificates,
  parseCsr,
} from '../../../src/pki/index.js';
import type { ControllerPki } from '../../../src/pki/index.js';
import { hasOpenssl, openssl, tempDir } from './helpers.js';

const rejectsWith = (fn: () => unknown, reason: string): void => {
  assert.throws(fn, (err: unknown) => isPkiError(err) && err.reason === reason);
};

describe('PEM parsing', () => {
  let pki: ControllerPki;
  before(async () => {
    pki = await loadOrCreateControllerPki(tempDir(), { hosts: ['localhost'] });
  });

  it('distinguishes not PEM, wrong block type and bad DER', () => {
    rejectsWith(() => parseCertificate('this is not a certificate'), 'not-pem');
    rejectsWith(() => parseCertificate(''), 'not-pem');
    rejectsWith(
      () => parseCertificate('-----BEGIN CERTIFICATE-----\n%%%not base64%%%\n-----END CERTIFICATE-----\n'),
      'not-pem',
    );
    rejectsWith(() => parseCertificate(pki.serverKeyPem), 'wrong-pem-type');
    rejectsWith(() => parseCertificate(encodePem('CERTIFICATE', Buffer.from('garbage bytes, not DER'))), 'bad-der');
    rejectsWith(() => parseCsr(pki.serverCertPem), 'wrong-pem-type');
    rejectsWith(() => parseCsr('nope'), 'not-pem');
    rejectsWith(
      () => parseCsr(encodePem('CERTIFICATE REQUEST', Buffer.from([0x30, 0x03, 0x02, 0x01, 0x01]))),
      'bad-der',
    );
  });

  it('ignores text around blocks and reads every block of a bundle in order', () => {
    const text = `subject=whatever\n${pki.intermediateCertPem}\nsome note\n${pki.rootCertPem}`;
    assert.deepEqual(
      decodePemBlocks(text).map((b) => b.type),
      ['CERTIFICATE', 'CERTIFICATE'],
    );
    const certs = parseCertificates(pki.caBundlePem);
    assert.deepEqual(
      certs.map((c) => c.fingerprint),
      [pki.intermediate.certificate.fingerprint, pki.root.fingerprint],
    );
    rejectsWith(() => parseCertificates(pki.caBundlePem + pki.serverKeyPem), 'wrong-pem-type');
    assert.equal(parseCertificate(text).fingerprint, pki.intermediate.certificate.fingerprint);
  });

  it('reads CN, subject, SANs, validity and the CA flag', () => {
    const server = parseCertificate(pki.serverCertChainPem);
    assert.equal(server.commonName, 'localhost');
    assert.match(server.subject, /CN=localhost/);
    assert.equal(server.isCA, false);
    assert.ok(server.sans.dns.includes('localhost'));
    assert.ok(server.sans.ip.includes('127.0.0.1'));
    assert.ok(server.sans.ip.includes('::1'));
    assert.ok(server.notBefore < new Date() && server.notAfter > new Date());
    const root = parseCertificate(pki.rootCertPem);
    assert.equal(root.isCA, true);
    assert.equal(root.subject, root.issuer);
    assert.match(root.commonName ?? '', /^edgectl Root CA [0-9a-f]{8}$/);
  });

  it('fingerprints are lowercase hex SHA-1 of the DER without separators', () => {
    const fp = certificateFingerprint(pki.serverCertPem);
    assert.match(fp, /^[0-9a-f]{40}$/);
    const nodeFp = new X509Certificate(pki.serverCertPem).fingerprint.replaceAll(':', '').toLowerCase();
    assert.equal(fp, nodeFp);
    assert.equal(certificateFingerprint(parseCertificate(pki.serverCertPem).der), fp);
    assert.equal(parseCertificate(pki.serverCertPem).fingerprint, fp);
    rejectsWith(() => certificateFingerprint('nope'), 'not-pem');
  });

  it('round-trips encodePem with 64-character lines', () => {
    const der = parseCertificate(pki.rootCertPem).der;
    const pem = encodePem('CERTIFICATE', der);
    for (const line of pem.trim().split('\n').slice(1, -1)) assert.ok(line.length <= 64);
    assert.deepEqual(decodePemBlocks(pem)[0]?.der, der);
    // A key PEM that node wrote is read as a PRIVATE KEY block.
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const keyPem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    assert.equal(decodePemBlocks(keyPem)[0]?.type, 'PRIVATE KEY');
  });

  it(
    'reads SANs of third-party certificates with entries the library cannot render',
    { skip: !hasOpenssl && 'openssl not installed' },
    () => {
      const pem = openssl([
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        '/dev/null',
        '-subj',
        '/CN=odd',
        '-addext',
        'subjectAltName=DNS:a.test,otherName:1.2.3.4;UTF8:hello,IP:10.0.0.1,URI:spiffe://x/y',
        '-addext',
        'extendedKeyUsage=clientAuth',
      ]);
      const cert = parseCertificate(pem);
      assert.deepEqual(cert.sans, { dns: ['a.test'], ip: ['10.0.0.1'], uri: ['spiffe://x/y'], email: [] });
      assert.deepEqual(cert.extendedKeyUsage, ['1.3.6.1.5.5.7.3.2']);
      assert.equal(cert.commonName, 'odd');
    },
  );
});
