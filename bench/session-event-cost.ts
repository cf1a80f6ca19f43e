/**
 * `node --import tsx bench/session-event-cost.ts [--store sqlite|postgres://…] [--sessions N] [--rounds N]`
 *
 * The CPU a new session's `created` event adds to its insert (issue #24: at most 5 % of a session create),
 * measured where the cost is, without HTTP around it: N session inserts, 16 in flight so they share grouped
 * commits as under load, once without the event (the bare insert, as before the events) and once with it (the
 * event built by the model and inserted in the same grouped transaction), alternating A/B/A/B for `--rounds`
 * rounds in one process. CPU is this process's (process.cpuUsage) per insert; on PostgreSQL the server's own
 * CPU is not counted. Compare the difference with a whole session create's CPU in the bench (`new-sessions`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openStore } from '../src/store/db.js';
import { groupedRow, groupedWrite, hotRows, hotWrite } from '../src/store/direct.js';
import { insertSessionIfAbsent, type StoredSession } from '../src/store/sessions.js';
import { sessionCreatedEvent } from '../src/model/events/session-events.js';
import { numberedPlaceholders, storeKind } from '../src/store/dialect.js';
import type { Ctx } from '../src/model/ctx.js';

const { values: args } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    sessions: { type: 'string', default: '4000' },
    rounds: { type: 'string', default: '4' },
  },
});
const perRun = Number(args.sessions);
const rounds = Number(args.rounds);
const dir = mkdtempSync(join(tmpdir(), 'edgectl-session-event-'));
const store = await openStore(args.store === 'sqlite' ? join(dir, 'store.db') : args.store!, {
  backgroundCheckpoints: true,
});
const db = store.db;
const pg = storeKind(db) === 'postgres';
const q = (text: string) => (pg ? numberedPlaceholders(text) : text);
const now = new Date().toISOString();

const [type] = await hotRows<{ id: string }>(db, 'select id from identity_types order by id limit 1', []);
const [policy] = await hotRows<{ id: string }>(db, 'select id from auth_policies order by id limit 1', []);
await hotWrite(
  db,
  q(
    `insert into identities (id, "createdAt", "updatedAt", tags, "isSystem", name, "typeId", "authPolicyId") values (?, ?, ?, '{}', ?, ?, ?, ?)`,
  ),
  ['bench-identity', now, now, 0, 'bench-identity', type!.id, policy!.id],
);
await hotWrite(
  db,
  q(`insert into services (id, "createdAt", "updatedAt", tags, "isSystem", name) values (?, ?, ?, '{}', ?, ?)`),
  ['bench-service', now, now, 0, 'bench-service'],
);

/** A minimal Ctx: what the event's builder reads. */
const ctx = { now: () => new Date(), actor: undefined } as unknown as Ctx;
const BARE = `insert into sessions (id, "createdAt", "updatedAt", tags, "isSystem", "tokenHash", type, "apiSessionId", "serviceId", "identityId")
  values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  on conflict ("apiSessionId", "serviceId", type) do nothing`;
/** PostgreSQL's bare insert: grouped as the store groups its new sessions (one statement per turn). */
const BARE_ROWS = {
  text: `insert into sessions (id, "createdAt", "updatedAt", tags, "isSystem", "tokenHash", type, "apiSessionId", "serviceId", "identityId")
  select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[])
  on conflict ("apiSessionId", "serviceId", type) do nothing returning id`,
};

let seq = 0;
async function apiSessions(n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = `bench-as-${seq++}`;
    ids.push(id);
    await hotWrite(
      db,
      q(`insert into api_sessions (id, "createdAt", "updatedAt", tags, "isSystem", "tokenHash", "identityId", "authenticatorId", "ipAddress", "configTypes", "authQueries", "isMfaRequired", "isMfaComplete", "lastActivityAt")
        values (?, ?, ?, '{}', ?, ?, 'bench-identity', '', '127.0.0.1', '[]', '[]', ?, ?, ?)`),
      [id, now, now, 0, `h-${id}`, 0, 0, now],
    );
  }
  return ids;
}

async function run(withEvent: boolean): Promise<number> {
  const owners = await apiSessions(perRun);
  let next = 0;
  const start = process.cpuUsage();
  const wall = performance.now();
  const worker = async () => {
    while (next < owners.length) {
      const apiSessionId = owners[next++]!;
      // As the session service makes it: the time taken per session (the event's time is the session's).
      const at = ctx.now();
      const createdAt = at.toISOString();
      const s: StoredSession = {
        id: `s-${apiSessionId}`,
        createdAt,
        updatedAt: createdAt,
        tags: {},
        isSystem: false,
        tokenHash: `t-${apiSessionId}`,
        type: 'Dial',
        apiSessionId,
        serviceId: 'bench-service',
        identityId: 'bench-identity',
      };
      if (withEvent) await insertSessionIfAbsent(db, s, sessionCreatedEvent(ctx, s, at));
      else {
        const row = [
          s.id,
          s.createdAt,
          s.updatedAt,
          '{}',
          0,
          s.tokenHash,
          s.type,
          s.apiSessionId,
          s.serviceId,
          s.identityId,
        ];
        if (pg) await groupedRow(db, BARE_ROWS, row);
        else await groupedWrite(db, BARE, row);
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  const used = process.cpuUsage(start);
  rates[withEvent ? 'b' : 'a'].push(perRun / ((performance.now() - wall) / 1000));
  return (used.user + used.system) / perRun;
}
const rates = { a: [] as number[], b: [] as number[] };

await run(false);
await run(true);
const a: number[] = [];
const b: number[] = [];
for (let r = 0; r < rounds; r++) {
  a.push(await run(false));
  b.push(await run(true));
}
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
const fmt = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(', ');
console.log(`store ${pg ? 'postgres' : 'sqlite'}, ${perRun} inserts per run, 16 in flight`);
console.log(`without event: ${fmt(a)} µs/insert (median ${median(a).toFixed(1)})`);
console.log(`with event:    ${fmt(b)} µs/insert (median ${median(b).toFixed(1)})`);
console.log(
  `inserts/s without event: ${rates.a.map((x) => x.toFixed(0)).join(', ')}; with: ${rates.b.map((x) => x.toFixed(0)).join(', ')}`,
);
console.log(`the event adds ${(median(b) - median(a)).toFixed(1)} µs per session create (medians)`);
await store.close();
if (args.store === 'sqlite') rmSync(dir, { recursive: true, force: true });
