/**
 * The OS-level half of the data-dir lock (lock.ts): SQLite's own locks on the store file. The kernel drops
 * them when the process ends, however it ends, and unlike the lock file they cannot be deleted from under a
 * running controller (deleting the store itself loses the store anyway). docs/decisions.md, "Lock held by
 * the OS".
 *
 * Every connection to a WAL database holds a SHARED lock on the database file for as long as it is open, not
 * only while it reads. A connection in `locking_mode = EXCLUSIVE` must take an EXCLUSIVE lock on the file
 * before it opens the WAL, so its first read fails at once (SQLITE_BUSY, no busy timeout) while any other
 * process, or another connection of this one, has the store open: that is the check. The holder then keeps one
 * idle connection of its own open, the keeper, so the store is held from the moment the data dir is locked,
 * before the controller's connections open, until the lock is released. Only SQLite may open the store file in
 * a process that holds it: closing any other descriptor of the file drops all of the process's locks on it.
 */
import { readFileSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';

/** Another connection has the store open; `pid` is its process when the system says (Linux). */
export class StoreInUse extends Error {
  constructor(readonly pid: number | undefined) {
    super('the store is open in another connection');
  }
}

const busy = (e: unknown): boolean => /^SQLITE_BUSY/.test((e as { code?: unknown }).code as string);

/** A connection to an existing `file` that waits for no lock; undefined when there is no such file. */
function connect(file: string): Database.Database | undefined {
  try {
    return new Database(file, { fileMustExist: true, timeout: 0 });
  } catch {
    return undefined;
  }
}

/**
 * Whether another connection has `file` open. False also when SQLite cannot take the lock at all (a file
 * that is not a database, a read-only file, a file system without locks): the lock file alone guards it then.
 * When the file is free, closing the probe checkpoints a WAL left by a crash, as a controller's start would.
 */
function openElsewhere(file: string): boolean {
  const probe = connect(file);
  if (!probe) return false;
  try {
    probe.pragma('locking_mode = EXCLUSIVE');
    probe.pragma('schema_version');
    return false;
  } catch (e) {
    return busy(e);
  } finally {
    probe.close();
  }
}

/** A process holding a POSIX lock on `file`, from /proc/locks (Linux); undefined elsewhere or when none is listed. */
export function storeLocker(file: string): number | undefined {
  try {
    const { dev, ino } = statSync(file, { bigint: true });
    // The kernel lists MAJOR:MINOR:INODE; st_dev packs major and minor as glibc's makedev does.
    const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
    const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
    const id = [major, minor].map((n) => n.toString(16).padStart(2, '0')).join(':') + `:${ino}`;
    for (const line of readFileSync('/proc/locks', 'utf8').split('\n')) {
      // "1: POSIX  ADVISORY  READ 10540 fe:00:2147789 1073741826 1073742335"; "->" marks a waiter, not a holder.
      const fields = line.trim().split(/\s+/);
      const at = fields.indexOf(id);
      const pid = Number(fields[at - 1]);
      if (at > 0 && !fields.includes('->') && Number.isInteger(pid) && pid > 0) return pid;
    }
  } catch {
    // Not Linux, or no /proc: the holder stays unnamed.
  }
  return undefined;
}

/**
 * Holds `file` for this process until the returned function is called; throws StoreInUse when another
 * connection has it open. Nothing is held while there is no store yet (the controller's own connections hold
 * it once they have created it).
 */
export function holdStore(file: string): () => void {
  if (openElsewhere(file)) throw new StoreInUse(storeLocker(file));
  const keeper = connect(file);
  if (!keeper) return () => {};
  try {
    // The first read opens the WAL: from then on the keeper holds its SHARED lock without any transaction, so
    // it never keeps a checkpoint from finishing.
    keeper.pragma('schema_version');
  } catch (e) {
    keeper.close();
    if (busy(e)) throw new StoreInUse(storeLocker(file));
  }
  return () => {
    if (keeper.open) keeper.close();
  };
}
