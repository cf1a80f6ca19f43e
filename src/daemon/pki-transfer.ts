/**
 * `edgectl pki export` and `edgectl pki import`: moving a controller's PKI and token key from its data dir into a
 * PostgreSQL store that several controllers share (docs/decisions.md, "Shared controller secrets").
 *
 * The export file is JSON whose values are sealed under the master key of the controllers it is meant for (the
 * one they are started with), written with mode 0600 and never over an existing file. Export holds the data
 * dir's lock, so the controller must be stopped (it could re-issue its server certificate meanwhile); import
 * writes in one transaction and refuses a store that holds secrets already unless told to replace them.
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { MasterKey } from '../pki/master-key.js';
import { PKI_FILES, PKI_ITEMS, type PkiItem } from '../pki/ca.js';
import {
  checkBundle,
  importSharedSecrets,
  openExport,
  sealExport,
  SecretsRefused,
  type SecretsBundle,
} from '../model/controller-secrets.js';
import { acquireLock, openStore } from '../model/store.js';
import { lockRefusal, OfflineRefused } from './offline.js';
import { STORE_FILE } from './store-check.js';
import { TOKEN_KEY_FILE } from './token-key.js';

export interface ExportResult {
  file: string;
  /** SHA-256 fingerprint of the root CA certificate (also in clear in the file). */
  rootFingerprint: string;
  /** What the file holds: the PKI's items and `token.key`. */
  items: string[];
}

/** A model refusal as the CLI prints it. */
function refused(e: unknown): never {
  if (e instanceof SecretsRefused) throw new OfflineRefused(`error: ${e.message}`);
  throw e;
}

/** The PKI and token key files of `dataDir`, as they are (nothing is created or repaired). */
function readDataDirSecrets(dataDir: string): SecretsBundle {
  const pkiDir = join(dataDir, 'pki');
  if (!existsSync(join(pkiDir, PKI_FILES.rootCert)))
    throw new OfflineRefused(
      `error: ${dataDir} holds no controller PKI (no pki/${PKI_FILES.rootCert}): name the data dir of a controller that has run`,
    );
  const pki = new Map<PkiItem, string>();
  for (const item of PKI_ITEMS) {
    const file = join(pkiDir, item);
    if (existsSync(file)) pki.set(item, readFileSync(file, 'utf8'));
  }
  const tokenFile = join(dataDir, TOKEN_KEY_FILE);
  if (!existsSync(tokenFile)) throw new OfflineRefused(`error: ${dataDir} holds no token key (no ${TOKEN_KEY_FILE})`);
  return { pki, tokenKey: readFileSync(tokenFile, 'utf8').trim() };
}

/** Writes `text` to a new file of mode 0600; an existing file is refused, never replaced. */
function writeNewPrivateFile(path: string, text: string): void {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST')
      throw new OfflineRefused(`error: ${path} exists: give another --out (an export never replaces a file)`);
    throw new OfflineRefused(`error: cannot create ${path}: ${(e as Error).message}`);
  }
  try {
    writeSync(fd, text);
    fsyncSync(fd);
    closeSync(fd);
  } catch (e) {
    closeSync(fd);
    rmSync(path, { force: true });
    throw e;
  }
}

/**
 * Writes the PKI and token key of the stopped controller on `dataDir` to `out`, sealed under `key`.
 * @throws OfflineRefused when the data dir is in use, holds no PKI or an inconsistent one, or `out` exists.
 */
export async function exportPki(dataDir: string, out: string, key: MasterKey, now = new Date()): Promise<ExportResult> {
  const dir = resolve(dataDir);
  const file = resolve(out);
  if (!existsSync(dir)) throw new OfflineRefused(`error: there is no data dir ${dir}`);
  let release: () => void;
  try {
    release = acquireLock(dir, join(dir, STORE_FILE));
  } catch (e) {
    throw lockRefusal(e);
  }
  try {
    const bundle = readDataDirSecrets(dir);
    const rootFingerprint = await checkBundle(bundle, `the data dir ${dir}`).catch((e: unknown) => {
      if (e instanceof SecretsRefused) throw e;
      throw new SecretsRefused(`the PKI in ${join(dir, 'pki')} is not consistent: ${(e as Error).message}`);
    });
    writeNewPrivateFile(file, await sealExport(key, bundle, now));
    return { file, rootFingerprint, items: [...[...bundle.pki.keys()].map((i) => `pki/${i}`), TOKEN_KEY_FILE] };
  } catch (e) {
    return refused(e);
  } finally {
    release();
  }
}

export interface ImportResult {
  /** The store, its URL without the password. */
  store: string;
  rootFingerprint: string;
  /** The store held other secrets, which were replaced (`--replace`). */
  replaced: boolean;
  /** The store held exactly these secrets already. */
  unchanged: boolean;
}

/**
 * Stores the PKI and token key of the export `file` in the PostgreSQL store at `url` (migrated first if needed),
 * for the controllers started on it with the same master key.
 * @throws OfflineRefused for a file that does not open with `key`, an inconsistent PKI, a store holding other
 *   secrets (without `replace`) or secrets sealed under another master key.
 */
export async function importPki(
  file: string,
  url: string,
  key: MasterKey,
  options: { replace: boolean; now?: Date },
): Promise<ImportResult> {
  if (!/^postgres(ql)?:\/\//i.test(url))
    throw new OfflineRefused(
      'error: pki import needs a PostgreSQL store (--db postgres://…, EDGECTL_DB_URL or store.url)',
    );
  const path = resolve(file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new OfflineRefused(`error: cannot read ${path}: ${(e as Error).message}`);
  }
  let store;
  try {
    const bundle = await openExport(key, text, path);
    const rootFingerprint = await checkBundle(bundle, path).catch((e: unknown) => {
      if (e instanceof SecretsRefused) throw e;
      throw new SecretsRefused(`the PKI in ${path} is not consistent: ${(e as Error).message}`);
    });
    try {
      store = await openStore(url, { verify: true });
    } catch (e) {
      throw new SecretsRefused((e as Error).message);
    }
    const where = `the PostgreSQL store ${store.location}`;
    const done = await importSharedSecrets(store.db, key, bundle, {
      replace: options.replace,
      where,
      now: options.now,
    });
    return { store: store.location, rootFingerprint, ...done };
  } catch (e) {
    return refused(e);
  } finally {
    await store?.close();
  }
}
