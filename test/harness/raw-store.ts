/**
 * A test server's store reached past the controller, the way an outside party with the database would write
 * it: a second SQLite connection to the file, or a PostgreSQL connection of its own. Statements use `?`
 * placeholders on both. `pastKeys` writes rows whose references point nowhere: SQLite with `foreign_keys` off,
 * PostgreSQL with `session_replication_role = replica` (as replication and restore tools write, with no
 * foreign-key or other trigger firing).
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { numberedPlaceholders } from '../../src/store/dialect.js';
import type { TestServer } from './server.js';

export type Exec = (text: string, params?: readonly unknown[]) => Promise<void>;

export async function writeStore(
  server: TestServer,
  fn: (exec: Exec) => Promise<void>,
  pastKeys = false,
): Promise<void> {
  if (server.dbUrl) {
    const c = new pg.Client({ connectionString: server.dbUrl });
    await c.connect();
    try {
      if (pastKeys) await c.query('set session_replication_role = replica');
      await fn(async (text, params = []) => {
        // Without parameters: the simple protocol, which takes several statements at once.
        if (params.length === 0) await c.query(text);
        else await c.query(numberedPlaceholders(text), [...params]);
      });
    } finally {
      await c.end();
    }
    return;
  }
  const db = new Database(join(server.dataDir, 'edgectl.db'));
  try {
    db.pragma('busy_timeout = 5000');
    if (pastKeys) db.pragma('foreign_keys = OFF');
    await fn(async (text, params = []) => {
      if (params.length === 0) db.exec(text);
      else db.prepare(text).run(...params);
    });
  } finally {
    db.close();
  }
}

/** Rows a query over the server's store answers (`?` placeholders), read past the controller. */
export async function readStore<T>(server: TestServer, text: string, params: readonly unknown[] = []): Promise<T[]> {
  if (server.dbUrl) {
    const c = new pg.Client({ connectionString: server.dbUrl });
    await c.connect();
    try {
      return (await c.query(numberedPlaceholders(text), [...params])).rows as T[];
    } finally {
      await c.end();
    }
  }
  const db = new Database(join(server.dataDir, 'edgectl.db'), { readonly: true });
  try {
    return db.prepare(text).all(...params) as T[];
  } finally {
    db.close();
  }
}
