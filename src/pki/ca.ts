/**
 * The controller's own PKI, kept in a directory: a root CA, an intermediate CA that signs everything the
 * controller issues (client, router, API-session and its own server certificates), and the TLS server
 * certificate of the API listener.
 *
 * Created on first start and reused afterwards. Later starts repair what can be repaired without breaking trust:
 * a server certificate that does not cover the configured hosts, is about to expire, or no longer matches the
 * intermediate is re-issued (new key) from the existing intermediate; an intermediate close to expiry is re-issued
 * from the root with the same key and subject, so certificates it signed stay valid. The CAs themselves are never
 * replaced silently: inconsistent CA files raise `corrupt-pki`.
 *
 * Key choice: EC P-256 by default. Keys generate instantly, signatures and handshakes are cheap, certificates
 * are small, and every OpenZiti component (Go SDK, C SDK / tunnelers, routers) handles ECDSA; enrollment JWTs
 * are then ES256. `keyType` selects RSA for environments that require it.
 *
 * Files (`dir` is created with mode 0700, private keys are written 0600 and tightened to 0600 if found looser):
 * `root-ca.key.pem`, `root-ca.cert.pem`, `intermediate-ca.key.pem`, `intermediate-ca.cert.pem`,
 * `server.key.pem`, `server.cert.pem`, and `ca-bundle.pem` (intermediate + root, for operators' `curl --cacert`).
 */
import { randomBytes } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CertificateAuthority, createSelfSignedCa, KeyUsage } from './authority.js';
import { certificateCoversHost, normalizeHost, parseCertificate } from './certificate.js';
import type { CertificateInput, ParsedCertificate } from './certificate.js';
import type { ParsedCsr } from './csr.js';
import { PkiError } from './errors.js';
import { describeKey, generateKeyPair, keysMatch, parsePrivateKeyPem, privateKeyToPem } from './keys.js';
import type { KeyDescription, KeyType } from './keys.js';
import { signEnrollmentJwt, verifyEnrollmentJwt } from './jwt.js';
import type { EnrollmentClaims, EnrollmentJwtInput, VerifyEnrollmentJwtOptions } from './jwt.js';
import { joinPem } from './pem.js';
import { caBundlePkcs7Base64 } from './pkcs7.js';
import {
  DEFAULT_TRUST_DOMAIN,
  issueControllerServerCertificate,
  signClientCsr,
  signServerCsr,
  signSessionCsr,
} from './sign.js';
import type {
  ClientCertificateOptions,
  IssuedCertificate,
  ServerCertificateOptions,
  SessionCertificateOptions,
} from './sign.js';
import { isIssuedBy, verifyChain } from './verify.js';
import type { ChainVerification } from './verify.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Root CA lifetime: 20 years. */
export const ROOT_VALIDITY_MS = 20 * 365 * DAY_MS;
/** Intermediate CA lifetime: 10 years; re-issued (same key) when less than a year is left. */
export const INTERMEDIATE_VALIDITY_MS = 10 * 365 * DAY_MS;
export const INTERMEDIATE_RENEW_BEFORE_MS = 365 * DAY_MS;
/** Controller server certificate lifetime: 2 years; re-issued at start when less than 60 days are left. */
export const SERVER_VALIDITY_MS = 2 * 365 * DAY_MS;
export const SERVER_RENEW_BEFORE_MS = 60 * DAY_MS;

/** Hosts every controller server certificate covers, besides the configured ones. */
export const DEFAULT_SERVER_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '::1'];

/** File names inside the PKI directory. */
export const PKI_FILES = {
  rootCert: 'root-ca.cert.pem',
  rootKey: 'root-ca.key.pem',
  intermediateCert: 'intermediate-ca.cert.pem',
  intermediateKey: 'intermediate-ca.key.pem',
  serverCert: 'server.cert.pem',
  serverKey: 'server.key.pem',
  caBundle: 'ca-bundle.pem',
} as const;

