/**
 * Identity creates through the Management API, alone: a copy of a kept model's data dir (so every run starts
 * from the same store) or, with `--db`, a copy of a kept PostgreSQL database (`CREATE DATABASE … TEMPLATE`),
 * the built controller started on it (dist/, `bin/edgectl serve`, bench/stack.ts), and `--connections`
 * keep-alive HTTPS clients creating identities with the model's attribute spread (bench/writes.ts) for
 * `--seconds`. Prints one JSON line: creates a second, the controller's CPU per create (/proc), on SQLite the
 * write-ahead log bytes per create and creates per commit (/metrics), on PostgreSQL the database's own log
 * records per create (pg_walinspect) and its backends' CPU per create, and the load average. `--cpu-prof DIR`
 * writes the controller's V8 profile there (bench/profile-top.ts summarises it).
 *
 * Usage: node --import tsx bench/identity-creates.ts --model DIR [--db URL_OF_KEPT_DATABASE] [--seconds N]
 *   [--connections N] [--warmup N] [--cpu-prof DIR]
 * The model: `node --import tsx bench/build-model.ts DIR large 4 0 [DB_URL]` (DB_URL: the database to keep).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import https from 'node:https';
import { createServer } from 'node:net';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { send } from './load.js';
import { processCpuSeconds } from './proc.js';
import { ADMIN, MGMT, spawnController } from './stack.js';
import { attributesOf } from './model.js';
import { fromMetrics, walFromMetrics } from './writes.js';
import { BackendCpu, databaseUrl, databaseWal, dropDatabaseSync } from './postgres.js';

const { values: args } = parseArgs({
  options: {
    model: { type: 'string' },
    db: { type: 'string' },
    seconds: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '16' },
    'cpu-prof': { type: 'string' },
  },
});
if (!args.model) throw new Error('--model DIR (a data dir bench/build-model.ts made)');
const connections = Number(args.connections);
const seconds = Number(args.seconds);
const warmup = Number(args.warmup);

const dataDir = mkdtempSync(join(tmpdir(), 'edgectl-idcreates-'));
cpSync(args.model, dataDir, { recursive: true });
let dbUrl: string | undefined;
let dbName: string | undefined;
let server: string | undefined;
if (args.db) {
  const kept = new URL(args.db);
  const template = kept.pathname.slice(1);
  dbName = `edgectl_idcreates_${process.pid}`;
  kept.pathname = '/postgres';
  server = kept.toString();
  const c = new pg.Client({ connectionString: server });
  await c.connect();
  await c.query(`CREATE DATABASE ${dbName} TEMPLATE ${template}`);
  await c.end();
  dbUrl = databaseUrl(server, dbName);
}
const cleanup = () => {
  rmSync(dataDir, { recursive: true, force: true });
  if (dbName) dropDatabaseSync(server!, dbName);
};

const port = await new Promise<number>((resolve) => {
  const srv = createServer().listen(0, '127.0.0.1', () => {
    const p = (srv.address() as { port: number }).port;
    srv.close(() => resolve(p));
  });
});
const child = spawnController(dataDir, port, args['cpu-prof'], { metrics: true, ...(dbUrl && { db: dbUrl }) });
const exited = new Promise<void>((r) => child.once('exit', () => r()));
try {
  const ca = readFileSync(join(dataDir, 'pki', 'ca-bundle.pem'), 'utf8');
  const agent = new https.Agent({ keepAlive: true, ca });
  const target = { ca, base: `https://127.0.0.1:${port}` };
  for (let waited = 0; ; waited += 100) {
    const up = await send(target, agent, { method: 'GET', path: '/version' }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (up) break;
    if (waited > 120_000 || child.exitCode !== null) throw new Error('the controller did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  const auth = await send(target, agent, {
    method: 'POST',
    path: `${MGMT}/authenticate?method=password`,
    body: { username: ADMIN.username, password: ADMIN.password },
  });
  if (auth.status !== 200) throw new Error(`login: ${auth.status} ${auth.body}`);
  const headers = { 'zt-session': JSON.parse(auth.body).data.token as string };
  const metrics = async () => (await send(target, agent, { method: 'GET', path: '/metrics' })).body;
  const wal = dbUrl ? await databaseWal(dbUrl) : undefined;
  // On a server shared with other work a checkpoint may recycle the log the run wrote before it is read: no figure then.
  const walWritten = dbUrl ? () => wal!.written().catch(() => NaN) : walFromMetrics(metrics);
  // PostgreSQL's group commit counts its batches too (a build without it reports none: no figure).
  const commits = fromMetrics(metrics, 'edgectl_store_commits_total');
  const backend = dbName ? new BackendCpu(dbName) : undefined;

  let serial = 0;
  const tag = `idc${process.pid}`;
  const run = async (secs: number) => {
    let creates = 0;
    let errors = 0;
    const end = performance.now() + secs * 1000;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (performance.now() < end) {
          const n = serial++;
          const r = await send(target, agent, {
            method: 'POST',
            path: `${MGMT}/identities`,
            headers,
            body: { name: `${tag}-id-${n}`, type: 'Device', isAdmin: false, roleAttributes: attributesOf(n) },
          }).catch(() => ({ status: 0, body: '' }));
          if (r.status === 201) creates++;
          else errors++;
        }
      }),
    );
    return { creates, errors };
  };
  if (warmup > 0) await run(warmup);
  await new Promise((r) => setTimeout(r, 500));
  const wal0 = await walWritten();
  const commits0 = await commits?.();
  const cpu0 = processCpuSeconds(child.pid!);
  const stopBackend = backend?.start();
  const load0 = loadavg()[0]!;
  const from = Number(process.hrtime.bigint() / 1000n);
  const t0 = performance.now();
  const { creates, errors } = await run(seconds);
  const elapsed = (performance.now() - t0) / 1000;
  const to = Number(process.hrtime.bigint() / 1000n);
  const cpu = processCpuSeconds(child.pid!) - cpu0;
  const pgCpu = stopBackend?.();
  await new Promise((r) => setTimeout(r, 1000));
  const walBytes = (await walWritten()) - wal0;
  const commitCount = commits ? (await commits()) - commits0! : undefined;
  await wal?.close();
  console.log(
    JSON.stringify({
      store: dbUrl ? 'postgres' : 'sqlite',
      connections,
      seconds: Math.round(elapsed * 10) / 10,
      creates,
      errors,
      perSecond: Math.round(creates / elapsed),
      controllerCpuUsPerCreate: Math.round((cpu / creates) * 1e6),
      ...(pgCpu !== undefined && { pgCpuUsPerCreate: Math.round((pgCpu / creates) * 1e6) }),
      walKBPerCreate: Number.isNaN(walBytes) ? null : Math.round((walBytes / creates / 1024) * 10) / 10,
      ...(commitCount && { perCommit: Math.round((creates / commitCount) * 10) / 10 }),
      window: [from, to],
      load: [load0, ...loadavg()].map((l) => Math.round(l * 100) / 100),
    }),
  );
} finally {
  child.kill('SIGTERM');
  await exited;
  cleanup();
}
