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
 *
 * Controllers sharing a PostgreSQL store keep the same items in the store instead, sealed under their master key
 * (model/controller-secrets.ts): the loader works on a {@link PkiStorage}, a directory or a set in memory that
 * its caller reads from and writes back to the store, with `shared` keeping the server key on re-issue.
 */
import { createPublicKey, randomBytes } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CertificateAuthority, createSelfSignedCa, KeyUsage } from './authority.js';
import { certificateCoversHost, normalizeHost, parseCertificate } from './certificate.js';
import type { CertificateInput, ParsedCertificate } from './certificate.js';
import type { ParsedCsr } from './csr.js';
import { PkiError } from './errors.js';
import {
  describeKey,
  generateKeyPair,
  jwsAlgorithmFor,
  keysMatch,
  parsePrivateKeyPem,
  privateKeyToPem,
} from './keys.js';
import type { KeyDescription, KeyType } from './keys.js';
import { signEnrollmentJwt, verifyEnrollmentJwt } from './jwt.js';
import { certificateJwk, jwsSignature, type PublicJwk } from './enrollment-keys.js';
import type { ControllerJwtKey, EnrollmentClaims, EnrollmentJwtInput, VerifyEnrollmentJwtOptions } from './jwt.js';
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
  /**
   * The PKI is shared by several controllers (kept in their common store): a server certificate that must be
   * re-issued keeps its key, which signs the enrollment JWTs every replica hands out and clients check against
   * whichever replica answers, and covers the hosts it covered besides this controller's, so the replicas'
   * certificates converge on one. Default false (a controller of its own re-issues with a new key, as ever).
   */
  readonly shared?: boolean;
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

/** The PEM texts a PKI consists of (every entry of {@link PKI_FILES} but the derived CA bundle). */
export type PkiItem = Exclude<(typeof PKI_FILES)[keyof typeof PKI_FILES], typeof PKI_FILES.caBundle>;

/** Every {@link PkiItem}, keys and certificates alike. */
export const PKI_ITEMS: readonly PkiItem[] = [
  PKI_FILES.rootCert,
  PKI_FILES.rootKey,
  PKI_FILES.intermediateCert,
  PKI_FILES.intermediateKey,
  PKI_FILES.serverCert,
  PKI_FILES.serverKey,
];

/** Whether an item is a private key (kept 0600 on disk). */
export const isKeyItem = (item: PkiItem): boolean => item.endsWith('.key.pem');

/**
 * Where a PKI's PEM texts are kept: the files of a directory, or (for controllers sharing a store) a set the
 * caller reads from and writes back to the store ({@link PkiMemory}). Reads and writes are synchronous: a store
 * is read before and written after {@link loadOrCreateControllerPkiIn}.
 */
export interface PkiStorage {
  /** Names the storage in messages: the directory, or the store. */
  readonly where: string;
  read(item: PkiItem): string | undefined;
  write(item: PkiItem, pem: string): void;
}

