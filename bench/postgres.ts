/**
 * The benchmark on PostgreSQL (`npm run bench -- --db postgres://…`): a database of its own on the named server
 * for each run (created empty, migrated by the model build, dropped at exit unless `--keep`), its size and the
 * server's write-ahead log position, and the CPU PostgreSQL itself spends for it: the backend processes serving
 * that database, read from `/proc` like the servers' (bench/proc.ts), so the cost of the database shows beside
 * the controller's.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { clockTicksPerSecond } from './proc.js';

/** The server's URL with another database in its path (the URL's own database is only used to connect). */
export function databaseUrl(server: string, database: string): string {
  const u = new URL(server);
  u.pathname = `/${database}`;
  return u.toString();
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Creates an empty database on the server `server` names; answers its URL. */
export async function createDatabase(server: string, database: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(database)) throw new Error(`not a plain database name: ${database}`);
  await withClient(server, (c) => c.query(`create database "${database}"`));
  return databaseUrl(server, database);
}

/**
 * Drops the database, ending its connections, synchronously (in a child process): it runs from the bench's
 * `exit` handler, which is also where a failed run ends up.
 */
export function dropDatabaseSync(server: string, database: string): void {
  const script =
    "import pg from 'pg'; const c = new pg.Client({ connectionString: process.argv[1] }); await c.connect(); " +
    'await c.query(`drop database if exists "${process.argv[2]}" with (force)`); await c.end();';
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script, server, database], {
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: 60_000,
  });
  if (r.status !== 0) console.error(`could not drop the bench database ${database} on ${new URL(server).host}`);
}

/** The database's size on disk (`pg_database_size`), MiB. */
export async function databaseSizeMiB(url: string): Promise<number> {
  const { rows } = await withClient(url, (c) => c.query('select pg_database_size(current_database()) as n'));
  return Number(rows[0].n) / 1024 / 1024;
}

/** Bytes of write-ahead log the whole server has written so far (its current position). */
export async function walPosition(url: string): Promise<number> {
  const { rows } = await withClient(url, (c) => c.query(`select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0') as n`));
  return Number(rows[0].n);
}

export interface DatabaseWal {
  /** Bytes written so far (0 at the first call). */
  written(): Promise<number>;
  byRelation: Map<string, number>;
  close(): Promise<void>;
}

/**
 * Bytes of write-ahead log one database's changes wrote (`url`'s own), read from the log itself with the
 * `pg_walinspect` extension (PostgreSQL 15 or later; created in that database if missing): every record that
 * touches one of its relations, full-page images included, and the commit records of the same transactions.
 * Other databases on the server are left out, unlike the server's WAL position. Answers a counter: each call
 * adds the records written since the previous one (the first call starts it at 0), and `byRelation` keeps the
 * bytes by table or index. Undefined when the extension cannot be had.
 */
export async function databaseWal(url: string): Promise<DatabaseWal | undefined> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query('create extension if not exists pg_walinspect');
  } catch {
    await c.end();
    return undefined;
  }
  const lsn = async () => (await c.query('select pg_current_wal_flush_lsn() as l')).rows[0].l as string;
  let from: string | undefined;
  let total = 0;
  const byRelation = new Map<string, number>();
  return {
    byRelation,
    async written() {
      const to = await lsn();
      if (from === undefined) {
        from = to;
        return 0;
      }
      // Nothing flushed since the last call (the function refuses a start at or past the flushed end).
      const ahead = await c.query('select pg_wal_lsn_diff($1, $2) > 0 as y', [to, from]);
      if (!ahead.rows[0].y) return total;
      const { rows } = await c.query<{ rel: string | null; n: string }>(
        `with r as (
           select xid, record_length, resource_manager,
                  substring(block_ref from 'rel [0-9]+/([0-9]+)/')::oid as db,
                  substring(block_ref from 'rel [0-9]+/[0-9]+/([0-9]+)')::oid as node
           from pg_get_wal_records_info($1, $2)),
         mine as (select * from r where db = (select oid from pg_database where datname = current_database())),
         xids as (select distinct xid from mine where xid <> 0)
         select coalesce((select relname from pg_class where pg_relation_filenode(oid) = mine.node limit 1),
                         'relation ' || mine.node) as rel, sum(record_length) as n
         from mine group by mine.node
         union all
         select '(commits)', sum(record_length) from r
         where resource_manager = 'Transaction' and xid in (select xid from xids)`,
        [from, to],
      );
      from = to;
      for (const r of rows) {
        const n = Number(r.n ?? 0);
        total += n;
        byRelation.set(r.rel ?? '?', (byRelation.get(r.rel ?? '?') ?? 0) + n);
      }
      return total;
    },
    async close() {
      await c.end();
    },
  };
}