/** Options of {@link loadOrCreateControllerPki}. */
export interface ControllerPkiOptions {
  /**
   * Hosts (DNS names or IP literals) clients use to reach the controller, e.g. the listen / advertised host.
   * Unspecified addresses (`0.0.0.0`, `::`) are skipped: a certificate cannot name them; pass the advertised
   * address instead. `localhost`, `127.0.0.1` and `::1` are always added.
   */
  readonly hosts: readonly string[];
  /** Key type of newly generated keys. Default: `ec-p256` for new CAs; the intermediate's type on re-issue. */
  readonly keyType?: KeyType;
  /** SPIFFE trust domain of identity URIs in client certificates; default `edgectl`. */
  readonly trustDomain?: string;
  /** The current time (tests). */
  readonly now?: Date;
}

/** What {@link loadOrCreateControllerPki} did, for the caller to log. */
export interface ControllerPkiChanges {
  readonly root: 'created' | 'loaded';
  readonly intermediate: 'created' | 'loaded' | 'renewed';
  readonly server: 'created' | 'loaded' | 'reissued';
  /** Why the server certificate was re-issued, when it was. */
  readonly serverReason?:
    'hosts-not-covered' | 'expiring' | 'not-issued-by-intermediate' | 'key-mismatch' | 'unreadable';
}

function readIfExists(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
}

/** Writes `data` atomically (temp file + rename) with `mode`, so a crash never leaves a half-written PEM. */
function writeFileAtomic(path: string, data: string, mode: number): void {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, data, { mode, flag: 'wx' });
  chmodSync(tmp, mode); // the umask may have removed bits; make the mode exact
  renameSync(tmp, path);
}

/** Reads a private key file, tightening its mode to 0600 if it is readable by others. */
function readKey(path: string): KeyObject | undefined {
  const pem = readIfExists(path);
  if (pem === undefined) return undefined;
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  return parsePrivateKeyPem(pem);
}

/** Runs `read`; a CA file that cannot be read is fatal (replacing it would silently change trust). */
function readCaFile<T>(name: string, read: () => T): T {
  try {
    return read();
  } catch (cause) {
    throw new PkiError(
      'corrupt-pki',
      `cannot read ${name}: ${cause instanceof Error ? cause.message : String(cause)}`,
      {
        cause,
      },
    );
  }
}

/** Runs `read`; a server file that cannot be read is simply re-issued. */
function readServerFile<T>(read: () => T): T | 'unreadable' {
  try {
    return read();
  } catch {
    return 'unreadable';
  }
}

function keyTypeFor(desc: KeyDescription): KeyType {
  if (desc.kind === 'rsa') return desc.bits >= 4096 ? 'rsa-4096' : desc.bits >= 3072 ? 'rsa-3072' : 'rsa-2048';
  if (desc.kind === 'ec' && desc.curve !== 'P-256') return 'ec-p384';
  return 'ec-p256';
}

/** The configured hosts, normalised, wildcards removed, defaults appended, duplicates removed. */
export function serverHostsFor(hosts: readonly string[]): string[] {
  const out: string[] = [];
  for (const host of [...hosts, ...DEFAULT_SERVER_HOSTS]) {
    const h = normalizeHost(host);
    if (h === undefined || h === '0.0.0.0' || h === '::' || h === '*' || out.includes(h)) continue;
    out.push(h);
  }
  return out;
}

/** Ensures the directory exists with mode 0700. */
function ensureDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}

/**
 * Loads the controller PKI from `dir`, creating whatever is missing (see the module comment for what is
 * repaired and what is refused).
 * @throws PkiError `corrupt-pki` when CA files are inconsistent (e.g. an intermediate without its root, or not
 *   signed by it), or the error of an unreadable file.
 */
