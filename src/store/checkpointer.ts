/**
 * Keeps the write-ahead log bounded, off the event loop. SQLite checkpoints automatically inside the commit
 * that crosses `wal_autocheckpoint` pages, on the thread that committed: for the controller that is the event
 * loop, and every request waits. Here a worker thread with its own connection to the same file checkpoints
 * instead, and the controller's connection does not checkpoint on its own while the worker runs.
 *
 * A PASSIVE checkpoint copies what it can without waiting for anyone, but under a steady stream of writes it
 * never catches up with the end of the log, and SQLite only starts the log over from the beginning once a
 * checkpoint has caught up: the log then grows without bound (5.5 GB beside a 26 MB database was
 * measured). So the worker runs a PASSIVE checkpoint every `intervalMs`, and whenever the log's file has grown
 * past `restartBytes` (seen by a pass, or by a writer about to begin), the controller closes its write gate (new
 * write transactions wait, readers do not), and once no transaction is open the worker runs a TRUNCATE
 * checkpoint: it copies the little written since the last pass and cuts the log to zero bytes. Then the gate
 * opens. The log therefore stays around `restartBytes`; should it still reach `4 × restartBytes` (a checkpoint
 * that cannot finish, e.g. a long reader, or a long pass under way), writers wait until the log is cut.
 * When writes stop, the next pass finds the log caught up and idle and cuts it to zero as well.
 *
 * The worker starts once the log's file first passes `startBytes` (looked at every `intervalMs` and before write
 * transactions): a store that is written little, like most controllers between provisioning runs and every
 * test server, never pays for a thread with its own V8 and connection (about a third of a test server's start).
 * Until then the log is only ever that large, the connection's automatic checkpoints stay on (they start at
 * `wal_autocheckpoint` pages, far above it), and nothing cuts the log: it is emptied when the store closes.
 *
 * If the worker cannot start (e.g. inside the one-file binary, where the SQLite addon is not a module a worker
 * can load) or stops, the connection's automatic checkpoints are switched back on: with one writer and no other
 * connection those always catch up, so the log stays bounded by `wal_autocheckpoint` and `journal_size_limit`.
 */
import { once } from 'node:events';
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import type { WriteGate } from './write-gate.js';
import { WalFrameCounter } from './wal-counter.js';

