/**
 * The data-dir lock: the daemon holds it while it runs, and offline CLI commands refuse to touch the
 * database while it is held by a live process. It has two halves: the lock file, which names the holder, and
 * SQLite's locks on the store file (store-hold.ts), which the kernel keeps for the holder's lifetime, so
 * deleting the lock file does not let a second process in.
 *
 * The lock file is created with O_EXCL, which is atomic. A stale lock (its process is gone) is only removed
 * by whoever holds a second, short-lived O_EXCL file, the breaker, and only after re-reading it under the
 * breaker: without that, two starters that both saw the same stale lock could each remove it, and the
 * second would delete the first one's fresh lock, so both would run (docs/decisions.md, "Store at start").
 * The file holds `PID NONCE HOST`: the nonce tells this process's own locks from a stale one left by an earlier
 * process that had the same pid, and keeps two locks taken inside one process apart; the host name is only
 * reported, so whoever is refused knows where the holder runs.
 */
import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { holdStore, StoreInUse } from './store-hold.js';

export const LOCK_FILE = 'edgectl.lock';
const BREAKER_SUFFIX = '.break';
/** A breaker older than this was left by a process that died while breaking a lock. */
const BREAKER_STALE_MS = 10_000;
const ATTEMPTS = 50;

/** Nonces of the locks this process holds. */
const held = new Set<string>();

/** Whether a process of this machine with that id runs (one of another user counts). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

interface LockContent {
  pid: number;
  nonce: string;
  host?: string;
}

function readLock(path: string): LockContent | undefined {
  try {
    return parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Whether a lock file's content names a lock that is still held. */
function live(c: LockContent): boolean {
  if (!Number.isInteger(c.pid) || c.pid <= 0) return false;
  if (c.pid === process.pid) return held.has(c.nonce);
  return processAlive(c.pid);
}

/** The pid holding the lock, if a live process does. */
export function lockHolder(dataDir: string): number | undefined {
  const c = readLock(join(dataDir, LOCK_FILE));
  return c && live(c) ? c.pid : undefined;
}

/** Creates `path` with O_EXCL and mode 0600 (the umask cannot widen it); false when it exists. */
function createExclusive(path: string, content: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
  return true;
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

export interface Seen {
  text: string;
  ino: number;
  mtimeMs: number;
}

/** The lock file as it is now (content and identity), or undefined when there is none. Exported for tests. */
export function look(path: string): Seen | undefined {
  try {
    const st = statSync(path);
    return { text: readFileSync(path, 'utf8'), ino: st.ino, mtimeMs: st.mtimeMs };
  } catch {
    return undefined;
  }
}

function parse(text: string): LockContent {
  const [pid, nonce = '', host] = text.trim().split(/\s+/);
  return { pid: Number(pid), nonce, ...(host ? { host } : {}) };
}

/**
 * Removes the lock judged stale as `seen`, holding the breaker and only if it is still that very file with that
 * content; false when another process holds the breaker. Exported for tests.
 */
export function breakStaleLock(path: string, seen: Seen): boolean {
  const breaker = path + BREAKER_SUFFIX;
  if (!createExclusive(breaker, String(process.pid))) {
    const b = look(breaker);
    if (b && Date.now() - b.mtimeMs > BREAKER_STALE_MS) unlinkQuietly(breaker);
    return false;
  }
  try {
    const now = look(path);
    if (now && now.text === seen.text && now.ino === seen.ino && now.mtimeMs === seen.mtimeMs) unlinkQuietly(path);
  } finally {
    unlinkQuietly(breaker);
  }
  return true;
}

const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

const inUse = (dataDir: string, by: string) => new Error(`the data dir ${dataDir} is in use by ${by}`);

/**
 * Takes the lock (replacing a stale one) and holds the store file `store`; throws when another live holder has
 * the lock file, or, with the lock file gone, has the store open.
 */
export function acquireLock(dataDir: string, store: string): () => void {
  const path = join(dataDir, LOCK_FILE);
  const nonce = randomBytes(8).toString('hex');
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (createExclusive(path, `${process.pid} ${nonce} ${hostname()}`)) {
      held.add(nonce);
      const unlock = () => {
        if (!held.delete(nonce)) return;
        const c = readLock(path);
        if (c && c.pid === process.pid && c.nonce === nonce) unlinkQuietly(path);
      };
      let unhold: () => void;
      try {
        unhold = holdStore(store);
      } catch (e) {
        unlock();
        if (!(e instanceof StoreInUse)) throw e;
        throw inUse(
          dataDir,
          `${e.pid ? `process ${e.pid}` : 'another process'} (its store is open there; ${LOCK_FILE} was gone)`,
        );
      }
      return () => {
        unhold();
        unlock();
      };
    }
    const seen = look(path);
    if (!seen) continue; // removed meanwhile: try again at once
    const c = parse(seen.text);
    const wellFormed = Number.isInteger(c.pid) && c.pid > 0;
    if (wellFormed && live(c)) throw inUse(dataDir, `process ${c.pid}${c.host ? ` on ${c.host}` : ''}`);
    // A lock without a pid is either being written right now or was left by a crash in between: only an old one is stale.
    const stale = wellFormed || Date.now() - seen.mtimeMs > BREAKER_STALE_MS;
    if (stale && breakStaleLock(path, seen)) continue;
    pause(20);
  }
  throw new Error(`cannot lock the data dir ${dataDir}: another process keeps taking it`);
}
