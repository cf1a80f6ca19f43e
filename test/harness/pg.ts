/**
 * PostgreSQL databases for tests: `EDGECTL_TEST_STORE=postgres` runs the test servers on PostgreSQL instead of
 * SQLite. Each server gets a database of its own, copied from a template that has every migration applied (made
 * once per version of the migrations, under an advisory lock so parallel test processes make it once), and
 * dropped when the server closes. The server is `EDGECTL_TEST_PG` (default: the machine's local PostgreSQL).
 *
 * Test databases commit without waiting for the server's log flush (`synchronous_commit = off`, set on each
 * database): a commit answers in about 0.1-0.2 ms instead of 2.5-3 ms of waiting for the disk on the 2-core
 * machine. What a client sees is the same unless the server itself crashes, which no test does (a controller
 * killed mid-write still finds every acknowledged commit: the server has it).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { after, before } from 'node:test';
import { openStore, type OpenedStore } from '../../src/store/db.js';
import { processAlive } from '../../src/store/lock.js';

export const PG_SERVER = process.env.EDGECTL_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/test';

export const testStoreKind = (): 'sqlite' | 'postgres' =>
  process.env.EDGECTL_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';

const TEMPLATE_LOCK = 0x74706c; // 'tpl'

const urlOf = (database: string): string => {
  const u = new URL(PG_SERVER);
  u.pathname = `/${database}`;
  return u.toString();
};

/** A name that changes whenever a migration or the PostgreSQL store's set-up does. */
function templateName(): string {
  const root = new URL('../../src/store/', import.meta.url).pathname;
  const hash = createHash('sha256');
  for (const dir of ['migrations', 'migrations/config-types', 'pg'])
    for (const f of readdirSync(join(root, dir)).sort())
      if (f.endsWith('.ts')) hash.update(f).update(readFileSync(join(root, dir, f)));
  return `edgectl_tpl_${hash.digest('hex').slice(0, 16)}`;
}

async function withServer<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: PG_SERVER });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/**
 * Test databases and templates more than a day old (left by a run that was killed, or made by another version of
 * the migrations): each is labelled with its creation time. Younger ones may belong to a run going on beside
 * this one (another checkout on the same server) and are left alone.
 */
async function dropStale(c: pg.Client): Promise<void> {
  const { rows } = await c.query(
    `select datname as name, shobj_description(oid, 'pg_database') as made from pg_database
     where datname like 'edgectl\\_tpl\\_%' or datname like 'edgectl\\_t\\_%'`,
  );
  const dayAgo = Date.now() - 24 * 3600 * 1000;
  for (const r of rows as { name: string; made: string | null }[]) {
    const made = r.made ? Date.parse(r.made) : NaN;
    if (!(made > dayAgo)) await c.query(`drop database if exists "${r.name}" with (force)`);
  }
}

/**
 * Test databases of test processes of this machine that are gone (killed before they dropped what they made):
 * their names carry the process id. Only when the server is this machine's, where those ids mean something.
 */
async function dropOrphans(c: pg.Client): Promise<void> {
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(new URL(PG_SERVER).hostname)) return;
  const { rows } = await c.query<{ name: string }>(
    `select datname as name from pg_database where datname ~ '^edgectl_t_(empty_)?[0-9]+_'`,
  );
  for (const { name } of rows) {
    const pid = Number(/^edgectl_t_(?:empty_)?(\d+)_/.exec(name)?.[1]);
    if (!pid || pid === process.pid || processAlive(pid)) continue;
    await c.query(`drop database if exists "${name}" with (force)`);
  }
}

/**
 * The statement that creates a test database. It copies the template's files instead of writing the copy into
 * the server's log (PostgreSQL 15's default, `wal_log`): for these ~10 MB databases that costs a third of the
 * server's CPU and of the wait (8 creates: 0.7 s of server CPU and 1.4 s against 2.1 s and 3.7 s).
 */
export const createDatabase = (name: string, template = 'template1') =>
  `create database "${name}" template "${template}" strategy file_copy`;

let template: Promise<string> | undefined;

