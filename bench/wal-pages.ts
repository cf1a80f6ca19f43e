/**
 * Where a create's write-ahead log bytes go, on SQLite: builds a model (bench/model.ts), starts the controller
 * in this process (the same `startDaemon` as `edgectl serve`, requests handed to its app in-process), and for
 * each kind creates `--count` entities through the Management API with `--connections` clients at once. A
 * reader holds the log open meanwhile, so no checkpoint starts it over, and the frames the creates appended
 * are read back from the file (bench/wal-frames.ts) and attributed to the table or index owning each page
 * (SQLite's dbstat). Prints, per kind: log bytes per create, commits, and frames per create by table/index.
 * Byte counts do not depend on the machine's load (throughput does; `npm run bench` measures that).
 *
 * With `--db postgres://…` the model is built in a new database on that server instead, and the log is the
 * server's: the records that touch the database's relations (pg_walinspect), attributed to each.
 *
 * Usage: node --import tsx bench/wal-pages.ts [--size small|medium|large] [--count N] [--connections N]
 *   [--kinds identity,service,...] [--json] [--dir DIR] [--count-only] [--db URL] [--batch-bound]
 */
import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/daemon/config.js';
import { DB_FILE, startDaemon } from '../src/daemon/daemon.js';
import { runtimeOf } from '../src/store/runtime.js';
import { attributesOf, buildModel, SIZES } from './model.js';
import { readWalFrames } from './wal-frames.js';
import { writeKinds } from './writes.js';
import { BENCH_MASTER_KEY } from './master-key.js';
import { createDatabase, databaseWal, dropDatabaseSync } from './postgres.js';

const { values: args } = parseArgs({
  options: {
    size: { type: 'string', default: 'small' },
    count: { type: 'string', default: '256' },
    connections: { type: 'string', default: '16' },
    kinds: { type: 'string' },
    json: { type: 'boolean', default: false },
    dir: { type: 'string' },
    db: { type: 'string' },
    // Keep the group commit's time bound (20 ms): on a loaded machine it splits the batches, and the bytes then
    // depend on the load. Lifted by default, so the batches are what a quiet machine makes.
    'batch-bound': { type: 'boolean', default: false },
    // Without the reader holding the log: the controller's own count alone (checks it while the log starts over).
    'count-only': { type: 'boolean', default: false },
  },
});
const size = SIZES[args.size!];
if (!size) throw new Error(`unknown size ${args.size}`);
const count = Number(args.count);
const connections = Number(args.connections);
const MGMT = '/edge/management/v1';
const ADMIN = { username: 'walpages-admin', password: 'walpages-Admin-Passw0rd!' };

