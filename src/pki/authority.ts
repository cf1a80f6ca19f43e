/**
 * A certificate authority: a CA certificate with its private key, able to issue certificates.
 *
 * This is the low-level "put these fields in a certificate and sign it" layer; the certificate profiles
 * (client, router server, API session, controller server, intermediate) live in `sign.ts` and `ca.ts`.
 */
import { randomBytes } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import { normalizeHost, parseCertificate, parseCertificateDer } from './certificate.js';
import type { ParsedCertificate } from './certificate.js';
import { PkiError } from './errors.js';
import { keysMatch, parsePrivateKeyPem, publicKeySpkiDer, toWebSigningKey } from './keys.js';
import type { WebSigningKey } from './keys.js';
import { x509 } from './x509-lib.js';

/** Key usage bits (RFC 5280 §4.2.1.3), with the values `@peculiar/x509` expects, so callers need not import it. */
export const KeyUsage = {
  digitalSignature: 1,
  nonRepudiation: 2,
  keyEncipherment: 4,
  dataEncipherment: 8,
  keyAgreement: 16,
  keyCertSign: 32,
  cRLSign: 64,
} as const;

/** Extended key usage OIDs used by the controller's profiles. */
export const ExtendedKeyUsage = {
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
} as const;

/** A distinguished name: text (`O=edgectl, CN=x`), attribute list (`[{ CN: ['x'] }]`) or DER bytes. */
export type DistinguishedName = string | Array<Record<string, string[]>> | Uint8Array;

/** The SANs to put in a certificate. Hosts are sorted into DNS and IP entries automatically. */
export interface SanRequest {
  readonly hosts?: readonly string[];
  readonly uris?: readonly string[];
  readonly emails?: readonly string[];
}

/** Everything that goes into a certificate issued by {@link CertificateAuthority.issue}. */
export interface IssueParams {
  readonly subject: DistinguishedName;
  /** The subject's public key: a KeyObject or SubjectPublicKeyInfo DER. */
  readonly publicKey: KeyObject | Uint8Array;
  readonly notBefore: Date;
  /** Clamped to the issuing CA's own notAfter: a certificate never outlives its issuer. */
  readonly notAfter: Date;
  readonly isCA: boolean;
  /** For CA certificates: how many CAs may follow below. */
  readonly pathLength?: number;
  /** Bit set of {@link KeyUsage}. */
  readonly keyUsage: number;
  readonly extendedKeyUsage?: readonly string[];
  readonly sans?: SanRequest;
}

function toName(dn: DistinguishedName): InstanceType<typeof x509.Name> {
  return dn instanceof Uint8Array ? new x509.Name(new Uint8Array(dn)) : new x509.Name(dn);
}

/** A random positive 128-bit serial number as hex (RFC 5280 allows up to 20 octets; CAs must not reuse serials). */
export function randomSerialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x01; // positive, and no leading zero octet to strip
  return bytes.toString('hex');
}

function sanExtension(
  sans: SanRequest | undefined,
  emptySubject: boolean,
): InstanceType<typeof x509.SubjectAlternativeNameExtension> | undefined {
  if (sans === undefined) return undefined;
  const items: Array<{ type: 'dns' | 'ip' | 'url' | 'email'; value: string }> = [];
  const seen = new Set<string>();
  for (const host of sans.hosts ?? []) {
    const h = normalizeHost(host);
    if (h === undefined || seen.has(h)) continue;
    seen.add(h);
    items.push({ type: isIP(h) !== 0 ? 'ip' : 'dns', value: h });
  }
  for (const uri of sans.uris ?? []) items.push({ type: 'url', value: uri });
  for (const email of sans.emails ?? []) items.push({ type: 'email', value: email });
  if (items.length === 0) return undefined;
  // RFC 5280 §4.2.1.6: with an empty subject the SAN extension carries the identity and must be critical.
  return new x509.SubjectAlternativeNameExtension(items, emptySubject);
}

