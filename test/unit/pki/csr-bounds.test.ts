/** The bounds checked before a CSR is parsed (32 KiB, 100 SANs) and the SANs each certificate profile copies. */
import assert from 'node:assert/strict';
import { webcrypto } from 'node:crypto';
import { before, describe, it } from 'node:test';
import {
  CSR_PEM_TYPES,
  MAX_CSR_BYTES,
  MAX_CSR_SANS,
  countRequestedSans,
  decodeFirstPemBlock,
  encodePem,
  generateKeyAndCsr,
  isPkiError,
  loadOrCreateControllerPki,
  parseCsr,
  spiffeId,
  type ControllerPki,
} from '../../../src/pki/index.js';
import { x509 } from '../../../src/pki/x509-lib.js';
import { csrWithHosts, csrWithJunkSans, oversizedCsr } from '../../harness/csrs.js';
import { tempDir } from './helpers.js';

/** The DER of a CSR's PEM, without the parser (and its bounds). */
const derOf = (pem: string) => decodeFirstPemBlock(pem, CSR_PEM_TYPES, 'CSR').der;
const overLimit = (bound: RegExp) => (e: unknown) => isPkiError(e, 'over-limit') && bound.test((e as Error).message);

/** A CSR whose extensionRequest carries `groups.length` SAN extensions of `groups[i]` names each. */
async function csrWithSanExtensions(groups: number[]): Promise<string> {
  const keys = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: 'CN=split',
    keys,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    extensions: groups.map(
      (n, g) =>
        new x509.SubjectAlternativeNameExtension(
          Array.from({ length: n }, (_, i) => ({ type: 'dns' as const, value: `g${g}-${i}.example.test` })),
        ),
    ),
  });
  return encodePem('CERTIFICATE REQUEST', new Uint8Array(csr.rawData));
}

describe('CSR bounds', () => {
  it('counts the SANs on the DER headers, over every SAN extension', async () => {
    assert.equal(countRequestedSans(derOf((await generateKeyAndCsr({ commonName: 'none' })).csrPem)), 0);
    assert.equal(countRequestedSans(derOf((await csrWithHosts('some', 7)).csrPem)), 7);
    const split = await csrWithSanExtensions([60, 60]);
    assert.throws(() => parseCsr(split), overLimit(/asks for 120 subject alternative names; at most 100/));
  });

  it(`refuses more than ${MAX_CSR_SANS} SANs and accepts exactly ${MAX_CSR_SANS}`, async () => {
    assert.equal(parseCsr((await csrWithHosts('at-limit', MAX_CSR_SANS)).csrPem).sans.dns.length, MAX_CSR_SANS);
    const over = (await csrWithHosts('over', MAX_CSR_SANS + 1)).csrPem;
    assert.throws(() => parseCsr(over), overLimit(/asks for 101 subject alternative names; at most 100 are accepted/));
    const many = derOf((await csrWithHosts('over-der', 1000)).csrPem);
    assert.ok(many.length <= MAX_CSR_BYTES, 'short names: within the size bound, refused for the count');
    assert.throws(() => parseCsr(many), overLimit(/asks for 1000/));
  });

  it('refuses more than 32 KiB of PEM text or DER, before decoding it', async () => {
    const big = (await oversizedCsr('big')).csrPem;
    assert.ok(big.length > MAX_CSR_BYTES);
    assert.throws(() => parseCsr(big), overLimit(/is \d+ bytes; at most 32768 bytes \(32 KiB\) are accepted/));
    const small = (await generateKeyAndCsr({ commonName: 'padded' })).csrPem;
    const padded = `${'#'.repeat(MAX_CSR_BYTES)}\n${small}`;
    assert.throws(() => parseCsr(padded), overLimit(/32768 bytes/), 'text around the block counts');
    assert.throws(() => parseCsr(new Uint8Array(MAX_CSR_BYTES + 1)), overLimit(/32768 bytes/));
    assert.equal(parseCsr(`${' '.repeat(MAX_CSR_BYTES - small.length)}${small}`).commonName, 'padded');
  });

  it('the SAN bound runs before the parser: an unparsable CSR with too many SANs is refused for the SANs', async () => {
    const corrupt = async (count: number) => {
      const { csrPem } = await csrWithHosts('corrupt', count);
      const der = Buffer.from(derOf(csrPem));
      // The EC point's leading 0x04 (uncompressed) becomes 0x05, no point format: the public key no longer parses.
      const spkiPoint = der.indexOf(Buffer.from([0x03, 0x42, 0x00, 0x04]));
      assert.ok(spkiPoint > 0);
      der[spkiPoint + 3] = 0x05;
      return der;
    };
    const atLimit = await corrupt(MAX_CSR_SANS);
    assert.throws(
      () => parseCsr(atLimit),
      (e) => isPkiError(e, 'bad-der'),
    );
    const overLimitAndCorrupt = await corrupt(MAX_CSR_SANS + 1);
    assert.throws(() => parseCsr(overLimitAndCorrupt), overLimit(/asks for 101/));
  });

  it('refuses BER (an indefinite length) as not DER, so no encoding hides SANs from the count', async () => {
    const der = derOf((await csrWithHosts('ber', 3)).csrPem);
    const header = der[1]! & 0x80 ? 2 + (der[1]! & 0x7f) : 2;
    const ber = Buffer.concat([Buffer.from([0x30, 0x80]), der.subarray(header), Buffer.from([0, 0])]);
    assert.throws(
      () => countRequestedSans(ber),
      (e) => isPkiError(e, 'bad-der'),
    );
    assert.throws(
      () => parseCsr(ber),
      (e) => isPkiError(e, 'bad-der'),
    );
    assert.throws(
      () => countRequestedSans(der.subarray(0, der.length - 10)),
      (e) => isPkiError(e, 'bad-der'),
    );
  });
});

describe('SANs copied into certificates', () => {
  let pki: ControllerPki;
  let junk: Awaited<ReturnType<typeof csrWithJunkSans>>;
  before(async () => {
    pki = await loadOrCreateControllerPki(tempDir(), { hosts: ['localhost'] });
    junk = await csrWithJunkSans('junk');
  });

  it('identity and API-session certificates carry their SPIFFE ID only', async () => {
    const identity = (await pki.signClientCsr(junk.csrPem, { id: 'id-1' })).certificate.sans;
    assert.deepEqual(identity, { dns: [], ip: [], uri: [spiffeId('edgectl', 'identity', 'id-1')], email: [] });
    const session = (await pki.signSessionCsr(junk.csrPem, { identityId: 'id-1', apiSessionId: 's-1' })).certificate
      .sans;
    assert.deepEqual(session, {
      dns: [],
      ip: [],
      uri: [spiffeId('edgectl', 'identity', 'id-1', 'api-session', 's-1')],
      email: [],
    });
  });

  it("a router's client certificate keeps the CSR's DNS and IP names, its server certificate every SAN", async () => {
    const client = (await pki.signClientCsr(junk.csrPem, { id: 'r-1', kind: 'router' })).certificate.sans;
    assert.deepEqual(client, {
      dns: ['bank.example.com', '*.example.org'],
      ip: ['10.9.8.7'],
      uri: [spiffeId('edgectl', 'router', 'r-1')],
      email: [],
    });
    const server = (await pki.signServerCsr(junk.csrPem)).certificate.sans;
    assert.deepEqual(server, {
      dns: ['bank.example.com', '*.example.org'],
      ip: ['10.9.8.7'],
      uri: ['spiffe://edgectl/identity/someone-else'],
      email: ['ceo@example.com'],
    });
  });
});