export async function loadOrCreateControllerPki(dir: string, options: ControllerPkiOptions): Promise<ControllerPki> {
  const now = options.now ?? new Date();
  const path = (name: string): string => join(dir, name);
  ensureDir(dir);

  // Root CA.
  const rootCertPem = readIfExists(path(PKI_FILES.rootCert));
  const intermediateCertPemOnDisk = readIfExists(path(PKI_FILES.intermediateCert));
  let root: ParsedCertificate;
  let rootKey = readCaFile(PKI_FILES.rootKey, () => readKey(path(PKI_FILES.rootKey)));
  let rootChange: ControllerPkiChanges['root'] = 'loaded';
  const pkiId = randomBytes(4).toString('hex');
  if (rootCertPem === undefined) {
    if (intermediateCertPemOnDisk !== undefined) {
      throw new PkiError(
        'corrupt-pki',
        `${PKI_FILES.intermediateCert} exists in ${dir} but ${PKI_FILES.rootCert} does not`,
      );
    }
    const pair = await generateKeyPair(options.keyType ?? 'ec-p256');
    const rootCa = await createSelfSignedCa({
      subject: [{ O: ['edgectl'] }, { CN: [`edgectl Root CA ${pkiId}`] }],
      privateKey: pair.privateKey,
      notBefore: new Date(now.getTime() - 60_000),
      notAfter: new Date(now.getTime() + ROOT_VALIDITY_MS),
      pathLength: 1,
    });
    writeFileAtomic(path(PKI_FILES.rootKey), privateKeyToPem(pair.privateKey), 0o600);
    writeFileAtomic(path(PKI_FILES.rootCert), rootCa.certPem, 0o644);
    root = rootCa.certificate;
    rootKey = pair.privateKey;
    rootChange = 'created';
  } else {
    root = readCaFile(PKI_FILES.rootCert, () => parseCertificate(rootCertPem));
    if (!root.isCA) throw new PkiError('corrupt-pki', `${PKI_FILES.rootCert} is not a CA certificate`);
    if (rootKey !== undefined && !keysMatch(rootKey, root.publicKey)) {
      throw new PkiError('corrupt-pki', `${PKI_FILES.rootKey} does not belong to ${PKI_FILES.rootCert}`);
    }
  }
  const rootCa = (): Promise<CertificateAuthority> => {
    if (rootKey === undefined) {
      throw new PkiError(
        'corrupt-pki',
        `${PKI_FILES.rootKey} is missing; it is needed to (re-)issue the intermediate CA`,
      );
    }
    return CertificateAuthority.load(root, rootKey);
  };

  // Intermediate CA.
  let intermediate: CertificateAuthority;
  let intermediateChange: ControllerPkiChanges['intermediate'] = 'loaded';
  const intermediateKeyOnDisk = readCaFile(PKI_FILES.intermediateKey, () => readKey(path(PKI_FILES.intermediateKey)));
  const issueIntermediate = async (subject: Uint8Array | Array<Record<string, string[]>>, key: KeyObject) => {
    const cert = await (
      await rootCa()
    ).issue({
      subject,
      publicKey: key,
      notBefore: new Date(now.getTime() - 60_000),
      notAfter: new Date(now.getTime() + INTERMEDIATE_VALIDITY_MS),
      isCA: true,
      pathLength: 0,
      keyUsage: KeyUsage.keyCertSign | KeyUsage.cRLSign | KeyUsage.digitalSignature,
    });
    writeFileAtomic(path(PKI_FILES.intermediateKey), privateKeyToPem(key), 0o600);
    writeFileAtomic(path(PKI_FILES.intermediateCert), cert.pem, 0o644);
    return CertificateAuthority.load(cert, key);
  };
  if (intermediateCertPemOnDisk === undefined || intermediateKeyOnDisk === undefined) {
    const pair = await generateKeyPair(options.keyType ?? keyTypeFor(root.keyDescription));
    const cn = root.commonName?.replace('Root CA', 'Intermediate CA') ?? `edgectl Intermediate CA ${pkiId}`;
    intermediate = await issueIntermediate([{ O: ['edgectl'] }, { CN: [cn] }], pair.privateKey);
    intermediateChange = 'created';
  } else {
    const cert = readCaFile(PKI_FILES.intermediateCert, () => parseCertificate(intermediateCertPemOnDisk));
    if (!isIssuedBy(cert, root)) {
      throw new PkiError('corrupt-pki', `${PKI_FILES.intermediateCert} is not signed by ${PKI_FILES.rootCert}`);
    }
    try {
      intermediate = await CertificateAuthority.load(cert, intermediateKeyOnDisk);
    } catch (cause) {
      throw new PkiError(
        'corrupt-pki',
        `${PKI_FILES.intermediateKey} / ${PKI_FILES.intermediateCert}: ${String(cause)}`,
        {
          cause,
        },
      );
    }
    if (cert.notAfter.getTime() - now.getTime() < INTERMEDIATE_RENEW_BEFORE_MS && rootKey !== undefined) {
      intermediate = await issueIntermediate(cert.subjectDer, intermediateKeyOnDisk);
      intermediateChange = 'renewed';
    }
  }

  // Server certificate.
  const hosts = serverHostsFor(options.hosts);
  const serverCertPemOnDisk = readIfExists(path(PKI_FILES.serverCert));
  const serverKeyOnDisk = readServerFile(() => readKey(path(PKI_FILES.serverKey)));
  let serverChange: ControllerPkiChanges['server'] = 'loaded';
  let serverReason: ControllerPkiChanges['serverReason'];
  let server: ParsedCertificate | undefined;
  let serverKey: KeyObject | undefined;
  if (serverCertPemOnDisk !== undefined && serverKeyOnDisk !== undefined) {
    const cert = readServerFile(() => parseCertificate(serverCertPemOnDisk));
    if (cert === 'unreadable' || serverKeyOnDisk === 'unreadable') serverReason = 'unreadable';
    else if (!keysMatch(serverKeyOnDisk, cert.publicKey)) serverReason = 'key-mismatch';
    else if (!isIssuedBy(cert, intermediate.certificate)) serverReason = 'not-issued-by-intermediate';
    else if (!hosts.every((h) => certificateCoversHost(cert, h))) serverReason = 'hosts-not-covered';
    else if (cert.notAfter.getTime() - now.getTime() < SERVER_RENEW_BEFORE_MS) serverReason = 'expiring';
    if (serverReason === undefined && cert !== 'unreadable' && serverKeyOnDisk !== 'unreadable') {
      server = cert;
      serverKey = serverKeyOnDisk;
    } else {
      serverChange = 'reissued';
    }
  } else {
    serverChange = 'created';
  }
  if (server === undefined || serverKey === undefined) {
    const pair = await generateKeyPair(options.keyType ?? keyTypeFor(describeKey(intermediate.key)));
    const issued = await issueControllerServerCertificate(
      intermediate,
      pair.publicKey,
      describeKey(pair.publicKey),
      hosts,
      { now, validityMs: SERVER_VALIDITY_MS },
    );
    writeFileAtomic(path(PKI_FILES.serverKey), privateKeyToPem(pair.privateKey), 0o600);
    writeFileAtomic(path(PKI_FILES.serverCert), issued.certPem, 0o644);
    server = issued.certificate;
    serverKey = pair.privateKey;
  }

  const caBundlePem = joinPem([intermediate.certPem, root.pem]);
  if (readIfExists(path(PKI_FILES.caBundle)) !== caBundlePem) {
    writeFileAtomic(path(PKI_FILES.caBundle), caBundlePem, 0o644);
  }

  return new ControllerPki({
    dir,
    trustDomain: options.trustDomain ?? DEFAULT_TRUST_DOMAIN,
    root,
    intermediate,
    server,
    serverKey,
    changes: {
      root: rootChange,
      intermediate: intermediateChange,
      server: serverChange,
      ...(serverReason !== undefined ? { serverReason } : {}),
    },
  });
}

