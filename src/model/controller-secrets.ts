/**
 * The controller's secrets in a store shared by several controllers (docs/decisions.md, "Shared controller
 * secrets"): the PKI (root and intermediate CA keys and certificates, the server key and certificate) and the
 * token key, each a row of `controller_secrets` sealed under the master key every replica is given
 * (pki/master-key.ts). The master key is never stored.
 *
 * - The first replica to start creates them; the others load them. Creation runs in one write transaction, which
 *   on PostgreSQL holds the writer lock every write transaction takes first (store/runtime.ts): replicas
 *   starting together take turns, and every one after the first finds what the first stored.
 * - A master key that does not open what is stored is refused before anything is written: never re-keyed,
 *   never overwritten.
 * - The server key stays the same for good (`shared` in pki/ca.ts): it signs the enrollment JWTs, and a client
 *   checks a JWT against the server certificate of whichever replica answers it.
 * - `pki export` / `pki import` move a controller's PKI and token key from its data dir into such a store, in a
 *   file sealed under the same master key ({@link sealExport}, {@link openExport}).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { withTx } from '../store/db.js';
import {
  deleteSealedSecrets,
  putSealedSecrets,
  sealedSecrets,
  secretsCreatedAt,
  type SealedSecret,
} from '../store/controller-secrets.js';
import type { Executor } from '../store/executor.js';
import {
  loadOrCreateControllerPkiIn,
  newSalt,
  parseCertificate,
  PKI_FILES,
  PKI_ITEMS,
  PkiMemory,
  saltOf,
  seal,
  SealError,
  unseal,
  type ControllerPki,
  type ControllerPkiOptions,
  type MasterKey,
  type PkiItem,
} from '../pki/index.js';
import { TOKEN_KEY_BYTES } from './tokens.js';

/** The name of the token key among the secrets (the PKI's items are `pki/<file name>`). */
export const TOKEN_KEY_SECRET = 'token.key';
export const pkiSecretName = (item: PkiItem): string => `pki/${item}`;

/** Associated data of a stored secret: its purpose and name. */
const storedAad = (name: string): string => `edgectl controller secret v1\u0000${name}`;
/** Associated data of an exported secret: another purpose, the export's id and the name. */
const exportAad = (exportId: string, name: string): string => `edgectl secrets export v1\u0000${exportId}\u0000${name}`;

const TOKEN_KEY_TEXT = new RegExp(`^[0-9a-f]{${TOKEN_KEY_BYTES * 2}}$`);

/** A refusal to use or change the shared secrets; its message says what to do and holds nothing secret. */
export class SecretsRefused extends Error {}

/** What a controller runs with: the PKI, the token key, and what loading created. */
export interface SharedSecrets {
  pki: ControllerPki;
  tokenKey: Buffer;
  tokenKeyCreated: boolean;
}

/** The PKI's items and the token key, in clear: what an export holds and an import stores. */
export interface SecretsBundle {
  pki: Map<PkiItem, string>;
  /** 64 hex digits. */
  tokenKey: string;
}

function wrongKey(where: string): SecretsRefused {
  return new SecretsRefused(
    `the master key does not open the controller secrets stored in ${where}: they were sealed under another ` +
      'master key (or altered). Give this controller the master key the others were started with; nothing was changed',
  );
}

/** Opens every stored secret this version knows; a value that does not open is a refusal naming `where`. */
async function openStored(rows: readonly SealedSecret[], key: MasterKey, where: string): Promise<Map<string, string>> {
  const known = new Set<string>([TOKEN_KEY_SECRET, ...PKI_ITEMS.map(pkiSecretName)]);
  const out = new Map<string, string>();
  for (const row of rows) {
    if (!known.has(row.name)) continue;
    try {
      out.set(row.name, await unseal(key, storedAad(row.name), row.ciphertext));
    } catch (e) {
      if (e instanceof SealError) throw wrongKey(where);
      throw e;
    }
  }
  return out;
}

function pkiItemsOf(values: ReadonlyMap<string, string>): [PkiItem, string][] {
  return PKI_ITEMS.flatMap((item): [PkiItem, string][] => {
    const pem = values.get(pkiSecretName(item));
    return pem === undefined ? [] : [[item, pem]];
  });
}