/** A PKI held in memory, for a caller that loads it from and saves it to somewhere else; `changed` says what to save. */
export class PkiMemory implements PkiStorage {
  readonly items: Map<PkiItem, string>;
  readonly changed = new Set<PkiItem>();
  constructor(
    readonly where: string,
    items: Iterable<readonly [PkiItem, string]> = [],
  ) {
    this.items = new Map(items);
  }
  read(item: PkiItem): string | undefined {
    return this.items.get(item);
  }
  write(item: PkiItem, pem: string): void {
    this.items.set(item, pem);
    this.changed.add(item);
  }
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

/** The files of a directory (created 0700); key files are written 0600 and tightened to 0600 when read. */
function directoryStorage(dir: string): PkiStorage {
  const path = (name: string): string => join(dir, name);
  return {
    where: dir,
    read(item) {
      const file = path(item);
      const pem = readIfExists(file);
      if (pem !== undefined && isKeyItem(item) && (statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
      return pem;
    },
    write(item, pem) {
      writeFileAtomic(path(item), pem, isKeyItem(item) ? 0o600 : 0o644);
    },
  };
}

/** Runs `read`; a CA item that cannot be read is fatal (replacing it would silently change trust). */
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

/** Runs `read`; a server item that cannot be read is simply re-issued. */
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
 * repaired and what is refused), and keeps `ca-bundle.pem` beside it.
 * @throws PkiError `corrupt-pki` when CA files are inconsistent (e.g. an intermediate without its root, or not
 *   signed by it), or the error of an unreadable file.
 */
export async function loadOrCreateControllerPki(dir: string, options: ControllerPkiOptions): Promise<ControllerPki> {
  ensureDir(dir);
  const pki = await loadOrCreateControllerPkiIn(directoryStorage(dir), options);
  writeCaBundle(dir, pki.caBundlePem);
  return pki;
}

/** Keeps `<dir>/ca-bundle.pem` (intermediate + root, for operators' `curl --cacert`) up to date. */
export function writeCaBundle(dir: string, caBundlePem: string): void {
  ensureDir(dir);
  const file = join(dir, PKI_FILES.caBundle);
  if (readIfExists(file) !== caBundlePem) writeFileAtomic(file, caBundlePem, 0o644);
}

/**
 * Loads the controller PKI from `storage`, creating whatever is missing, as {@link loadOrCreateControllerPki}
 * does with a directory.
 */
export async function loadOrCreateControllerPkiIn(
  storage: PkiStorage,
  options: ControllerPkiOptions,
): Promise<ControllerPki> {
  const now = options.now ?? new Date();
  const where = storage.where;
  const readKey = (item: PkiItem): KeyObject | undefined => {
    const pem = storage.read(item);
    return pem === undefined ? undefined : parsePrivateKeyPem(pem);
  };

  // Root CA.
  const rootCertPem = storage.read(PKI_FILES.rootCert);
  const intermediateCertPemStored = storage.read(PKI_FILES.intermediateCert);
  let root: ParsedCertificate;
  let rootKey = readCaFile(PKI_FILES.rootKey, () => readKey(PKI_FILES.rootKey));
  let rootChange: ControllerPkiChanges['root'] = 'loaded';
  const pkiId = randomBytes(4).toString('hex');
  if (rootCertPem === undefined) {
    if (intermediateCertPemStored !== undefined) {
      throw new PkiError(
        'corrupt-pki',
        `${PKI_FILES.intermediateCert} exists in ${where} but ${PKI_FILES.rootCert} does not`,
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
    storage.write(PKI_FILES.rootKey, privateKeyToPem(pair.privateKey));
    storage.write(PKI_FILES.rootCert, rootCa.certPem);
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
  const intermediateKeyStored = readCaFile(PKI_FILES.intermediateKey, () => readKey(PKI_FILES.intermediateKey));
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
    storage.write(PKI_FILES.intermediateKey, privateKeyToPem(key));
    storage.write(PKI_FILES.intermediateCert, cert.pem);
    return CertificateAuthority.load(cert, key);
  };
  if (intermediateCertPemStored === undefined || intermediateKeyStored === undefined) {
    const pair = await generateKeyPair(options.keyType ?? keyTypeFor(root.keyDescription));
    const cn = root.commonName?.replace('Root CA', 'Intermediate CA') ?? `edgectl Intermediate CA ${pkiId}`;
    intermediate = await issueIntermediate([{ O: ['edgectl'] }, { CN: [cn] }], pair.privateKey);
    intermediateChange = 'created';
  } else {
    const cert = readCaFile(PKI_FILES.intermediateCert, () => parseCertificate(intermediateCertPemStored));
    if (!isIssuedBy(cert, root)) {
      throw new PkiError('corrupt-pki', `${PKI_FILES.intermediateCert} is not signed by ${PKI_FILES.rootCert}`);
    }
    try {
      intermediate = await CertificateAuthority.load(cert, intermediateKeyStored);
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
      intermediate = await issueIntermediate(cert.subjectDer, intermediateKeyStored);
      intermediateChange = 'renewed';
    }
  }

  // Server certificate.
  let hosts = serverHostsFor(options.hosts);
  const serverCertPemStored = storage.read(PKI_FILES.serverCert);
  const serverKeyStored = readServerFile(() => readKey(PKI_FILES.serverKey));
  let serverChange: ControllerPkiChanges['server'] = 'loaded';
  let serverReason: ControllerPkiChanges['serverReason'];
  let server: ParsedCertificate | undefined;
  let serverKey: KeyObject | undefined;
  /** A shared PKI's server certificate that must be re-issued: its hosts are kept besides ours. */
  let previousHosts: readonly string[] = [];
  if (serverCertPemStored !== undefined && serverKeyStored !== undefined) {
    const cert = readServerFile(() => parseCertificate(serverCertPemStored));
    if (cert === 'unreadable' || serverKeyStored === 'unreadable') serverReason = 'unreadable';
    else if (!keysMatch(serverKeyStored, cert.publicKey)) serverReason = 'key-mismatch';
    else if (!isIssuedBy(cert, intermediate.certificate)) serverReason = 'not-issued-by-intermediate';
    else if (!hosts.every((h) => certificateCoversHost(cert, h))) serverReason = 'hosts-not-covered';
    else if (cert.notAfter.getTime() - now.getTime() < SERVER_RENEW_BEFORE_MS) serverReason = 'expiring';
    if (serverReason === undefined && cert !== 'unreadable' && serverKeyStored !== 'unreadable') {
      server = cert;
      serverKey = serverKeyStored;
    } else {
      serverChange = 'reissued';
      if (options.shared && cert !== 'unreadable') previousHosts = [...cert.sans.dns, ...cert.sans.ip];
    }
  } else {
    serverChange = 'created';
  }
  if (server === undefined || serverKey === undefined) {
    // A shared PKI keeps a readable server key: it signed the enrollment JWTs handed out so far.
    const kept = options.shared && serverKeyStored !== undefined && serverKeyStored !== 'unreadable';
    const privateKey = kept
      ? serverKeyStored
      : (await generateKeyPair(options.keyType ?? keyTypeFor(describeKey(intermediate.key)))).privateKey;
    if (options.shared) hosts = serverHostsFor([...previousHosts, ...hosts]);
    const publicKey = createPublicKey(privateKey);
    const issued = await issueControllerServerCertificate(intermediate, publicKey, describeKey(publicKey), hosts, {
      now,
      validityMs: SERVER_VALIDITY_MS,
    });
    if (!kept) storage.write(PKI_FILES.serverKey, privateKeyToPem(privateKey));
    storage.write(PKI_FILES.serverCert, issued.certPem);
    server = issued.certificate;
    serverKey = privateKey;
  }

  return new ControllerPki({
    dir: where,
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

  /**
   * The key of the controller's own JWTs (jwt.ts, `controllerJwtKey`), from what is loaded already: parsing the
   * server certificate again cost a start about 6 ms of CPU.
   */
  jwtKey(): ControllerJwtKey {
    return {
      alg: jwsAlgorithmFor(this.serverKey),
      kid: this.server.fingerprint,
      privateKey: this.serverKey,
      publicKey: this.server.publicKey,
    };
  }

  /** Signs an enrollment JWT with the server key (see {@link signEnrollmentJwt}). */
  signEnrollmentJwt(input: EnrollmentJwtInput): Promise<string> {
    return signEnrollmentJwt(input, { key: this.serverKey, cert: this.server });
  }

  /** The public keys that sign enrollment JWTs (`GET /enroll/jwks`): the server key, `kid` = its fingerprint. */
  async enrollmentJwks(): Promise<{ keys: PublicJwk[] }> {
    return { keys: [await certificateJwk(this.server, [this.server, this.intermediate.certificate])] };
  }

  /**
   * Signs a client's nonce with the enrollment key named `kid` (`POST /enroll/challenge`); undefined when no
   * enrollment key has that id.
   */
  signNonce(kid: string, nonce: string): { signature: string; algorithm: string; kid: string } | undefined {
    if (kid !== this.server.fingerprint) return undefined;
    return { ...jwsSignature(this.serverKey, nonce), kid };
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
