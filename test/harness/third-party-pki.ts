/**
 * A third-party PKI built inside a test: self-signed root CAs, intermediates and client certificates with chosen
 * subjects, SANs and key usages, all through `src/pki` (the same code paths a foreign CA's certificates take
 * through the controller, but none of the controller's own keys). Fixture helpers: no assertions.
 */
import {
  CertificateAuthority,
  createSelfSignedCa,
  ExtendedKeyUsage,
  generateKeyPair,
  joinPem,
  KeyUsage,
  privateKeyToPem,
  type KeyType,
  type ParsedCertificate,
} from '../../src/pki/index.js';

const HOUR = 3_600_000;

export interface TestCa {
  ca: CertificateAuthority;
  certPem: string;
  keyPem: string;
}

/** A new self-signed root CA. */
export async function newRootCa(commonName: string, keyType: KeyType = 'ec-p256'): Promise<TestCa> {
  const pair = await generateKeyPair(keyType);
  const ca = await createSelfSignedCa({
    subject: [{ O: ['third party'] }, { CN: [commonName] }],
    privateKey: pair.privateKey,
    notBefore: new Date(Date.now() - HOUR),
    notAfter: new Date(Date.now() + 24 * HOUR),
  });
  return { ca, certPem: ca.certPem, keyPem: privateKeyToPem(pair.privateKey) };
}

/** An intermediate CA signed by `parent`. */
export async function newIntermediateCa(parent: TestCa, commonName: string): Promise<TestCa> {
  const pair = await generateKeyPair('ec-p256');
  const cert = await parent.ca.issue({
    subject: [{ CN: [commonName] }],
    publicKey: pair.publicKey,
    notBefore: new Date(Date.now() - HOUR),
    notAfter: new Date(Date.now() + 24 * HOUR),
    isCA: true,
    pathLength: 0,
    keyUsage: KeyUsage.keyCertSign | KeyUsage.cRLSign | KeyUsage.digitalSignature,
  });
  const ca = await CertificateAuthority.load(cert, pair.privateKey);
  return { ca, certPem: cert.pem, keyPem: privateKeyToPem(pair.privateKey) };
}

export interface TestClientCert {
  certificate: ParsedCertificate;
  certPem: string;
  keyPem: string;
  fingerprint: string;
  /** Leaf followed by the given intermediates, for a TLS client that sends its chain. */
  chainPem(...intermediates: TestCa[]): string;
}

export interface ClientCertOptions {
  uris?: string[];
  emails?: string[];
  /** Extended key usages; default clientAuth. */
  eku?: string[];
  notBefore?: Date;
  notAfter?: Date;
}

/** A client certificate for a new key, issued by `issuer`. */
export async function issueClientCert(
  issuer: TestCa,
  commonName: string,
  opts: ClientCertOptions = {},
): Promise<TestClientCert> {
  const pair = await generateKeyPair('ec-p256');
  const cert = await issuer.ca.issue({
    subject: [{ CN: [commonName] }],
    publicKey: pair.publicKey,
    notBefore: opts.notBefore ?? new Date(Date.now() - HOUR),
    notAfter: opts.notAfter ?? new Date(Date.now() + 12 * HOUR),
    isCA: false,
    keyUsage: KeyUsage.digitalSignature | KeyUsage.keyAgreement,
    extendedKeyUsage: opts.eku ?? [ExtendedKeyUsage.clientAuth],
    sans: { uris: opts.uris ?? [], emails: opts.emails ?? [] },
  });
  return {
    certificate: cert,
    certPem: cert.pem,
    keyPem: privateKeyToPem(pair.privateKey),
    fingerprint: cert.fingerprint,
    chainPem: (...intermediates) => joinPem([cert.pem, ...intermediates.map((i) => i.certPem)]),
  };
}
