/**
 * The statements an identity create sends to PostgreSQL: a copy of a kept database (`TEMPLATE`), the controller
 * in this process, 16 creates at once through `inject`; each pg query counted by text with its mean time to
 * answer, and creates a second. Usage: node --import tsx bench/pg-statements.ts MODEL_DIR KEPT_DATABASE [CREATES]
 */
import pg from 'pg';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/daemon/config.js';
import { startDaemon } from '../src/daemon/daemon.js';
import { injectedIdentityCreates, measuredCreates } from './inject-identity-creates.js';
import { BENCH_MASTER_KEY } from './master-key.js';
import { databaseUrl, dropDatabaseSync } from './postgres.js';

const model = process.argv[2]!;
const template = process.argv[3]!;
const count = Number(process.argv[4] ?? 1000);
const server = 'postgres://postgres@127.0.0.1:5432/postgres';
const name = `idc_pgstmts_${process.pid}`;
const c = new pg.Client({ connectionString: server });
await c.connect();
await c.query(`create database ${name} template ${template}`);
await c.end();
const dir = mkdtempSync(join(tmpdir(), 'edgectl-pgst-'));
cpSync(model, dir, { recursive: true });
process.on('exit', () => {
  rmSync(dir, { recursive: true, force: true });
  dropDatabaseSync(server, name);
});
const stats = new Map<string, { n: number; ms: number }>();
let on = false;
const orig = pg.Client.prototype.query as (...a: unknown[]) => unknown;
(pg.Client.prototype as unknown as { query: unknown }).query = function (this: unknown, ...a: unknown[]) {
  const r = orig.apply(this, a);
  if (on) {
    const q = a[0] as string | { text: string };
    const k = (typeof q === 'string' ? q : q.text).replace(/\s+/g, ' ').slice(0, 110);
    const s = stats.get(k) ?? { n: 0, ms: 0 };
    s.n++;
    const t = performance.now();
    if (r && typeof (r as Promise<unknown>).then === 'function')
      (r as Promise<unknown>).then(
        () => (s.ms += performance.now() - t),
        () => undefined,
      );
    stats.set(k, s);
  }
  return r;
};
const configFile = join(dir, 'config.yml');
writeFileSync(configFile, 'log:\n  level: silent\n');
const ADMIN = { username: 'st-admin', password: 'st-Admin-Passw0rd!' };
const daemon = await startDaemon(
  loadConfig({
    flags: {
      dataDir: dir,
      listen: '127.0.0.1:0',
      config: configFile,
      logLevel: 'silent',
      db: databaseUrl(server, name),
    },
    env: { EDGECTL_MASTER_KEY: BENCH_MASTER_KEY },
  }),
  { adminCredentials: async () => ADMIN },
);
const app = daemon.app;
const run = await injectedIdentityCreates(app, ADMIN, `pg${Date.now().toString(36)}`);
const m = await measuredCreates(run, 200, count, (measuring) => (on = measuring));
let n = 0;
for (const s of stats.values()) n += s.n;
console.log(
  `${count} creates: ${m.perSecond.toFixed(0)}/s, wall ${m.wallUs.toFixed(0)} µs/create, cpu ${m.cpuUs.toFixed(0)} µs/create, ${(n / count).toFixed(2)} statements/create`,
);
for (const [k, s] of [...stats].sort((a, b) => b[1].n - a[1].n).slice(0, 25))
  console.log(`${(s.n / count).toFixed(2).padStart(6)}/create ${(s.ms / s.n).toFixed(2).padStart(7)} ms each  ${k}`);
await daemon.close();
process.exit(0);
