import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import {
  caBundlePkcs7Base64,
  certsOnlyPkcs7Der,
  isPkiError,
  loadOrCreateControllerPki,
  parsePkcs7Certificates,
  signEnrollmentJwt,
  verifyEnrollmentJwt,
} from '../../../src/pki/index.js';
import type { ControllerPki } from '../../../src/pki/index.js';
import { x509 } from '../../../src/pki/x509-lib.js';
import { hasOpenssl, openssl, tempDir } from './helpers.js';

describe('well-known CA bundle (PKCS#7 certs-only)', () => {
  let pki: ControllerPki;
  before(async () => {
    pki = await loadOrCreateControllerPki(tempDir(), { hosts: [] });
  });

  it('is base64 in 64-character lines that decodes to a SignedData holding intermediate and root', () => {
    const body = pki.caBundlePkcs7Base64();
    const lines = body.split('\n');
    assert.ok(lines.length > 1);
    for (const line of lines.slice(0, -1)) assert.equal(line.length, 64);
    assert.match(body, /^MII/); // SEQUENCE with a two-byte length, like the spec's example
    const der = Buffer.from(body, 'base64');
    assert.deepEqual(der, certsOnlyPkcs7Der([pki.intermediateCertPem, pki.rootCertPem]));
    // Parsed back by an independent reader …
    const viaLib = new x509.X509Certificates(der);
    assert.deepEqual(
      Array.from(viaLib, (c) => c.subject),
      [pki.intermediate.certificate.subject, pki.root.subject],
    );
    // … and by ours.
    assert.deepEqual(
      parsePkcs7Certificates(body).map((c) => c.fingerprint),
      [pki.intermediate.certificate.fingerprint, pki.root.fingerprint],
    );
    assert.equal(caBundlePkcs7Base64(pki.caBundlePem), body);
  });

  it('refuses bytes that are not a PKCS#7 bundle', () => {
    assert.throws(
      () => parsePkcs7Certificates('aGVsbG8gd29ybGQ='),
      (e: unknown) => isPkiError(e, 'bad-der'),
    );
  });

  it('matches what OpenSSL reads', { skip: !hasOpenssl && 'openssl not installed' }, () => {
    const file = join(tempDir(), 'bundle.p7b');
    writeFileSync(file, Buffer.from(pki.caBundlePkcs7Base64(), 'base64'));
    const out = openssl(['pkcs7', '-inform', 'DER', '-in', file, '-print_certs', '-noout']);
    assert.equal((out.match(/subject=/g) ?? []).length, 2);
    assert.match(out, /Intermediate CA/);
    assert.match(out, /Root CA/);
  });
});

describe('enrollment JWT', () => {
  let pki: ControllerPki;
  let rsaPki: ControllerPki;
  before(async () => {
    pki = await loadOrCreateControllerPki(tempDir(), { hosts: [] });
    rsaPki = await loadOrCreateControllerPki(tempDir(), { hosts: [], keyType: 'rsa-2048' });
  });

  const input = () => ({
    method: 'ott' as const,
    issuer: 'https://127.0.0.1:1280',
    subject: 'identity-1',
    token: randomUUID(),
    expiresAt: new Date(Date.now() + 30 * 60 * 1000),
  });

  it('round-trips with the server certificate (ES256 for an EC key)', async () => {
    const claims = input();
    const jwt = await signEnrollmentJwt(claims, { key: pki.serverKeyPem, cert: pki.serverCertChainPem });
    const header = decodeProtectedHeader(jwt);
    assert.equal(header.alg, 'ES256');
    assert.equal(header.kid, pki.server.fingerprint);
    const payload = decodeJwt(jwt);
    assert.deepEqual(Object.keys(payload).sort(), ['em', 'exp', 'iss', 'jti', 'sub']);
    const verified = await verifyEnrollmentJwt(jwt, pki.serverCertChainPem);
    assert.deepEqual(verified, {
      em: 'ott',
      iss: claims.issuer,
      sub: claims.subject,
      jti: claims.token,
      exp: Math.floor(claims.expiresAt.getTime() / 1000),
    });
    assert.deepEqual(await pki.verifyEnrollmentJwt(await pki.signEnrollmentJwt(claims)), verified);
  });

  it('uses RS256 with an RSA server key', async () => {
    const jwt = await rsaPki.signEnrollmentJwt(input());
    assert.equal(decodeProtectedHeader(jwt).alg, 'RS256');
    assert.equal((await rsaPki.verifyEnrollmentJwt(jwt)).em, 'ott');
  });

  it('fails when tampered, signed by another controller, or expired', async () => {
    const jwt = await pki.signEnrollmentJwt(input());
    const [h, p, s] = jwt.split('.') as [string, string, string];
    const forged = Buffer.from(JSON.stringify({ ...decodeJwt(jwt), sub: 'admin' })).toString('base64url');
    await assert.rejects(verifyEnrollmentJwt(`${h}.${forged}.${s}`, pki.serverCertPem), (e: unknown) =>
      isPkiError(e, 'invalid-jwt'),
    );
    const flipped = `${h}.${p}.${s.slice(0, -2)}${s.endsWith('AA') ? 'BB' : 'AA'}`;
    await assert.rejects(verifyEnrollmentJwt(flipped, pki.serverCertPem), (e: unknown) => isPkiError(e, 'invalid-jwt'));
    await assert.rejects(verifyEnrollmentJwt(jwt, rsaPki.serverCertPem), (e: unknown) => isPkiError(e, 'invalid-jwt'));
    const other = await loadOrCreateControllerPki(tempDir(), { hosts: [] });
    await assert.rejects(other.verifyEnrollmentJwt(jwt), (e: unknown) => isPkiError(e, 'invalid-jwt'));
    await assert.rejects(verifyEnrollmentJwt('not.a.jwt', pki.serverCertPem), (e: unknown) =>
      isPkiError(e, 'invalid-jwt'),
    );
    const expired = await pki.signEnrollmentJwt({ ...input(), expiresAt: new Date(Date.now() - 60_000) });
    await assert.rejects(pki.verifyEnrollmentJwt(expired), (e: unknown) => isPkiError(e, 'expired-jwt'));
    await assert.rejects(pki.verifyEnrollmentJwt(jwt, { issuer: 'https://elsewhere:1280' }), (e: unknown) =>
      isPkiError(e, 'invalid-jwt'),
    );
  });

  it('CA JWTs carry an audience and no expiry', async () => {
    const jwt = await pki.signEnrollmentJwt({
      method: 'ca',
      issuer: 'https://127.0.0.1:1280/',
      subject: 'ca-id',
      token: 'ca-id',
      audience: ['openziti-enroller'],
    });
    const claims = await pki.verifyEnrollmentJwt(jwt);
    assert.equal(claims.exp, undefined);
    assert.deepEqual(claims.aud, ['openziti-enroller']);
    assert.equal(claims.em, 'ca');
  });
});
