import assert from 'node:assert/strict';
import { generateKeyPairSync, webcrypto } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import {
  CLIENT_CERT_VALIDITY_MS,
  ExtendedKeyUsage,
  encodePem,
  generateKeyAndCsr,
  isPkiError,
  loadOrCreateControllerPki,
  parseCsr,
  SESSION_CERT_VALIDITY_MS,
  spiffeId,
  verifyChain,
} from '../../../src/pki/index.js';
import type { ControllerPki, KeyType, ParsedCertificate } from '../../../src/pki/index.js';
import { x509 } from '../../../src/pki/x509-lib.js';
import { hasOpenssl, openssl, tempDir } from './helpers.js';

const ekus = (cert: ParsedCertificate): readonly string[] => cert.extendedKeyUsage;

const HOUR = 60 * 60 * 1000;

/** A CSR signed with an arbitrary node key (to test keys generateKeyAndCsr refuses to make). */
async function csrFor(
  privateKey: webcrypto.CryptoKey,
  publicKey: webcrypto.CryptoKey,
  alg: { name: string; hash: string },
) {
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: 'CN=weak',
    keys: { privateKey, publicKey },
    signingAlgorithm: alg,
  });
  return encodePem('CERTIFICATE REQUEST', new Uint8Array(csr.rawData));
}