function checkTokenKey(text: string, where: string): Buffer {
  // Never echo the value: it is the secret.
  if (!TOKEN_KEY_TEXT.test(text))
    throw new SecretsRefused(`the token key stored in ${where} is not ${TOKEN_KEY_BYTES * 2} hex digits`);
  return Buffer.from(text, 'hex');
}

/** Seals `values` as rows, sharing the salt of what is stored already (one key derivation opens them all). */
async function sealRows(
  key: MasterKey,
  stored: readonly SealedSecret[],
  values: ReadonlyArray<readonly [string, string]>,
): Promise<SealedSecret[]> {
  const salt = stored.map((r) => saltOf(r.ciphertext)).find((s) => s !== undefined) ?? newSalt();
  return Promise.all(
    values.map(async ([name, text]) => ({ name, ciphertext: await seal(key, storedAad(name), text, salt) })),
  );
}

/**
 * Loads the controller's PKI and token key from the shared store, creating whatever is missing, and stores
 * what loading created or re-issued (a new PKI, a renewed intermediate, a server certificate that now covers
 * this controller's hosts too).
 * @param where names the store in messages (its URL without the password).
 * @throws SecretsRefused for a master key that does not open what is stored; PkiError for an inconsistent PKI.
 */
export async function loadOrCreateSharedSecrets(
  db: Executor,
  key: MasterKey,
  options: Omit<ControllerPkiOptions, 'shared'> & { where: string },
): Promise<SharedSecrets> {
  const { where, ...pkiOptions } = options;
  // Opened once before the write transaction: the key derivation (~0.1 s) and a wrong key's refusal happen
  // before any other replica has to wait for this one.
  await openStored(await sealedSecrets(db), key, where);
  return withTx(db, async (trx) => {
    const stored = await sealedSecrets(trx);
    const values = await openStored(stored, key, where);
    const memory = new PkiMemory(where, pkiItemsOf(values));
    const pki = await loadOrCreateControllerPkiIn(memory, { ...pkiOptions, shared: true });
    const writes: [string, string][] = [...memory.changed].map((item) => [pkiSecretName(item), memory.read(item)!]);
    let tokenText = values.get(TOKEN_KEY_SECRET);
    const tokenKeyCreated = tokenText === undefined;
    if (tokenText === undefined) {
      tokenText = randomBytes(TOKEN_KEY_BYTES).toString('hex');
      writes.push([TOKEN_KEY_SECRET, tokenText]);
    }
    const tokenKey = checkTokenKey(tokenText, where);
    if (writes.length > 0)
      await putSealedSecrets(trx, await sealRows(key, stored, writes), (options.now ?? new Date()).toISOString());
    return { pki, tokenKey, tokenKeyCreated };
  });
}

/**
 * Checks that `bundle` is a whole, consistent PKI and a token key: the root certificate, the intermediate's key
 * and certificate signed by the root, and whatever else is there consistent with them (what a start would
 * refuse is refused here). Answers the root certificate's fingerprint.
 */
export async function checkBundle(bundle: SecretsBundle, where: string): Promise<string> {
  for (const item of [PKI_FILES.rootCert, PKI_FILES.intermediateCert, PKI_FILES.intermediateKey] as const)
    if (!bundle.pki.has(item)) throw new SecretsRefused(`${where} holds no ${item}`);
  checkTokenKey(bundle.tokenKey, where);
  const memory = new PkiMemory(where, bundle.pki);
  // A check, not a load: nothing it would create or re-issue is kept (the replicas do that at their start).
  const pki = await loadOrCreateControllerPkiIn(memory, { hosts: [], shared: true });
  return pki.root.fingerprint;
}

/**
 * Stores `bundle` as the shared secrets. Refused when the store holds secrets already, unless `replace`; and
 * always when the master key does not open what is stored (an import never re-keys a store).
 * @returns `unchanged` when the store holds exactly `bundle` already (an import run again), else whether
 *   secrets were replaced.
 */
