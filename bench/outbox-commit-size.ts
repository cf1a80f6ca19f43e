/**
 * `node --import tsx bench/outbox-commit-size.ts [--events N]`
 *
 * What the size of a commit does to the outbox's cost per event, on SQLite: a scratch database with the outbox's
 * table and its two indexes (migration 0021 as it stands), WAL and `synchronous = NORMAL` as the store opens
 * it, new sessions' `created` events (the shortened text the store writes) with rising times and time-ordered
 * entity ids, inserted N at a time per transaction for N = 16 (a group commit under load), 64, 256 and 1,024.
 * A fifth of the events go first unmeasured, then the log is emptied and not checkpointed, and for the rest it
 * reports log frames per event (each is a page written to the log and copied again by a checkpoint) and this
 * process's CPU per event (the statement and SQLite; no checkpoint). Frames do not depend on the machine's
 * load; CPU does.
 */
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { INSERT_EVENT_COLUMNS } from '../src/store/events.js';

const { values: args } = parseArgs({ options: { events: { type: 'string', default: '40000' } } });
const total = Number(args.events);
const warm = Math.floor(total / 5);
const body = `{"session_id":"${'s'.repeat(16)}","session_type":"Dial","api_session_id":"${'a'.repeat(16)}","identity_id":"${'i'.repeat(16)}","service_id":"${'v'.repeat(16)}"}`;

for (const perCommit of [16, 64, 256, 1024]) {
  const dir = mkdtempSync(join(tmpdir(), 'edgectl-outbox-'));
  const db = new Database(join(dir, 'outbox.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('wal_autocheckpoint = 0');
    db.exec(`create table events ("seq" integer primary key, "id" text not null, "namespace" text not null,
      "eventType" text not null, "timestamp" text not null, "actorId" text, "entityType" text, "entityId" text,
      "body" text not null)`);
    db.exec('create index "events_by_timestamp" on "events" ("timestamp")');
    db.exec('create index "events_by_entity" on "events" ("entityId", "seq")');
    const insert = db.prepare(`${INSERT_EVENT_COLUMNS} values (?, 'session', 'created', ?, ?, 'sessions', ?, ?)`);
    let t = Date.now();
    const rows = Array.from({ length: total }, () => {
      t += 1;
      // A time-ordered entity id, as newEntityId makes them: the time first, then random characters.
      const entityId = t.toString(36).padStart(9, '0') + randomUUID().slice(0, 7);
      return [randomUUID(), new Date(t).toISOString(), 'identity', entityId, body];
    });
    const commit = db.transaction((batch: unknown[][]) => {
      for (const r of batch) insert.run(r);
    });
    for (let i = 0; i < warm; i += perCommit) commit(rows.slice(i, Math.min(warm, i + perCommit)));
    db.pragma('wal_checkpoint(TRUNCATE)');
    const cpu0 = process.cpuUsage();
    for (let i = warm; i < total; i += perCommit) commit(rows.slice(i, i + perCommit));
    const cpu = process.cpuUsage(cpu0);
    const pageSize = Number(db.pragma('page_size', { simple: true }));
    const frames = (statSync(join(dir, 'outbox.db-wal')).size - 32) / (pageSize + 24);
    const n = total - warm;
    console.log(
      `${perCommit} events a commit: ${(frames / n).toFixed(3)} log frames per event ` +
        `(${((frames / n) * perCommit).toFixed(1)} per commit), ${((cpu.user + cpu.system) / n).toFixed(2)} µs CPU per event`,
    );
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