/** Builds and signs a certificate; `signer` is the CA key and `issuer` its certificate (undefined = self-signed). */
async function buildCertificate(
  params: IssueParams,
  signer: WebSigningKey,
  issuer: ParsedCertificate | undefined,
): Promise<ParsedCertificate> {
  const subject = toName(params.subject);
  const subjectPublicKey = new x509.PublicKey(
    params.publicKey instanceof Uint8Array ? new Uint8Array(params.publicKey) : publicKeySpkiDer(params.publicKey),
  );
  const extensions: InstanceType<typeof x509.Extension>[] = [
    new x509.BasicConstraintsExtension(params.isCA, params.isCA ? params.pathLength : undefined, true),
    new x509.KeyUsagesExtension(params.keyUsage, true),
  ];
  if (params.extendedKeyUsage !== undefined && params.extendedKeyUsage.length > 0) {
    extensions.push(new x509.ExtendedKeyUsageExtension([...params.extendedKeyUsage], false));
  }
  const san = sanExtension(params.sans, subject.toArrayBuffer().byteLength <= 2);
  if (san !== undefined) extensions.push(san);
  extensions.push(await x509.SubjectKeyIdentifierExtension.create(subjectPublicKey));
  const issuerKey = issuer === undefined ? subjectPublicKey : new x509.PublicKey(publicKeySpkiDer(issuer.publicKey));
  extensions.push(await x509.AuthorityKeyIdentifierExtension.create(issuerKey));

  let notAfter = params.notAfter;
  if (issuer !== undefined && notAfter.getTime() > issuer.notAfter.getTime()) notAfter = issuer.notAfter;
  // X.509 times have one-second resolution; truncating keeps the returned dates equal to what is encoded.
  const notBefore = new Date(Math.floor(params.notBefore.getTime() / 1000) * 1000);
  notAfter = new Date(Math.floor(notAfter.getTime() / 1000) * 1000);

  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerialNumber(),
    subject,
    issuer: issuer === undefined ? subject : new x509.Name(new Uint8Array(issuer.subjectDer)),
    notBefore,
    notAfter,
    publicKey: subjectPublicKey,
    signingKey: signer.key,
    signingAlgorithm: signer.algorithm,
    extensions,
  });
  return parseCertificateDer(new Uint8Array(cert.rawData));
}

/** A CA certificate plus its private key. Create with {@link CertificateAuthority.load} or {@link createSelfSignedCa}. */
export class CertificateAuthority {
  private constructor(
    /** The CA's certificate. */
    readonly certificate: ParsedCertificate,
    private readonly privateKey: KeyObject,
    private readonly signer: WebSigningKey,
  ) {}

  /**
   * Pairs a CA certificate with its private key.
   * @throws PkiError `not-a-ca` when the certificate is not a CA, `key-mismatch` when the key is not its key.
   */
  static async load(cert: string | ParsedCertificate, key: string | KeyObject): Promise<CertificateAuthority> {
    const certificate = parseCertificate(cert);
    const privateKey = parsePrivateKeyPem(key);
    if (!certificate.isCA) throw new PkiError('not-a-ca', `certificate ${certificate.subject} is not a CA`);
    if (!keysMatch(privateKey, certificate.publicKey)) {
      throw new PkiError('key-mismatch', `the private key does not belong to ${certificate.subject}`);
    }
    return new CertificateAuthority(certificate, privateKey, await toWebSigningKey(privateKey));
  }

  /** The CA certificate as PEM. */
  get certPem(): string {
    return this.certificate.pem;
  }

  /** The CA's private key (for the controller to persist it; never send it anywhere). */
  get key(): KeyObject {
    return this.privateKey;
  }

  /** Issues a certificate signed by this CA. */
  issue(params: IssueParams): Promise<ParsedCertificate> {
    return buildCertificate(params, this.signer, this.certificate);
  }
}

/**
 * Creates a self-signed root CA certificate for `privateKey` and returns it loaded as an authority.
 * Key usage keyCertSign|cRLSign, basicConstraints cA (critical).
 */
export async function createSelfSignedCa(params: {
  readonly subject: DistinguishedName;
  readonly privateKey: KeyObject;
  readonly notBefore: Date;
  readonly notAfter: Date;
  readonly pathLength?: number;
}): Promise<CertificateAuthority> {
  const signer = await toWebSigningKey(params.privateKey);
  const cert = await buildCertificate(
    {
      subject: params.subject,
      publicKey: params.privateKey,
      notBefore: params.notBefore,
      notAfter: params.notAfter,
      isCA: true,
      ...(params.pathLength !== undefined ? { pathLength: params.pathLength } : {}),
      keyUsage: KeyUsage.keyCertSign | KeyUsage.cRLSign,
    },
    signer,
    undefined,
  );
  return CertificateAuthority.load(cert, params.privateKey);
}