/** A process's command line with its NUL separators as spaces, or undefined once it is gone. */
function cmdline(pid: number | string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return undefined;
  }
}

/** CPU ticks (user + system) and start time of a process, or undefined once it is gone. */
function cpuAndStart(pid: number | string): { ticks: number; start: string } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // Fields after the command name (in parentheses, possibly with spaces): utime, stime are the 12th and 13th,
  // the start time the 20th (fields 14, 15 and 22 of proc(5)).
  const rest = text
    .slice(text.lastIndexOf(')') + 1)
    .trim()
    .split(/\s+/);
  return { ticks: Number(rest[11]) + Number(rest[12]), start: rest[19]! };
}

/**
 * The CPU PostgreSQL spends serving one database: every process whose command line starts with `postgres:`
 * and names the database (its backends, an autovacuum worker on it). Backends come and go (a pool closes idle
 * connections), so the processes are sampled every `intervalMs` while a run is measured: a backend that starts
 * during the run counts from zero, one that ends counts up to its last sample (less than one interval lost).
 * When the server is not on this machine nothing is found and the figure is NaN.
 */
export class BackendCpu {
  private postmasters: string[] | undefined;

  constructor(
    private readonly database: string,
    private readonly intervalMs = 200,
  ) {}

  /** The processes serving the database now: key (pid and start time) → CPU ticks so far. */
  private sample(): Map<string, number> {
    // The server's own processes (`postgres: checkpointer`, …) are children of the postmaster; its children
    // list is one read, where a scan of /proc is hundreds.
    this.postmasters ??= this.findPostmasters();
    let pids: string[] = [];
    for (const pm of this.postmasters) {
      try {
        pids.push(...readFileSync(`/proc/${pm}/task/${pm}/children`, 'utf8').trim().split(/\s+/).filter(Boolean));
      } catch {
        pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
        break;
      }
    }
    const out = new Map<string, number>();
    for (const pid of pids) {
      const cmd = cmdline(pid);
      if (!cmd?.startsWith('postgres:') || !cmd.split(/\s+/).includes(this.database)) continue;
      const s = cpuAndStart(pid);
      if (s) out.set(`${pid}@${s.start}`, s.ticks);
    }
    return out;
  }

  private findPostmasters(): string[] {
    const found = new Set<string>();
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid) || !cmdline(pid)?.startsWith('postgres:')) continue;
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        found.add(
          stat
            .slice(stat.lastIndexOf(')') + 1)
            .trim()
            .split(/\s+/)[1]!,
        );
      } catch {
        // gone meanwhile
      }
    }
    return [...found];
  }

  /** Starts counting; the function returned stops and answers the CPU seconds spent since (NaN: none found). */
  start(): () => number {
    const base = new Map<string, number>();
    const last = new Map<string, number>();
    for (const [k, ticks] of this.sample()) {
      base.set(k, ticks);
      last.set(k, ticks);
    }
    const tick = () => {
      for (const [k, ticks] of this.sample()) {
        if (!base.has(k)) base.set(k, 0);
        last.set(k, ticks);
      }
    };
    const timer = setInterval(tick, this.intervalMs);
    return () => {
      clearInterval(timer);
      tick();
      if (last.size === 0) return NaN;
      let ticks = 0;
      for (const [k, t] of last) ticks += t - base.get(k)!;
      return ticks / clockTicksPerSecond();
    };
  }
}
