/**
 * Where an identity create's SQLite time goes, statement by statement: a copy of a kept model's data dir, the
 * controller in this process (`startDaemon`, requests through `inject`, the group commit's time bound lifted), 16
 * creates at once; each better-sqlite3 statement's CPU (process.cpuUsage around it, so other threads' CPU counts
 * too: compare statements within one run) and how many run per create. `PRE_SQL`: statements run on the copy
 * once the controller has opened it (to try a variant); `QUIET=1`: the totals only.
 * Usage: node --import tsx bench/statement-time.ts MODEL_DIR [CREATES]
 */
import Database from 'better-sqlite3';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/daemon/config.js';
import { startDaemon } from '../src/daemon/daemon.js';
import { runtimeOf } from '../src/store/runtime.js';
import { injectedIdentityCreates, measuredCreates } from './inject-identity-creates.js';

const model = process.argv[2]!;
const count = Number(process.argv[3] ?? 2000);
const dir = mkdtempSync(join(tmpdir(), 'edgectl-stmt-'));
cpSync(model, dir, { recursive: true });
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const quiet = !!process.env.QUIET;
const cpuNs = () => {
  const u = process.cpuUsage();
  return BigInt(u.user + u.system) * 1000n;
};
const stats = new Map<string, { n: number; ns: bigint }>();
const probe = new Database(':memory:');
const Stmt = Object.getPrototypeOf(probe.prepare('select 1'));
let on = false;
for (const m of ['run', 'get', 'all']) {
  const orig = Stmt[m];
  Stmt[m] = function (this: { source: string }, ...a: unknown[]) {
    if (!on) return orig.apply(this, a);
    const t = cpuNs();
    try {
      return orig.apply(this, a);
    } finally {
      const k = this.source.replace(/\s+/g, ' ').slice(0, 140);
      const s = stats.get(k) ?? { n: 0, ns: 0n };
      s.n++;
      s.ns += cpuNs() - t;
      stats.set(k, s);
    }
  };
}
const DbProto = Database.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
const origExec = DbProto.exec!;
DbProto.exec = function (this: unknown, ...a: unknown[]) {
  if (!on) return origExec.apply(this, a);
  const t = cpuNs();
  try {
    return origExec.apply(this, a);
  } finally {
    const k = 'EXEC ' + String(a[0]).slice(0, 100);
    const s = stats.get(k) ?? { n: 0, ns: 0n };
    s.n++;
    s.ns += cpuNs() - t;
    stats.set(k, s);
  }
};
const configFile = join(dir, 'config.yml');
writeFileSync(configFile, 'log:\n  level: silent\n');
const ADMIN = { username: 'st-admin', password: 'st-Admin-Passw0rd!' };
const daemon = await startDaemon(
  loadConfig({ flags: { dataDir: dir, listen: '127.0.0.1:0', config: configFile, logLevel: 'silent' }, env: {} }),
  { adminCredentials: async () => ADMIN },
);
const app = daemon.app;
if (process.env.PRE_SQL) {
  const d = new Database(join(dir, 'edgectl.db'));
  d.exec(process.env.PRE_SQL);
  d.close();
}
const batcher = runtimeOf(daemon.store.db)?.batcher;
if (batcher) batcher.maxBatchMs = Infinity;
const run = await injectedIdentityCreates(app, ADMIN, `st${Date.now().toString(36)}`);
const m = await measuredCreates(run, 500, count, (measuring) => (on = measuring));
let total = 0n;
for (const s of stats.values()) total += s.ns;
console.log(
  `${count} creates: wall ${m.wallUs.toFixed(0)} µs/create, cpu ${m.cpuUs.toFixed(0)} µs/create, sqlite ${(Number(total) / 1000 / count).toFixed(0)} µs/create`,
);
if (!quiet)
  for (const [k, s] of [...stats].sort((a, b) => Number(b[1].ns - a[1].ns)).slice(0, 30))
    console.log(
      `${(Number(s.ns) / 1000 / count).toFixed(1).padStart(7)} µs/create ${(s.n / count).toFixed(2).padStart(6)}/create  ${k}`,
    );
await daemon.close();
process.exit(0);
