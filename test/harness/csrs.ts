/**
 * CSRs the controller must refuse or trim: beyond its bounds (32 KiB, 100 SANs) and asking
 * for names it does not vouch for.
 */
import assert from 'node:assert/strict';
import { createPrivateKey, webcrypto } from 'node:crypto';
import { encodePem, generateKeyAndCsr, MAX_CSR_SANS, privateKeyToPem, type KeyAndCsr } from '../../src/pki/index.js';
import { x509 } from '../../src/pki/x509-lib.js';
import { assertError, type ResponseLike } from './assert.js';

/** A CSR asking for `count` DNS names (`h<i>.<suffix>`), by default one more than the bound. */
export const csrWithHosts = (commonName: string, count = MAX_CSR_SANS + 1, label = 'h'): Promise<KeyAndCsr> =>
  generateKeyAndCsr({ commonName, hosts: Array.from({ length: count }, (_, i) => `${label}${i}.example.test`) });

/** A CSR of more than 32 KiB asking for only 100 SANs (long DNS names). */
export const oversizedCsr = (commonName: string): Promise<KeyAndCsr> =>
  csrWithHosts(commonName, MAX_CSR_SANS, `h${'x'.repeat(330)}-`);

/** A CSR asking for DNS, IP, e-mail and URI names of its own choosing. */
export async function csrWithJunkSans(commonName: string): Promise<KeyAndCsr & { junk: readonly string[] }> {
  const keys = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
  const names = [
    { type: 'dns', value: 'bank.example.com' },
    { type: 'dns', value: '*.example.org' },
    { type: 'ip', value: '10.9.8.7' },
    { type: 'email', value: 'ceo@example.com' },
    { type: 'url', value: 'spiffe://edgectl/identity/someone-else' },
  ] as const;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: [{ CN: [commonName] }],
    keys,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    extensions: [new x509.SubjectAlternativeNameExtension(names.map((n) => ({ ...n })))],
  });
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  return {
    csrPem: encodePem('CERTIFICATE REQUEST', new Uint8Array(csr.rawData)),
    privateKeyPem: privateKeyToPem(createPrivateKey({ key: Buffer.from(pkcs8), format: 'der', type: 'pkcs8' })),
    keyType: 'ec-p256',
    junk: names.map((n) => n.value),
  };
}

/** 400 COULD_NOT_PROCESS_CSR whose cause names `bound`. */
function assertCsrRefused(res: ResponseLike, bound: RegExp): void {
  assertError(res, 400, 'COULD_NOT_PROCESS_CSR');
  assert.match(String(res.body.error.cause?.message), bound);
}

/** Refused for its size, the 32 KiB bound named. */
export const assertSizeRefused = (res: ResponseLike) =>
  assertCsrRefused(res, /at most 32768 bytes \(32 KiB\) are accepted/);

/** Refused for asking for 101 SANs, the bound of 100 named. */
export const assertSansRefused = (res: ResponseLike) =>
  assertCsrRefused(res, /asks for 101 subject alternative names; at most 100 are accepted/);