describe('signing CSRs', () => {
  let pki: ControllerPki;
  before(async () => {
    pki = await loadOrCreateControllerPki(tempDir(), { hosts: ['localhost'] });
  });

  const keyTypes: KeyType[] = ['rsa-2048', 'ec-p256', 'ec-p384'];
  for (const keyType of keyTypes) {
    it(`client certificate from a ${keyType} CSR: clientAuth, URI SAN, one year, chains to the root`, async () => {
      const { csrPem } = await generateKeyAndCsr({ commonName: `client-${keyType}`, keyType });
      const now = new Date();
      const issued = await pki.signClientCsr(csrPem, { id: 'id-42', now });
      const cert = issued.certificate;
      assert.equal(cert.commonName, `client-${keyType}`);
      assert.deepEqual(ekus(cert), [ExtendedKeyUsage.clientAuth]);
      assert.deepEqual(cert.sans.uri, ['spiffe://edgectl/identity/id-42']);
      assert.equal(cert.isCA, false);
      const lifetime = cert.notAfter.getTime() - now.getTime();
      assert.ok(Math.abs(lifetime - CLIENT_CERT_VALIDITY_MS) < 2000, `lifetime ${lifetime}`);
      assert.ok(cert.notBefore.getTime() <= now.getTime() - 59_000);
      const v = verifyChain(issued.certPem, { intermediates: [pki.intermediateCertPem], trusted: [pki.rootCertPem] });
      assert.ok(v.ok);
      assert.equal(v.ok && v.anchor.fingerprint, pki.root.fingerprint);
      assert.equal(v.withinValidity, true);
      assert.match(issued.fingerprint, /^[0-9a-f]{40}$/);
      assert.equal(issued.chainPem, issued.certPem + pki.intermediateCertPem);
      const clientCheck = pki.verifyClientCertificate(issued.certPem, [pki.intermediateCertPem]);
      assert.ok(clientCheck.ok);
      assert.equal(clientCheck.improperChain, false);
    });
  }

  it('a leaf sent without its intermediate verifies only through the fallback pool (improper chain)', async () => {
    const { csrPem } = await generateKeyAndCsr({ commonName: 'lonely' });
    const issued = await pki.signClientCsr(csrPem, { id: 'lonely' });
    const res = pki.verifyClientCertificate(issued.certPem);
    assert.ok(res.ok);
    assert.equal(res.improperChain, true);
  });

  it('router client certificates name the router; CSR URI SANs cannot claim another identity', async () => {
    const { csrPem } = await generateKeyAndCsr({ commonName: 'router-7' });
    const issued = await pki.signClientCsr(csrPem, { id: 'router-7', kind: 'router' });
    assert.deepEqual(issued.certificate.sans.uri, ['spiffe://edgectl/router/router-7']);
    assert.equal(spiffeId('td', 'identity', 'a/b'), 'spiffe://td/identity/a%2Fb');

    const keys = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
    const sneaky = await x509.Pkcs10CertificateRequestGenerator.create({
      name: 'CN=mallory',
      keys,
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
      extensions: [
        new x509.SubjectAlternativeNameExtension([{ type: 'url', value: 'spiffe://edgectl/identity/admin' }]),
      ],
    });
    const out = await pki.signClientCsr(encodePem('CERTIFICATE REQUEST', new Uint8Array(sneaky.rawData)), {
      id: 'mallory',
    });
    assert.deepEqual(out.certificate.sans.uri, ['spiffe://edgectl/identity/mallory']);
  });

  it('router server certificate: serverAuth and the SANs of the CSR', async () => {
    const { csrPem } = await generateKeyAndCsr({
      commonName: 'router-7',
      keyType: 'ec-p384',
      hosts: ['router7.example.test', '10.0.0.7'],
    });
    assert.deepEqual(parseCsr(csrPem).sans.dns, ['router7.example.test']);
    const issued = await pki.signServerCsr(csrPem, { extraHosts: ['edge.example.test'] });
    assert.deepEqual(ekus(issued.certificate), [ExtendedKeyUsage.serverAuth]);
    assert.deepEqual(issued.certificate.sans.dns, ['router7.example.test', 'edge.example.test']);
    assert.deepEqual(issued.certificate.sans.ip, ['10.0.0.7']);
    assert.ok(
      verifyChain(issued.certificate, { intermediates: [pki.intermediateCertPem], trusted: [pki.rootCertPem] }).ok,
    );
  });

  it('API-session certificate: clientAuth, 12 hours, names identity and session', async () => {
    const { csrPem } = await generateKeyAndCsr({ commonName: 'session', keyType: 'ec-p256' });
    const now = new Date();
    const issued = await pki.signSessionCsr(csrPem, { identityId: 'id-1', apiSessionId: 'sess-9', now });
    assert.deepEqual(ekus(issued.certificate), [ExtendedKeyUsage.clientAuth]);
    assert.deepEqual(issued.certificate.sans.uri, ['spiffe://edgectl/identity/id-1/api-session/sess-9']);
    const lifetime = issued.notAfter.getTime() - now.getTime();
    assert.ok(Math.abs(lifetime - SESSION_CERT_VALIDITY_MS) < 2000 && lifetime < 13 * HOUR, `lifetime ${lifetime}`);
  });

  it('refuses a CSR whose signature does not verify', async () => {
    const { csrPem } = await generateKeyAndCsr({ commonName: 'tampered' });
    const der = Buffer.from(parseCsr(csrPem).der);
    const i = der.indexOf(Buffer.from('tampered'));
    der.write('tamperex', i); // change the subject after signing
    const tampered = encodePem('CERTIFICATE REQUEST', der);
    assert.equal(parseCsr(tampered).commonName, 'tamperex');
    await assert.rejects(pki.signClientCsr(tampered, { id: 'x' }), (e: unknown) => isPkiError(e, 'bad-csr'));
  });

  it('refuses weak or unsupported keys', async () => {
    const rsa1024 = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const alg = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
    const priv = await webcrypto.subtle.importKey(
      'pkcs8',
      rsa1024.privateKey.export({ format: 'der', type: 'pkcs8' }),
      alg,
      false,
      ['sign'],
    );
    const pub = await webcrypto.subtle.importKey(
      'spki',
      rsa1024.publicKey.export({ format: 'der', type: 'spki' }),
      alg,
      true,
      ['verify'],
    );
    const weak = await csrFor(priv, pub, alg);
    await assert.rejects(pki.signClientCsr(weak, { id: 'x' }), (e: unknown) => isPkiError(e, 'unsupported-key'));
    await assert.rejects(pki.signClientCsr('not a csr', { id: 'x' }), (e: unknown) => isPkiError(e, 'not-pem'));
    await assert.rejects(pki.signClientCsr(pki.serverCertPem, { id: 'x' }), (e: unknown) =>
      isPkiError(e, 'wrong-pem-type'),
    );
  });

  it(
    'accepts CSRs made by OpenSSL (RSA 2048 and EC P-384, with SANs)',
    { skip: !hasOpenssl && 'openssl not installed' },
    async () => {
      const rsaCsr = openssl([
        'req',
        '-new',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        '/dev/null',
        '-subj',
        '/O=Acme/CN=openssl-rsa',
        '-addext',
        'subjectAltName=DNS:rsa.example.test,IP:192.0.2.7',
      ]);
      const ecCsr = openssl([
        'req',
        '-new',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-384',
        '-nodes',
        '-keyout',
        '/dev/null',
        '-subj',
        '/CN=openssl-ec',
      ]);
      const server = await pki.signServerCsr(rsaCsr);
      assert.equal(server.certificate.subject, 'O=Acme, CN=openssl-rsa');
      assert.deepEqual(server.certificate.sans.dns, ['rsa.example.test']);
      assert.deepEqual(server.certificate.sans.ip, ['192.0.2.7']);
      const client = await pki.signClientCsr(ecCsr, { id: 'ec' });
      assert.deepEqual(client.certificate.keyDescription, { kind: 'ec', curve: 'P-384' });
      // OpenSSL agrees the chain is valid for TLS client (and server) use.
      const dir = tempDir();
      writeFileSync(join(dir, 'root.pem'), pki.rootCertPem);
      writeFileSync(join(dir, 'inter.pem'), pki.intermediateCertPem);
      writeFileSync(join(dir, 'client.pem'), client.certPem);
      writeFileSync(join(dir, 'server.pem'), server.certPem);
      const args = ['-CAfile', join(dir, 'root.pem'), '-untrusted', join(dir, 'inter.pem')];
      assert.match(openssl(['verify', '-purpose', 'sslclient', ...args, join(dir, 'client.pem')]), /: OK/);
      assert.match(openssl(['verify', '-purpose', 'sslserver', ...args, join(dir, 'server.pem')]), /: OK/);
    },
  );
});
