/**
 * Native addons inside the one-file binary (docs/decisions.md, "The one-file binary"). A `.node` file can only be
 * loaded from disk, so the binary carries each addon as a SEA asset and, on first use, writes it to a private cache
 * directory named after its SHA-256; later starts (and concurrent ones) find the same file and load it from there.
 * Bundled only into the binary by scripts/build-binary.mjs; nothing in src imports this module.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  constants as fsc,
  closeSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, isAbsolute, join } from 'node:path';
import { getAsset } from 'node:sea';

/** Where the extracted addons live: `$XDG_CACHE_HOME/edgectl/native`, else `~/.cache/edgectl/native`. */
export function nativeCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, 'edgectl', 'native');
  const home = env.HOME || safeHomedir();
  return home ? join(home, '.cache', 'edgectl', 'native') : fallbackRoot();
}

/** The shared temp dir is only used through a per-user directory this user owns (checked, never followed). */
function fallbackRoot(): string {
  const uid = typeof process.getuid === 'function' ? process.getuid() : 'user';
  return join(tmpdir(), `edgectl-native-${uid}`);
}

function safeHomedir(): string | undefined {
  try {
    return homedir();
  } catch {
    return undefined;
  }
}

/** Creates `dir` (mode 0700) and refuses one that is a symlink, belongs to another user or others may write to. */
function privateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  const uid = typeof process.getuid === 'function' ? process.getuid() : st.uid;
  if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o022) !== 0) {
    throw new Error(`${dir} is not a private directory of this user`);
  }
}

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/**
 * Writes `bytes` as `<root>/<sha256>/<name>` unless an identical file is already there, and returns its path.
 * The file is written under a unique temporary name and renamed into place, so a concurrent start sees either
 * no file or the whole file; an existing file whose content does not match (a torn or tampered copy) is replaced.
 */
export function materialise(bytes: Uint8Array, name: string, root: string): string {
  const digest = sha256(bytes);
  const dir = join(root, digest);
  const file = join(dir, basename(name));
  // Checked before the file is trusted too: a directory others could write to could swap it under us.
  privateDir(root);
  privateDir(dir);
  try {
    if (sha256(readFileSync(file)) === digest) return file;
  } catch {
    // Not there yet: written below.
  }
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(tmp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL, 0o700);
  try {
    for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  return file;
}

/** Loads a native addon from a file, as `require` would. */
export function dlopen(file: string): unknown {
  const mod = { exports: {} as unknown };
  process.dlopen(mod, file);
  return mod.exports;
}

const loaded = new Map<string, unknown>();

/** The addon embedded as SEA asset `key` (written to the cache on first use, loaded once per process). */
export function loadNativeAsset(key: string): unknown {
  const hit = loaded.get(key);
  if (hit !== undefined) return hit;
  const bytes = new Uint8Array(getAsset(key));
  let file: string;
  try {
    file = materialise(bytes, key, nativeCacheRoot());
  } catch {
    // An unwritable home (a service account, a read-only root) still gets a per-user temp directory.
    file = materialise(bytes, key, fallbackRoot());
  }
  const exports = dlopen(file);
  loaded.set(key, exports);
  return exports;
}