/** The loaded controller PKI: PEMs to serve and configure TLS with, and the signing operations. */
export class ControllerPki {
  readonly dir: string;
  readonly trustDomain: string;
  readonly root: ParsedCertificate;
  /** The issuing CA (signs client, router, API-session and the controller's server certificates). */
  readonly intermediate: CertificateAuthority;
  readonly server: ParsedCertificate;
  /** What loading did. */
  readonly changes: ControllerPkiChanges;

  readonly rootCertPem: string;
  readonly intermediateCertPem: string;
  /** Intermediate + root: what clients trust (`enrollmentCerts.ca`, `/.well-known/est/cacerts`, TLS `ca`). */
  readonly caBundlePem: string;
  readonly serverCertPem: string;
  /** Server + intermediate: the TLS listener's `cert`. */
  readonly serverCertChainPem: string;
  /** PKCS#8 PEM: the TLS listener's `key`; also signs enrollment JWTs. */
  readonly serverKeyPem: string;
  /** The hosts (DNS names and IPs) the server certificate covers. */
  readonly serverHosts: readonly string[];

  private readonly serverKey: KeyObject;
  private pkcs7Cache: string | undefined;

  constructor(parts: {
    dir: string;
    trustDomain: string;
    root: ParsedCertificate;
    intermediate: CertificateAuthority;
    server: ParsedCertificate;
    serverKey: KeyObject;
    changes: ControllerPkiChanges;
  }) {
    this.dir = parts.dir;
    this.trustDomain = parts.trustDomain;
    this.root = parts.root;
    this.intermediate = parts.intermediate;
    this.server = parts.server;
    this.serverKey = parts.serverKey;
    this.changes = parts.changes;
    this.rootCertPem = parts.root.pem;
    this.intermediateCertPem = parts.intermediate.certPem;
    this.caBundlePem = joinPem([this.intermediateCertPem, this.rootCertPem]);
    this.serverCertPem = parts.server.pem;
    this.serverCertChainPem = joinPem([this.serverCertPem, this.intermediateCertPem]);
    this.serverKeyPem = privateKeyToPem(parts.serverKey);
    this.serverHosts = [...parts.server.sans.dns, ...parts.server.sans.ip];
  }

