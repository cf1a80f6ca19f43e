/**
 * WAL checkpoints off the event loop. SQLite checkpoints automatically inside the commit that crosses
 * `wal_autocheckpoint` pages: that commit then copies the WAL's pages into the database file and syncs it, on
 * the thread that committed, which for the controller is the event loop (every request waits; issue 12 measured
 * the stalls in the login and new-session runs). Here a worker thread with its own connection to the same file
 * runs a PASSIVE checkpoint every second instead, which readers and the writer do not wait for; once it is
 * running, the controller's connection stops checkpointing on its own. If the worker cannot start (e.g. inside
 * the one-file binary, where the SQLite addon is not a module a worker can load) or stops, the connection's
 * automatic checkpoints are switched back on, so the WAL never grows without bound.
 */
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/** The worker's code (CommonJS, run with `eval`): open, checkpoint on a timer, close when told. */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 5000');
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (e) {
    parentPort.postMessage({ failed: String(e && e.message) });
  }
}, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m !== 'close') return;
  clearInterval(timer);
  db.close();
  parentPort.close();
});
parentPort.postMessage('ready');
`;

export interface Checkpointer {
  /** Stops the worker (its connection closed) and gives checkpoints back to the connection. */
  stop(): Promise<void>;
}

/**
 * Starts checkpointing `file` from a worker thread; `raw` is the controller's connection, whose automatic
 * checkpoints (`autoPages`) are off while the worker runs. Undefined when no worker could be started.
 */
export function startCheckpointer(
  file: string,
  raw: Database.Database,
  autoPages: number,
  intervalMs = 1000,
): Checkpointer | undefined {
  let worker: Worker;
  try {
    const module = createRequire(import.meta.url).resolve('better-sqlite3');
    worker = new Worker(WORKER, { eval: true, workerData: { file, module, intervalMs } });
  } catch {
    return undefined;
  }
  // A background helper: it never keeps the process alive on its own.
  worker.unref();
  let running = false;
  const giveBack = () => {
    if (running && raw.open) raw.pragma(`wal_autocheckpoint = ${autoPages}`);
    running = false;
  };
  worker.on('message', (m: unknown) => {
    if (m === 'ready' && raw.open) {
      raw.pragma('wal_autocheckpoint = 0');
      running = true;
    } else if (typeof m === 'object' && m !== null) giveBack();
  });
  worker.on('error', giveBack);
  const exited = once(worker, 'exit').then(giveBack);
  return {
    async stop() {
      giveBack();
      worker.postMessage('close');
      // A worker that does not finish closing within 5 s is ended (its connection goes with the thread).
      const timer = setTimeout(() => void worker.terminate(), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