export async function importSharedSecrets(
  db: Executor,
  key: MasterKey,
  bundle: SecretsBundle,
  options: { replace: boolean; where: string; now?: Date },
): Promise<{ replaced: boolean; unchanged: boolean }> {
  const { where } = options;
  await openStored(await sealedSecrets(db), key, where);
  return withTx(db, async (trx) => {
    const stored = await sealedSecrets(trx);
    const values = await openStored(stored, key, where);
    const incoming = new Map<string, string>([
      ...[...bundle.pki].map(([item, pem]): [string, string] => [pkiSecretName(item), pem]),
      [TOKEN_KEY_SECRET, bundle.tokenKey],
    ]);
    if (values.size === incoming.size && [...incoming].every(([name, text]) => values.get(name) === text))
      return { replaced: false, unchanged: true };
    if (stored.length > 0 && !options.replace) {
      const since = await secretsCreatedAt(trx);
      throw new SecretsRefused(
        `${where} holds a controller PKI already (stored ${since ?? 'earlier'}); ` +
          'pass --replace to replace it (stop every controller on it first: certificates its CA issued stop being trusted)',
      );
    }
    const rows = await sealRows(key, stored, [...incoming]);
    if (stored.length > 0) await deleteSealedSecrets(trx);
    await putSealedSecrets(trx, rows, (options.now ?? new Date()).toISOString());
    return { replaced: stored.length > 0, unchanged: false };
  });
}

/** What `pki export` writes: JSON whose values are sealed under the master key, bound to this export and their names. */
interface ExportFile {
  format: typeof EXPORT_FORMAT;
  version: 1;
  id: string;
  exportedAt: string;
  /** SHA-256 of the root CA certificate, in clear, so an operator can tell which PKI a file holds. */
  rootFingerprint: string;
  secrets: Record<string, string>;
}

const EXPORT_FORMAT = 'edgectl-controller-secrets';

/** The text of an export file holding `bundle`, sealed under `key`. */
export async function sealExport(key: MasterKey, bundle: SecretsBundle, now = new Date()): Promise<string> {
  const id = randomUUID();
  const salt = newSalt();
  const secrets: Record<string, string> = {};
  for (const [name, text] of [
    ...[...bundle.pki].map(([item, pem]): [string, string] => [pkiSecretName(item), pem]),
    [TOKEN_KEY_SECRET, bundle.tokenKey] as [string, string],
  ])
    secrets[name] = await seal(key, exportAad(id, name), text, salt);
  const rootPem = bundle.pki.get(PKI_FILES.rootCert);
  const file: ExportFile = {
    format: EXPORT_FORMAT,
    version: 1,
    id,
    exportedAt: now.toISOString(),
    rootFingerprint: rootPem === undefined ? '' : parseCertificate(rootPem).fingerprint,
    secrets,
  };
  return JSON.stringify(file, null, 2) + '\n';
}

/**
 * The bundle an export file holds.
 * @throws SecretsRefused when `text` is not an export file, or does not open with `key`.
 */
export async function openExport(key: MasterKey, text: string, where: string): Promise<SecretsBundle> {
  let file: Partial<ExportFile>;
  try {
    file = JSON.parse(text) as Partial<ExportFile>;
  } catch {
    throw new SecretsRefused(`${where} is not a file written by \`edgectl pki export\``);
  }
  if (
    file?.format !== EXPORT_FORMAT ||
    typeof file.id !== 'string' ||
    typeof file.secrets !== 'object' ||
    file.secrets === null
  )
    throw new SecretsRefused(`${where} is not a file written by \`edgectl pki export\``);
  if (file.version !== 1)
    throw new SecretsRefused(`${where} was written by another edgectl version (export format ${String(file.version)})`);
  const open = async (name: string): Promise<string | undefined> => {
    const sealed = file.secrets![name];
    if (sealed === undefined) return undefined;
    if (typeof sealed !== 'string') throw new SecretsRefused(`${where}: ${name} is not a sealed value`);
    try {
      return await unseal(key, exportAad(file.id!, name), sealed);
    } catch (e) {
      if (e instanceof SealError && e.reason === 'wrong-key')
        throw new SecretsRefused(
          `${where} does not open with this master key: it was exported under another one (or altered)`,
        );
      throw new SecretsRefused(`${where}: ${name} is not a sealed value`);
    }
  };
  const pki = new Map<PkiItem, string>();
  for (const item of PKI_ITEMS) {
    const pem = await open(pkiSecretName(item));
    if (pem !== undefined) pki.set(item, pem);
  }
  const tokenKey = await open(TOKEN_KEY_SECRET);
  if (tokenKey === undefined) throw new SecretsRefused(`${where} holds no token key`);
  return { pki, tokenKey };
}
