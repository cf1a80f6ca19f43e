/**
 * PKCS#10 certificate signing requests: parsing and verifying the ones clients send (RSA and EC alike, which is
 * why this uses `@peculiar/x509` rather than node-forge), and generating key + CSR for the CLI's enroll command.
 */
import { createPublicKey } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import { normalizeHost } from './certificate.js';
import type { SubjectAltNames } from './certificate.js';
import { assertCsrSans, assertCsrSize } from './csr-bounds.js';
import { PkiError } from './errors.js';
import { assertAcceptableKey, describeKey, generateKeyPair, privateKeyToPem, toWebSigningKey } from './keys.js';
import type { KeyDescription, KeyType } from './keys.js';
import { decodeFirstPemBlock, encodePem } from './pem.js';
import { x509 } from './x509-lib.js';

/** PEM labels accepted for CSRs (`NEW CERTIFICATE REQUEST` is what some older tools write). */
export const CSR_PEM_TYPES = ['CERTIFICATE REQUEST', 'NEW CERTIFICATE REQUEST'] as const;

/** A parsed (not yet verified) certificate signing request. */
export interface ParsedCsr {
  readonly der: Buffer;
  /** Subject DN as text. */
  readonly subject: string;
  /** The subject Name exactly as encoded in the CSR, copied into issued certificates unchanged. */
  readonly subjectDer: Buffer;
  readonly commonName: string | undefined;
  /** SANs requested through the extensionRequest attribute (read on first use; a PkiError if unreadable). */
  readonly sans: SubjectAltNames;
  readonly publicKey: KeyObject;
  readonly publicKeySpki: Buffer;
  readonly keyDescription: KeyDescription;
  /** The library object, kept for signature verification. */
  readonly raw: InstanceType<typeof x509.Pkcs10CertificateRequest>;
}

/** The SANs of a CSR's (first) subjectAltName extension; DNS names lowercase, IPs normalised. */
function requestedSans(raw: InstanceType<typeof x509.Pkcs10CertificateRequest>): SubjectAltNames {
  const dns: string[] = [];
  const ip: string[] = [];
  const uri: string[] = [];
  const email: string[] = [];
  const sanExt = raw.getExtension('2.5.29.17');
  if (sanExt !== null) {
    const names = new x509.SubjectAlternativeNameExtension(sanExt.rawData).names;
    for (const n of names.items) {
      if (n.type === 'dns') dns.push(n.value.toLowerCase());
      else if (n.type === 'ip') ip.push(normalizeHost(n.value) ?? n.value);
      else if (n.type === 'url') uri.push(n.value);
      else if (n.type === 'email') email.push(n.value);
    }
  }
  return { dns, ip, uri, email };
}

/**
 * Parses a CSR from PEM (first block, `CERTIFICATE REQUEST`) or DER, once it is within the bounds of
 * csr-bounds.ts (32 KiB, 100 SANs). Does not check the signature or the key policy: {@link parseAndVerifyCsr}
 * does. The SANs are read on first use of `sans`: the library reads them slowly, and most certificate profiles
 * copy none of them.
 * @throws PkiError `over-limit`, `not-pem`, `wrong-pem-type` or `bad-der`.
 */
export function parseCsr(input: string | Uint8Array): ParsedCsr {
  assertCsrSize(input);
  const der =
    typeof input === 'string'
      ? decodeFirstPemBlock(input, CSR_PEM_TYPES, 'certificate signing request').der
      : Buffer.from(input);
  assertCsrSans(der);
  try {
    const raw = new x509.Pkcs10CertificateRequest(der);
    const publicKeySpki = Buffer.from(raw.publicKey.rawData);
    const publicKey = createPublicKey({ key: publicKeySpki, format: 'der', type: 'spki' });
    let sans: SubjectAltNames | undefined;
    return {
      der,
      subject: raw.subject,
      subjectDer: Buffer.from(raw.subjectName.toArrayBuffer()),
      commonName: raw.subjectName.getField('CN')[0],
      get sans() {
        try {
          return (sans ??= requestedSans(raw));
        } catch (cause) {
          throw new PkiError('bad-der', 'could not parse the subject alternative names of the request', { cause });
        }
      },
      publicKey,
      publicKeySpki,
      keyDescription: describeKey(publicKey),
      raw,
    };
  } catch (cause) {
    throw new PkiError('bad-der', 'could not parse the certificate signing request', { cause });
  }
}

/** True when the CSR's self-signature verifies with the public key it carries (proof of key possession). */
export async function verifyCsrSignature(csr: ParsedCsr): Promise<boolean> {
  try {
    return await csr.raw.verify();
  } catch {
    return false;
  }
}

/**
 * Parses a CSR and checks what signing requires: the key is acceptable (RSA ≥ 2048, EC P-256/384/521) and the
 * self-signature verifies.
 * @throws PkiError `over-limit`, `not-pem`, `wrong-pem-type`, `bad-der`, `unsupported-key` or `bad-csr`.
 */
export async function parseAndVerifyCsr(input: string | Uint8Array | ParsedCsr): Promise<ParsedCsr> {
  const csr = typeof input === 'string' || input instanceof Uint8Array ? parseCsr(input) : input;
  assertAcceptableKey(csr.publicKey);
  if (!(await verifyCsrSignature(csr))) {
    throw new PkiError('bad-csr', 'the certificate signing request signature does not verify');
  }
  return csr;
}

/** Options of {@link generateKeyAndCsr}. */
export interface GenerateKeyAndCsrOptions {
  /** Subject CN (e.g. the identity name, or the router id for router enrollment). */
  readonly commonName: string;
  /** Default `ec-p256`: small, fast, and accepted by every OpenZiti component. */
  readonly keyType?: KeyType;
  /** SANs to request (host names or IP literals), e.g. for a router's server certificate. */
  readonly hosts?: readonly string[];
}

/** A new private key and the CSR for it, both as PEM. */
export interface KeyAndCsr {
  /** PKCS#8 PEM. */
  readonly privateKeyPem: string;
  readonly csrPem: string;
  readonly keyType: KeyType;
}

/** Client side of enrollment: generates a key pair and a CSR signed with it. */
export async function generateKeyAndCsr(options: GenerateKeyAndCsrOptions): Promise<KeyAndCsr> {
  const keyType = options.keyType ?? 'ec-p256';
  const pair = await generateKeyPair(keyType);
  const signer = await toWebSigningKey(pair.privateKey);
  const publicKey = await globalThis.crypto.subtle.importKey(
    'spki',
    pair.publicKey.export({ format: 'der', type: 'spki' }),
    signer.key.algorithm,
    true,
    ['verify'],
  );
  const extensions: InstanceType<typeof x509.Extension>[] = [];
  const sanItems = (options.hosts ?? [])
    .map((h) => normalizeHost(h))
    .filter((h): h is string => h !== undefined)
    .map((h) => ({ type: isIP(h) !== 0 ? ('ip' as const) : ('dns' as const), value: h }));
  if (sanItems.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(sanItems));
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: [{ CN: [options.commonName] }],
    keys: { privateKey: signer.key, publicKey },
    signingAlgorithm: signer.algorithm,
    extensions,
  });
  return {
    privateKeyPem: privateKeyToPem(pair.privateKey),
    csrPem: encodePem('CERTIFICATE REQUEST', new Uint8Array(csr.rawData)),
    keyType,
  };
}