function migratedTemplate(): Promise<string> {
  template ??= withServer(async (c) => {
    const name = templateName();
    await c.query('select pg_advisory_lock($1)', [TEMPLATE_LOCK]);
    try {
      const found = await c.query('select 1 from pg_database where datname = $1', [name]);
      await dropOrphans(c);
      if (found.rowCount === 0) {
        await dropStale(c);
        await c.query(createDatabase(`${name}_new`));
        const store = await openStore(urlOf(`${name}_new`));
        await store.close();
        await c.query(`alter database "${name}_new" rename to "${name}"`);
        await c.query(`comment on database "${name}" is '${new Date().toISOString()}'`);
      }
    } finally {
      await c.query('select pg_advisory_unlock($1)', [TEMPLATE_LOCK]);
    }
    return name;
  });
  return template;
}

let counter = 0;

type TestDatabase = { url: string; drop(): Promise<void> };

/**
 * The next test database, made while the last one is in use, in a process whose test servers run on PostgreSQL
 * one after another (`EDGECTL_TEST_STORE=postgres`): a copy of the template waits 0.4-1 s for the checkpoint
 * PostgreSQL forces, and those waits, one per server, were a large part of such a process's time. The one
 * left when the process's work ends is dropped then, or, if the process is cut short, by a later process's
 * orphan sweep (its name carries this process's id).
 */
let next: Promise<TestDatabase> | undefined;

/** A new database with every migration applied: its URL, and how to drop it. */
export async function freshDatabase(): Promise<TestDatabase> {
  if (testStoreKind() !== 'postgres') return copyOfTemplate();
  const taken = next ?? copyOfTemplate();
  next = undefined;
  const database = await taken;
  if (!next) {
    const made = copyOfTemplate();
    // Awaited by the next call, which sees its failure; none is left unhandled in the meantime.
    made.catch(() => {});
    if (nextLeftOver === undefined) {
      nextLeftOver = () => {
        const left = next;
        next = undefined;
        left?.then((d) => d.drop()).catch(() => {});
      };
      process.once('beforeExit', nextLeftOver);
    }
    next = made;
  }
  return database;
}

let nextLeftOver: (() => void) | undefined;

async function copyOfTemplate(): Promise<TestDatabase> {
  const tpl = await migratedTemplate();
  const name = `edgectl_t_${process.pid}_${++counter}_${Math.random().toString(36).slice(2, 8)}`;
  await withServer(async (c) => {
    await c.query(createDatabase(name, tpl));
    await c.query(`alter database "${name}" set synchronous_commit = off`);
    await c.query(`comment on database "${name}" is '${new Date().toISOString()}'`);
  });
  return {
    url: urlOf(name),
    drop: () => withServer((c) => c.query(`drop database if exists "${name}" with (force)`)).then(() => {}),
  };
}

/** A new database with nothing in it (no migration applied): its URL, and how to drop it. */
export async function emptyDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `edgectl_t_empty_${process.pid}_${++counter}_${Math.random().toString(36).slice(2, 8)}`;
  await withServer(async (c) => {
    await c.query(createDatabase(name));
    await c.query(`alter database "${name}" set synchronous_commit = off`);
    await c.query(`comment on database "${name}" is '${new Date().toISOString()}'`);
  });
  return {
    url: urlOf(name),
    drop: () => withServer((c) => c.query(`drop database if exists "${name}" with (force)`)).then(() => {}),
  };
}

/**
 * Why a PostgreSQL test cannot run here, or false when it can. In CI (`CI` set) an unreachable server is a
 * failure, never a skip: the answer is then false and the test fails on its first connection.
 */
export async function postgresSkip(): Promise<string | false> {
  if (process.env.CI) return false;
  try {
    await withServer((c) => c.query('select 1'));
    return false;
  } catch (e) {
    return `PostgreSQL is not reachable at ${new URL(PG_SERVER).host} (${(e as Error).message}); set EDGECTL_TEST_PG`;
  }
}

/**
 * A PostgreSQL store of a test file's own: a fresh database, opened before the file's tests and closed and
 * dropped after them (nothing when `skip`). Read `store` and `url` inside the tests.
 */
export function postgresStoreForTests(skip: string | false): { readonly store: OpenedStore; readonly url: string } {
  let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;
  let opened: OpenedStore | undefined;
  before(async () => {
    if (skip) return;
    database = await freshDatabase();
    opened = await openStore(database.url);
  });
  after(async () => {
    await opened?.close();
    await database?.drop();
  });
  return {
    get store() {
      if (!opened) throw new Error('the test store is not open');
      return opened;
    },
    get url() {
      if (!database) throw new Error('the test database does not exist');
      return database.url;
    },
  };
}
