/**
 * Identity files: what `edgectl enroll` writes and `edgectl login --identity` reads. The shape is the reference
 * SDKs' identity config (sdk-golang `ziti.Config`, written by `ziti edge enroll`), so the file also works with
 * OpenZiti SDKs and tunnelers:
 *
 *   { "ztAPI": "https://ctrl.example:1280",
 *     "id": { "key": "pem:-----BEGIN PRIVATE KEY-----…", "cert": "pem:-----BEGIN CERTIFICATE-----…", "ca": "pem:…" } }
 *
 * `ztAPI` is the controller root (the enrollment JWT's `iss`; SDKs append `/edge/client/v1`). `id.key` is the
 * private key (PKCS#8), `id.cert` the issued client certificate chain, `id.ca` the CA bundle that validates the
 * controller. Each holds its PEM inline behind a `pem:` prefix; on reading, `file://PATH` and a bare path (relative
 * to the identity file) are accepted too, as the SDKs do. The file holds a private key: written mode 0600.
 */
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CliError } from './io.js';

export interface IdentityConfig {
  /** Controller root URL, e.g. `https://127.0.0.1:1280`. */
  url: string;
  key: string;
  cert: string;
  /** PEM bundle to trust for the controller. */
  ca?: string;
}

interface IdentityFileJson {
  ztAPI?: unknown;
  id?: { key?: unknown; cert?: unknown; ca?: unknown };
}

const PEM_PREFIX = 'pem:';

function material(file: string, field: string, value: unknown): string {
  if (typeof value !== 'string' || value === '')
    throw new CliError(`error: identity file ${file} has no id.${field}`, 2);
  if (value.startsWith(PEM_PREFIX)) return value.slice(PEM_PREFIX.length);
  if (value.includes('-----BEGIN ')) return value;
  const path = value.startsWith('file://') ? fileURLToPath(value) : resolve(dirname(file), value);
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new CliError(`error: cannot read id.${field} of identity file ${file} (${path}): ${(e as Error).message}`, 2);
  }
}

/** Reads an identity file. Unreadable or malformed files are usage errors (exit 2). */
export function readIdentityFile(file: string): IdentityConfig {
  let parsed: IdentityFileJson;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8')) as IdentityFileJson;
  } catch (e) {
    throw new CliError(`error: cannot read identity file ${file}: ${(e as Error).message}`, 2);
  }
  if (
    parsed === null ||
    typeof parsed !== 'object' ||
    typeof parsed.ztAPI !== 'string' ||
    !parsed.id ||
    typeof parsed.id !== 'object'
  ) {
    throw new CliError(
      `error: ${file} is not an identity file (expected {"ztAPI": URL, "id": {"key", "cert", "ca"}})`,
      2,
    );
  }
  const id = parsed.id;
  return {
    url: parsed.ztAPI,
    key: material(file, 'key', id.key),
    cert: material(file, 'cert', id.cert),
    ...(id.ca !== undefined && id.ca !== null && id.ca !== '' ? { ca: material(file, 'ca', id.ca) } : {}),
  };
}

/** The identity file text for `identity`. */
export function renderIdentityFile(identity: IdentityConfig): string {
  const json = {
    ztAPI: identity.url,
    id: {
      key: PEM_PREFIX + identity.key,
      cert: PEM_PREFIX + identity.cert,
      ...(identity.ca !== undefined ? { ca: PEM_PREFIX + identity.ca } : {}),
    },
  };
  return JSON.stringify(json, null, 2) + '\n';
}

/**
 * Writes `text` to `file` readable by the owner only, mode 0600 from the first byte. With `exclusive` an existing
 * file is never replaced (`wx`); otherwise the text goes to a temporary file that is renamed over `file`.
 */
export function writePrivateFile(file: string, text: string, exclusive = false): void {
  const target = exclusive ? file : `${file}.${process.pid}.tmp`;
  const fd = openSync(target, 'wx', 0o600);
  try {
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (!exclusive) renameSync(target, file);
  } catch (e) {
    rmSync(target, { force: true });
    throw e;
  }
}