// `--dir`: the model is built there once and used again by later runs (a large model takes minutes to build).
const dir = args.dir ?? mkdtempSync(join(tmpdir(), 'edgectl-wal-pages-'));
if (!args.dir) process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
// `--db`: the model in a new PostgreSQL database on that server, dropped at exit.
let dbUrl: string | undefined;
if (args.db) {
  const name = `edgectl_walpages_${args.size}_${process.pid}`;
  dbUrl = await createDatabase(args.db, name);
  process.on('exit', () => dropDatabaseSync(args.db!, name));
  process.on('SIGINT', () => process.exit(130));
}
if (dbUrl || !existsSync(join(dir, DB_FILE))) await buildModel(dir, size, 0, 0, dbUrl);
const configFile = join(dir, 'config.yml');
writeFileSync(configFile, 'log:\n  level: silent\n');
const daemon = await startDaemon(
  loadConfig({
    flags: { dataDir: dir, listen: '127.0.0.1:0', config: configFile, logLevel: 'silent', ...(dbUrl && { db: dbUrl }) },
    env: dbUrl ? { EDGECTL_MASTER_KEY: BENCH_MASTER_KEY } : {},
  }),
  { adminCredentials: async () => ADMIN },
);
const app = daemon.app;
const batcher = runtimeOf(daemon.store.db)?.batcher;
if (batcher && !args['batch-bound']) batcher.maxBatchMs = Infinity;
const login = await app.inject({
  method: 'POST',
  url: `${MGMT}/authenticate?method=password`,
  payload: ADMIN,
});
const token = (JSON.parse(login.body) as { data: { token: string } }).data.token;
const post = async (path: string, body: Record<string, unknown>) =>
  (
    await app.inject({
      method: 'POST',
      url: MGMT + path,
      headers: { 'zt-session': token, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    })
  ).statusCode;

const file = join(dir, DB_FILE);
const wal = `${file}-wal`;
const kinds = writeKinds(attributesOf, `walpages-${Date.now().toString(36)}`).filter(
  (k) => !args.kinds || args.kinds.split(',').includes(k.key.replace(/ /g, '-')),
);
const report: Record<string, unknown>[] = [];
let serial = 0;
/** `count` creates of one kind, `connections` at once: how many were refused. */
async function creates(kind: (typeof kinds)[number]): Promise<number> {
  let next = 0;
  let refused = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < count) {
        next++;
        if ((await post(kind.path, kind.body(serial++))) !== 201) refused++;
      }
    }),
  );
  return refused;
}
const print = (owned: { name: string; perCreate: number }[], unit: string) => {
  for (const o of owned) console.log(`  ${o.perCreate.toFixed(2).padStart(8)} ${unit}/create  ${o.name}`);
};
// PostgreSQL: the database's own records in the server's log (pg_walinspect), by relation.
const pgWal = dbUrl ? await databaseWal(dbUrl) : undefined;
if (dbUrl && !pgWal) throw new Error('pg_walinspect is not available on this server');
for (const kind of kinds) {
  if (pgWal) {
    if ((await post(kind.path, kind.body(serial++))) !== 201) throw new Error(`${kind.key}: create refused`);
    await pgWal.written();
    pgWal.byRelation.clear();
    // Read as it goes: the server may recycle its log files behind a long run.
    let reading = true;
    const reader = (async () => {
      while (reading) {
        await new Promise((r) => setTimeout(r, 500));
        await pgWal.written();
      }
    })();
    const refused = await creates(kind);
    reading = false;
    await reader;
    const bytes = await pgWal.written();
    const owned = [...pgWal.byRelation]
      .sort((a, b) => b[1] - a[1])
      .map(([name, n]) => ({ name, perCreate: n / count }));
    report.push({ kind: kind.key, creates: count, refused, bytesPerCreate: bytes / count, owned });
    if (!args.json) {
      console.log(
        `${kind.key}: ${count} creates (${refused} refused), ${connections} at once, size ${args.size}, PostgreSQL: ` +
          `${(bytes / count / 1024).toFixed(1)} KB of log per create`,
      );
      print(
        owned.filter((o) => o.perCreate >= 1),
        'bytes',
      );
    }
    continue;
  }
  // A create first, so the log holds frames not yet checkpointed when the reader begins: the reader then keeps
  // a mark in the log, and no writer may start the log over while it is held.
  if ((await post(kind.path, kind.body(serial++))) !== 201) throw new Error(`${kind.key}: create refused`);
  const pin = new Database(file, { readonly: true });
  if (!args['count-only']) {
    pin.exec('begin');
    pin.prepare('select count(*) from sqlite_schema').get();
  }
  const before = readWalFrames(wal);
  const counted = daemon.store.wal()?.writtenBytes ?? NaN;
  const txBefore = daemon.store.commits();
  const refused = await creates(kind);
  const txAfter = daemon.store.commits();
  const transactions = txAfter.members - txBefore.members;
  const batches = txAfter.batches - txBefore.batches;
  const after = readWalFrames(wal);
  // What the controller's own count (`/metrics`) says of the same creates, once its checkpointer has looked.
  await new Promise((r) => setTimeout(r, 1500));
  const metric = ((daemon.store.wal()?.writtenBytes ?? NaN) - counted) / count;
  if (args['count-only']) {
    pin.close();
    console.log(`${kind.key}: ${count} creates, the controller's count: ${(metric / 1024).toFixed(1)} KB per create`);
    continue;
  }
  pin.exec('commit');
  if (after.salt !== before.salt) throw new Error('the log started over during the run: no figures');
  const mine = after.frames.slice(before.frames.length);
  // Each page's owner (a table or index; the freelist and new pages at the end have none).
  const owners = new Map<number, string>();
  for (const r of pin.prepare('select name, pageno from dbstat').all() as { name: string; pageno: number }[])
    owners.set(r.pageno, r.name);
  pin.close();
  const byOwner = new Map<string, number>();
  for (const f of mine) {
    const owner = f.page === 1 ? 'header (page 1)' : (owners.get(f.page) ?? '(unowned)');
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + 1);
  }
  const commits = mine.filter((f) => f.commit).length;
  if (process.env.WAL_PAGES_COMMITS) {
    let cur: string[] = [];
    for (const f of mine) {
      cur.push(f.page === 1 ? 'header' : (owners.get(f.page) ?? '?'));
      if (f.commit) {
        console.log(`  commit: ${cur.join(' ')}`);
        cur = [];
      }
    }
  }
  const perCreate = (mine.length * after.frameBytes) / count;
  const owned = [...byOwner].sort((a, b) => b[1] - a[1]).map(([name, n]) => ({ name, perCreate: n / count }));
  report.push({
    kind: kind.key,
    creates: count,
    refused,
    commits,
    frames: mine.length,
    bytesPerCreate: perCreate,
    countedPerCreate: metric,
    owned,
  });
  if (!args.json) {
    console.log(
      `${kind.key}: ${count} creates (${refused} refused), ${connections} at once, size ${args.size}: ` +
        `${(perCreate / 1024).toFixed(1)} KB of log per create, ${commits} commits (${transactions} transactions ` +
        `in ${batches} group commits), ${mine.length} frames ` +
        `(the controller's count: ${(metric / 1024).toFixed(1)} KB per create)`,
    );
    print(owned, 'frames');
  }
}
if (args.json) console.log(JSON.stringify(report));
await pgWal?.close();
await daemon.close();
process.exit(0);
