/**
 * SQLite's `integrity_check` of a store file on a worker thread's own read-only connection. The check reads
 * every page of the file (its cost grows with the store), and on the controller's connection it would hold the
 * event loop for all of that time; from a worker, requests go on being served while it runs. A read-only WAL
 * reader sees the last committed state and does not stop the controller's writes.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** The worker's code (CommonJS, run with `eval`): open, check, answer, close. */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file, { readonly: true, fileMustExist: true });
try {
  db.pragma('busy_timeout = 5000');
  const rows = db.pragma('integrity_check(' + workerData.max + ')');
  parentPort.postMessage({ messages: rows.map((r) => r.integrity_check) });
} finally {
  db.close();
}
`;

/**
 * The messages of `integrity_check(max)` on `file` (`ok` when sound), or undefined when no worker could do it
 * (it cannot start, e.g. inside the one-file binary, or it failed): the caller then checks on its own
 * connection, which also reports whatever made the worker fail.
 */
export function integrityCheckOffThread(file: string, max: number): Promise<string[] | undefined> {
  return new Promise((resolve) => {
    let worker: Worker;
    try {
      const module = createRequire(import.meta.url).resolve('better-sqlite3');
      worker = new Worker(WORKER, { eval: true, workerData: { file, module, max } });
    } catch {
      resolve(undefined);
      return;
    }
    worker.once('message', (m: { messages?: unknown }) =>
      resolve(Array.isArray(m.messages) ? m.messages.map(String) : undefined),
    );
    // After a message these change nothing (a promise settles once).
    worker.once('error', () => resolve(undefined));
    worker.once('exit', () => resolve(undefined));
  });
}