/** The worker's code (CommonJS, run with `eval`): runs the checkpoint it is asked for and answers its result. */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { statSync } = require('node:fs');
const Database = require(workerData.module);
const db = new Database(workerData.file, { fileMustExist: true });
// A TRUNCATE checkpoint waits this long for the transaction in flight and for readers of the log.
db.pragma('busy_timeout = 2000');
const wal = workerData.file + '-wal';
const walSize = () => { try { return statSync(wal).size; } catch { return 0; } };
const checkpoint = (mode) => {
  const [r] = db.pragma('wal_checkpoint(' + mode + ')');
  return { busy: r.busy, log: r.log, done: r.checkpointed };
};
parentPort.on('message', (m) => {
  if (m === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    // A cut is preceded by a passive pass, so the frames written up to it are seen before the log is emptied.
    const seen = checkpoint('PASSIVE');
    const cut = m === 'TRUNCATE' ? checkpoint('TRUNCATE') : undefined;
    const version = db.pragma('data_version', { simple: true });
    parentPort.postMessage({ mode: m, seen, cut, size: walSize(), version });
  } catch (e) {
    parentPort.postMessage({ mode: m, failed: String(e && e.message), size: walSize() });
  }
});
parentPort.postMessage({ ready: true, pageSize: db.pragma('page_size', { simple: true }) });
`;

type Mode = 'PASSIVE' | 'TRUNCATE';

interface Result {
  busy: number;
  /** Frames in the log, and how many of them are now in the database file. */
  log: number;
  done: number;
}

interface Pass {
  mode: Mode;
  /** The passive checkpoint every pass starts with. */
  seen?: Result;
  /** The TRUNCATE checkpoint that followed it, if asked. */
  cut?: Result;
  size: number;
  /** Moves when another connection (the controller's) has committed since the last pass. */
  version?: number;
  failed?: string;
}

/** What `/metrics` and the bench show of the log. */
export interface WalStatus {
  /** Whether the worker checkpoints (false: the connection's automatic checkpoints do). */
  background: boolean;
  /** Size of the -wal file now. */
  bytes: number;
  /** Frames of the log not yet copied into the database file at the last pass. */
  lagFrames: number;
  /** When the log was last fully copied into the database file (ms since the epoch), if ever. */
  caughtUpAt: number | undefined;
  /** Times the log was cut to zero, and times writers had to wait for that. */
  truncations: number;
  writerWaits: number;
  /** Bytes appended to the log since the store opened (frames with their headers): wal-counter.ts. */
  writtenBytes: number;
}

export interface CheckpointLimits {
  /** Past this size, a log that checkpoints do not catch up with is cut while writers wait. */
  restartBytes: number;
  intervalMs: number;
  /**
   * The worker starts once the log's file passes this size (0: at once). Default: a quarter of `restartBytes`,
   * at most 4 MiB, so a log that never reached it is all an idle store keeps.
   */
  startBytes?: number;
}

export const DEFAULT_CHECKPOINT_LIMITS: CheckpointLimits = { restartBytes: 32 * 1024 * 1024, intervalMs: 1000 };

/** The log's size at which the worker starts when the limits do not say. */
const defaultStartBytes = (restartBytes: number): number => Math.min(4 * 1024 * 1024, Math.floor(restartBytes / 4));

export interface Checkpointer {
  status(): WalStatus;
  /**
   * Called before each write transaction begins: undefined to go ahead, or a promise to wait for (the gate
   * is closed while the log is being cut, or is closed now because the log passed its hard bound).
   */
  admit(): Promise<void> | undefined;
  /** Stops the worker (its connection closed) and gives checkpoints back to the connection. */
  stop(): Promise<void>;
}

const walBytes = (file: string): number => {
  try {
    return statSync(`${file}-wal`).size;
  } catch {
    return 0;
  }
};

/**
 * Checkpoints `file` from a worker thread, started once the log has grown (see the module comment); `raw` is the
 * controller's connection, whose automatic checkpoints (`autoPages`) are off while the worker runs.
 */
export function startCheckpointer(
  file: string,
  raw: Database.Database,
  gate: WriteGate,
  /** Settles once no write transaction of the store is open (tx-batch.ts); the gate keeps new ones out. */
  settled: () => Promise<void>,
  autoPages: number,
  limits: CheckpointLimits = DEFAULT_CHECKPOINT_LIMITS,
): Checkpointer {
  /** The worker, once started; undefined before, or for good when it could not start or the store stops. */
  let worker: Worker | undefined;
  /** No worker (any more): it could not start, it stopped, or the store is stopping. */
  let ended = false;
  let exited: Promise<void> = Promise.resolve();
  const startBytes = limits.startBytes ?? defaultStartBytes(limits.restartBytes);
  const hardBytes = 4 * limits.restartBytes;
  let running = false;
  /** Writers passed the hard bound while the worker was starting: its first job is to cut the log. */
  let cutWhenReady = false;
  let inFlight: Mode | undefined;
  let lastVersion: number | undefined;
  let lastSizeCheck = 0;
  const status: WalStatus = {
    background: false,
    bytes: 0,
    lagFrames: 0,
    caughtUpAt: undefined,
    truncations: 0,
    writerWaits: 0,
    writtenBytes: 0,
  };

  const ask = (mode: Mode) => {
    if (inFlight || !running) return;
    inFlight = mode;
    worker?.postMessage(mode);
  };
  // A cut takes the write lock and waits for readers of the log: it is asked with the gate closed and no
  // transaction of ours open, so none of them can need the lock midway and fail.
  const cut = () => {
    if (inFlight || !running) return;
    inFlight = 'TRUNCATE';
    gate.close();
    void settled().then(() => {
      if (!running) return (inFlight = undefined);
      // The last frames before the log is emptied, counted now (no transaction of ours is open).
      countFrames();
      worker?.postMessage('TRUNCATE');
    });
  };
  const giveBack = () => {
    if (running && raw.open) raw.pragma(`wal_autocheckpoint = ${autoPages}`);
    running = false;
    ended = true;
    status.background = false;
    clearInterval(timer);
    gate.open();
  };
  // Frames appended, counted from the log's index by this (the writing) thread: wal-counter.ts.
  const frameBytes = Number(raw.pragma('page_size', { simple: true })) + 24;
  const frames = new WalFrameCounter(`${file}-shm`);
  const countFrames = () => {
    frames.sample();
    status.writtenBytes = frames.appended * frameBytes;
  };
  const onPass = (p: Pass) => {
    inFlight = undefined;
    status.bytes = p.size;
    const seen = p.seen;
    if (p.failed !== undefined || !seen) {
      // Nothing was checkpointed (e.g. the disk is full): writers are let go again; the hard bound in
      // `admit` holds them back once the log really is too large, and the next pass tries again.
      if (p.size < hardBytes) gate.open();
      return;
    }
    const idle = p.version === lastVersion;
    lastVersion = p.version;
    if (p.cut) {
      const done = p.cut.busy === 0;
      if (done) {
        status.truncations++;
        status.lagFrames = 0;
        status.caughtUpAt = Date.now();
      }
      if (done || p.size < hardBytes) gate.open();
      return;
    }
    const caughtUp = seen.log === seen.done || seen.log === -1;
    status.lagFrames = Math.max(0, seen.log - seen.done);
    if (caughtUp) status.caughtUpAt = Date.now();
    if (!gate.isOpen || p.size > limits.restartBytes) {
      // The log (or its file, which keeps its largest size until cut) passed the restart size, or the hard
      // bound closed the gate, or the last cut could not finish: hold new writers while the log is cut.
      cut();
    } else if (p.size > 0 && caughtUp && idle) {
      // Writes have stopped and the log is all copied: give its disk space back.
      cut();
    }
  };
  const launch = () => {
    if (worker || ended || !raw.open) return;
    let started: Worker;
    try {
      const module = createRequire(import.meta.url).resolve('better-sqlite3');
      started = new Worker(WORKER, { eval: true, workerData: { file, module } });
    } catch {
      ended = true;
      return;
    }
    worker = started;
    // A background helper: it never keeps the process alive on its own.
    started.unref();
    started.on('message', (m: unknown) => {
      if (typeof m !== 'object' || m === null) return;
      if ('ready' in m) {
        if (!raw.open || ended) return;
        raw.pragma('wal_autocheckpoint = 0');
        running = true;
        status.background = true;
        if (cutWhenReady) {
          cutWhenReady = false;
          cut();
        }
      } else onPass(m as Pass);
    });
    started.on('error', giveBack);
    exited = once(started, 'exit').then(giveBack);
  };
  /** Starts the worker once the log has grown past `startBytes`. */
  const launchIfGrown = () => {
    if (!worker && !ended && walBytes(file) > startBytes) launch();
  };
  const timer = setInterval(() => (worker ? ask('PASSIVE') : launchIfGrown()), limits.intervalMs);
  timer.unref();
  frames.sample();
  if (startBytes === 0) launch();

  return {
    status() {
      status.bytes = walBytes(file);
      // Not while the worker empties the log: it rewrites the index meanwhile.
      if (inFlight !== 'TRUNCATE') countFrames();
      status.writerWaits = gate.waits;
      return { ...status };
    },
    admit() {
      // Before each write transaction: the frames of the ones before it (a log that starts over does so
      // inside the transaction that follows a caught-up checkpoint, and holds only frames written since).
      countFrames();
      const wait = gate.wait();
      if (wait || ended) return wait;
      // The log's size, looked at most every few milliseconds (a stat is cheap, but not free): past the start
      // size the worker starts; past the restart size the log is cut now if the worker is free (else its pass
      // under way will see it), past the hard bound writers wait for that in any case.
      const now = performance.now();
      if (now - lastSizeCheck < 5) return undefined;
      lastSizeCheck = now;
      const size = walBytes(file);
      if (!running) {
        if (!worker && size > startBytes) launch();
        // The worker is still starting (a thread, its module, its connection: tens of milliseconds, more on a busy
        // machine) while writes go on: past the hard bound they wait for it, and it cuts the log first thing.
        if (!worker || ended || size <= hardBytes) return undefined;
        cutWhenReady = true;
        gate.close();
        return gate.wait();
      }
      if (size <= limits.restartBytes || (inFlight && size <= hardBytes)) return undefined;
      gate.close();
      cut();
      return gate.wait();
    },
    async stop() {
      giveBack();
      frames.close();
      const started = worker;
      if (!started) return;
      started.postMessage('close');
      // A worker that does not finish closing within 5 s is ended (its connection goes with the thread).
      const kill = setTimeout(() => void started.terminate(), 5000);
      await exited;
      clearTimeout(kill);
    },
  };
}