  /** The controller's CA certificates, [intermediate, root]. */
  get caCertificates(): readonly ParsedCertificate[] {
    return [this.intermediate.certificate, this.root];
  }

  /** Body of `GET /.well-known/est/cacerts` (base64 PKCS#7 certs-only of the CA bundle, 64-char lines). */
  caBundlePkcs7Base64(): string {
    this.pkcs7Cache ??= caBundlePkcs7Base64(this.caCertificates);
    return this.pkcs7Cache;
  }

  /** Signs an identity (or router) client certificate; see {@link signClientCsr}. */
  signClientCsr(
    csr: string | Uint8Array | ParsedCsr,
    options: Omit<ClientCertificateOptions, 'trustDomain'>,
  ): Promise<IssuedCertificate> {
    return signClientCsr(this.intermediate, csr, { ...options, trustDomain: this.trustDomain });
  }

  /** Signs a router server certificate; see {@link signServerCsr}. */
  signServerCsr(csr: string | Uint8Array | ParsedCsr, options?: ServerCertificateOptions): Promise<IssuedCertificate> {
    return signServerCsr(this.intermediate, csr, options);
  }

  /** Signs a 12-hour API-session certificate; see {@link signSessionCsr}. */
  signSessionCsr(
    csr: string | Uint8Array | ParsedCsr,
    options: Omit<SessionCertificateOptions, 'trustDomain'>,
  ): Promise<IssuedCertificate> {
    return signSessionCsr(this.intermediate, csr, { ...options, trustDomain: this.trustDomain });
  }

  /** Signs an enrollment JWT with the server key (see {@link signEnrollmentJwt}). */
  signEnrollmentJwt(input: EnrollmentJwtInput): Promise<string> {
    return signEnrollmentJwt(input, { key: this.serverKey, cert: this.server });
  }

  /** Verifies an enrollment JWT against this controller's server certificate. */
  verifyEnrollmentJwt(jwt: string, options?: VerifyEnrollmentJwtOptions): Promise<EnrollmentClaims> {
    return verifyEnrollmentJwt(jwt, this.server, options);
  }

  /**
   * Verifies a client certificate (first TLS peer certificate, the rest as `intermediates`) against the
   * controller's CAs, ignoring validity dates. parity (§5.3): first against the root alone, with the client's
   * intermediates; failing that, against root + intermediate, which succeeds for clients that sent only their
   * leaf and is flagged `improperChain`.
   */
  verifyClientCertificate(
    leaf: CertificateInput,
    intermediates: readonly CertificateInput[] = [],
    now?: Date,
  ): ChainVerification & { readonly improperChain: boolean } {
    const base = { intermediates, ...(now !== undefined ? { now } : {}) };
    const proper = verifyChain(leaf, { ...base, trusted: [this.root] });
    if (proper.ok) return { ...proper, improperChain: false };
    const fallback = verifyChain(leaf, { ...base, trusted: this.caCertificates });
    return { ...fallback, improperChain: fallback.ok };
  }
}
