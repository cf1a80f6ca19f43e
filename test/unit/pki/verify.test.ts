import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import {
  createSelfSignedCa,
  generateKeyAndCsr,
  generateKeyPair,
  isIssuedBy,
  isWithinValidity,
  KeyUsage,
  loadOrCreateControllerPki,
  parseCertificate,
  signClientCsr,
  verifyChain,
} from '../../../src/pki/index.js';
import type { ControllerPki } from '../../../src/pki/index.js';
import { tempDir } from './helpers.js';

const YEAR = 365 * 24 * 60 * 60 * 1000;

describe('chain verification', () => {
  let pki: ControllerPki;
  let other: ControllerPki;
  let csrPem: string;
  before(async () => {
    pki = await loadOrCreateControllerPki(tempDir(), { hosts: [] });
    other = await loadOrCreateControllerPki(tempDir(), { hosts: [] });
    ({ csrPem } = await generateKeyAndCsr({ commonName: 'leaf' }));
  });

  it('verifies leaf → intermediate → root and reports the path', async () => {
    const issued = await pki.signClientCsr(csrPem, { id: 'a' });
    const res = verifyChain(issued.certPem, { intermediates: [pki.intermediateCertPem], trusted: [pki.rootCertPem] });
    assert.ok(res.ok);
    assert.deepEqual(res.ok && res.chain.map((c) => c.fingerprint), [
      issued.fingerprint,
      pki.intermediate.certificate.fingerprint,
      pki.root.fingerprint,
    ]);
    // Trusting the intermediate directly also works, with a shorter path.
    const direct = verifyChain(issued.certPem, { trusted: [pki.intermediateCertPem] });
    assert.ok(direct.ok);
    assert.equal(direct.ok && direct.chain.length, 2);
    // Without the intermediate, the root alone cannot be reached.
    const missing = verifyChain(issued.certPem, { trusted: [pki.rootCertPem] });
    assert.equal(missing.ok, false);
    assert.equal(!missing.ok && missing.reason, 'no-path-to-trusted-certificate');
  });

  it('a certificate from an unrelated CA fails, even when that CA is sent along', async () => {
    const foreign = await other.signClientCsr(csrPem, { id: 'a' });
    const res = verifyChain(foreign.certPem, {
      intermediates: [other.intermediateCertPem, other.rootCertPem],
      trusted: [pki.rootCertPem, pki.intermediateCertPem],
    });
    assert.equal(res.ok, false);
    assert.equal(pki.verifyClientCertificate(foreign.certPem, [other.intermediateCertPem]).ok, false);
    assert.equal(isIssuedBy(foreign.certPem, pki.intermediateCertPem), false);
    assert.equal(isIssuedBy(foreign.certPem, other.intermediateCertPem), true);
  });

  it('an expired certificate is reported outside validity while its chain still verifies', async () => {
    const issuedAt = new Date(Date.now() - 2 * YEAR);
    const expired = await pki.signClientCsr(csrPem, { id: 'old', now: issuedAt });
    assert.ok(expired.notAfter < new Date());
    const res = verifyChain(expired.certPem, { intermediates: [pki.intermediateCertPem], trusted: [pki.rootCertPem] });
    assert.ok(res.ok);
    assert.equal(res.withinValidity, false);
    assert.equal(isWithinValidity(expired.certPem), false);
    assert.equal(isWithinValidity(expired.certPem, new Date(issuedAt.getTime() + 1000)), true);
    const check = pki.verifyClientCertificate(expired.certPem, [pki.intermediateCertPem]);
    assert.ok(check.ok && !check.withinValidity);
  });

  it('an end-entity certificate cannot act as an issuer', async () => {
    const leaf = await pki.signClientCsr(csrPem, { id: 'a' });
    // A certificate "issued" by a non-CA is never found: verification needs CA issuers.
    const res = verifyChain(leaf.certPem, { trusted: [pki.serverCertPem] });
    assert.equal(res.ok, false);
    // The leaf itself, when trusted, verifies trivially.
    const self = verifyChain(leaf.certPem, { trusted: [leaf.certPem] });
    assert.ok(self.ok);
  });

  it('CA verification: a certificate whose CN is the token, signed by a third-party CA', async () => {
    // A third-party CA, as an operator would register with POST /cas and prove with POST /cas/{id}/verify.
    const key = await generateKeyPair('ec-p256');
    const now = Date.now();
    const thirdParty = await createSelfSignedCa({
      subject: [{ CN: ['Acme Corp CA'] }],
      privateKey: key.privateKey,
      notBefore: new Date(now - 60_000),
      notAfter: new Date(now + YEAR),
    });
    const ca = parseCertificate(thirdParty.certPem);
    assert.equal(ca.isCA, true);
    const token = randomUUID();
    const { csrPem: tokenCsr } = await generateKeyAndCsr({ commonName: token });
    const proof = await signClientCsr(thirdParty, tokenCsr, { id: 'verification' });
    const parsed = parseCertificate(proof.certPem);
    assert.equal(parsed.commonName, token);
    assert.equal(isIssuedBy(parsed, ca), true);
    assert.equal(isIssuedBy(parsed, pki.rootCertPem), false);
    // Self-signed proof (not signed by the CA) fails.
    const selfSigned = await createSelfSignedCa({
      subject: [{ CN: ['Acme Corp CA'] }],
      privateKey: (await generateKeyPair('ec-p256')).privateKey,
      notBefore: new Date(now),
      notAfter: new Date(now + YEAR),
    });
    assert.equal(isIssuedBy(selfSigned.certPem, ca), false);
    // A CA can also issue subordinate CAs with the generic issue().
    const sub = await thirdParty.issue({
      subject: [{ CN: ['Acme Sub CA'] }],
      publicKey: (await generateKeyPair('ec-p256')).publicKey,
      notBefore: new Date(now),
      notAfter: new Date(now + 2 * YEAR),
      isCA: true,
      pathLength: 0,
      keyUsage: KeyUsage.keyCertSign,
    });
    assert.ok(sub.isCA);
    assert.ok(sub.notAfter.getTime() <= ca.notAfter.getTime(), 'clamped to the issuer lifetime');
  });
});
