/**
 * Failures of a cluster of `edgectl serve` processes over one PostgreSQL database: a replica killed with
 * SIGKILL under a mixed load loses nothing that was acknowledged and its clients carry on against the survivor
 * with the API sessions they have; the database's connections ended under the replicas' feet are replaced
 * within seconds, with no stale answer after.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { ApiClient } from '../harness/server.js';
import { freshDatabase, PG_SERVER, postgresSkip } from '../harness/pg.js';
import { scratch } from '../harness/processes.js';
import { serveProcess, type Served } from '../harness/serve-process.js';
import { assertBuilt } from '../harness/cli.js';

const skip = await postgresSkip();
const { tempDir, track } = scratch('edgectl-failover-');
const ADMIN = { EDGECTL_ADMIN_USERNAME: 'admin', EDGECTL_ADMIN_PASSWORD: 'admin-Passw0rd!' };
/** Both replicas are given it: the first seals the PKI and token key in the database under it, the second uses them. */
const MASTER_KEY = { EDGECTL_MASTER_KEY: 'failover-master-key-0123456789-abcdefgh' };

describe('a cluster of serve processes on one PostgreSQL database', { skip }, () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  const dirs: string[] = [];
  const running: (Served | undefined)[] = [undefined, undefined];
  let ca = '';

  const start = async (i: number): Promise<void> => {
    running[i] = await serveProcess(
      ['--data-dir', dirs[i]!, '--listen', '127.0.0.1:0', '--db', database.url],
      { ...ADMIN, ...MASTER_KEY },
      track,
    );
  };
  const client = (i: number, token?: string): ApiClient =>
    new ApiClient(ca, `${running[i]!.url}/edge/management/v1`).withToken(token);

  before(async () => {
    if (skip) return;
    assertBuilt();
    database = await freshDatabase();
    dirs.push(tempDir(), tempDir());
    await start(0);
    await start(1);
    ca = readFileSync(join(dirs[0]!, 'pki', 'ca-bundle.pem'), 'utf8');
  });
  after(async () => {
    for (const r of running) if (r && r.child.exitCode === null) r.child.kill('SIGKILL');
    await database?.drop();
  });

  test('a replica killed with SIGKILL mid-load loses no acknowledged write, three times over', async () => {
    const login = await new ApiClient(ca, `${running[0]!.url}/edge/management/v1`).login(
      ADMIN.EDGECTL_ADMIN_USERNAME,
      ADMIN.EDGECTL_ADMIN_PASSWORD,
    );
    assert.equal(login.status, 200, login.text);
    const token = login.body.data.token as string;
    const acknowledged: string[] = [];
    let failures = 0;
    let stop = false;
    /** Clients spreading writes and reads over whichever replicas run; a refused connection moves on. */
    const worker = async (w: number): Promise<void> => {
      for (let n = 0; !stop; n++) {
        // A process killed by a signal keeps `exitCode` null: `signalCode` says it is gone.
        const alive = [0, 1].filter(
          (i) => running[i] && running[i]!.child.exitCode === null && running[i]!.child.signalCode === null,
        );
        const i = alive[n % alive.length]!;
        const name = `fo-${w}-${n}`;
        try {
          const res = await client(i, token).post('/identities', { name, type: 'Device', isAdmin: false });
          if (res.status === 201) acknowledged.push(name);
          const list = await client(i, token).get('/identities?limit=1');
          if (list.status !== 200) failures++;
        } catch {
          failures++; // the connection to a killed replica
        }
      }
    };
    const load = Promise.all([0, 1, 2, 3].map(worker));
    try {
      for (let cycle = 0; cycle < 3; cycle++) {
        const victim = cycle % 2;
        await new Promise((r) => setTimeout(r, 700));
        const before = acknowledged.length;
        running[victim]!.child.kill('SIGKILL');
        await running[victim]!.exit;
        // The survivor answers the same API session: a write is acknowledged within 5 s (on a loaded machine
        // a fixed wait of under a second saw none).
        const deadline = Date.now() + 5000;
        while (acknowledged.length <= before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        assert.ok(acknowledged.length > before, 'the survivor keeps serving the same API session');
        await start(victim);
      }
    } finally {
      // Whatever happened, the workers stop (a failed assertion left them looping and the file never ended).
      stop = true;
      await load;
    }
    assert.ok(acknowledged.length > 20, `writes were acknowledged (${acknowledged.length}, ${failures} refused)`);
    // Every acknowledged identity is there, read through either replica.
    const seen = new Set<string>();
    for (let offset = 0; ; offset += 500) {
      const page = await client(offset % 2, token).get(`/identities?limit=500&offset=${offset}`);
      assert.equal(page.status, 200, page.text);
      for (const r of page.body.data as { name: string }[]) seen.add(r.name);
      if (page.body.data.length < 500) break;
    }
    const lost = acknowledged.filter((n) => !seen.has(n));
    assert.deepEqual(lost, [], 'no acknowledged write is lost');
  });

  test('connections ended by the database are replaced within 5 s, with no stale answer after', async () => {
    const admins = await Promise.all(
      [0, 1].map(async (i) => {
        const c = new ApiClient(ca, `${running[i]!.url}/edge/management/v1`);
        assert.equal((await c.login(ADMIN.EDGECTL_ADMIN_USERNAME, ADMIN.EDGECTL_ADMIN_PASSWORD)).status, 200);
        return c;
      }),
    );
    // Warm both replicas' caches with a listing.
    const search = `/identities?filter=${encodeURIComponent('name contains "after-restart"')}`;
    for (const a of admins) assert.equal((await a.get(search)).body.data.length, 0);
    const server = new pg.Client({ connectionString: PG_SERVER });
    await server.connect();
    const name = new URL(database.url).pathname.slice(1);
    try {
      await server.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
        [name],
      );
    } finally {
      await server.end();
    }
    const ended = Date.now();
    const pids = running.map((r) => r!.child.pid);
    for (const a of admins) {
      for (;;) {
        const res = await a.get('/identities?limit=1').catch(() => undefined);
        if (res?.status === 200) break;
        assert.ok(Date.now() - ended < 5000, 'the replica answers again within 5 s');
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    // A connection that dies while lent out must not throw in the process (src/store/pg/open.ts).
    assert.deepEqual(
      running.map((r) =>
        r!.child.exitCode === null && r!.child.signalCode === null ? r!.child.pid : `exited ${r!.child.exitCode}`,
      ),
      pids,
      'both replicas are the processes they were',
    );
    assert.equal(
      (await admins[0]!.post('/identities', { name: 'after-restart', type: 'User', isAdmin: false })).status,
      201,
    );
    for (const a of admins)
      assert.deepEqual(
        ((await a.get(search)).body.data as { name: string }[]).map((r) => r.name),
        ['after-restart'],
      );
  });
});
