/**
 * No event of an acknowledged change is lost to a crash (issue #24), on SQLite and on PostgreSQL: `edgectl serve`,
 * with a file sink, is killed with SIGKILL during a burst of concurrent writes (identity creates through the
 * transaction batcher, new sessions through the grouped session insert), and started again:
 *
 * - every change that was answered has its `created` event in the listing, and every `created` event names a
 *   record that exists (no event of a change that did not commit);
 * - the file sink, resuming from its cursor, gets each of them (at least once: a batch written just before the
 *   kill may come again, never one missing);
 * - the controller's `started` and `stopped` events frame a clean run, and the killed run has no `stopped`.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiClient } from '../harness/server.js';
import { freshDatabase, postgresSkip } from '../harness/pg.js';
import { scratch } from '../harness/processes.js';
import { serveProcess, type Served } from '../harness/serve-process.js';
import { assertBuilt } from '../harness/cli.js';

const pgSkip = await postgresSkip();
const { tempDir, track } = scratch('edgectl-events-kill-');
const ADMIN = { EDGECTL_ADMIN_USERNAME: 'admin', EDGECTL_ADMIN_PASSWORD: 'admin-Passw0rd!' };
const MASTER_KEY = { EDGECTL_MASTER_KEY: 'events-kill-master-key-0123456789-abcdef' };
/** Identity creates acknowledged before the kill, at least. */
const MIN_IDENTITIES = 40;
const WORKERS = 16;

type Ev = Record<string, any>;

/** Every record of a management list (fixture: no assertions). */
async function all(admin: ApiClient, path: string): Promise<Ev[]> {
  const out: Ev[] = [];
  for (let offset = 0; ; offset += 500) {
    const sep = path.includes('?') ? '&' : '?';
    const res = await admin.get(`${path}${sep}limit=500&offset=${offset}`);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
    out.push(...res.body.data);
    if (out.length >= res.body.meta.pagination.totalCount) return out;
  }
}

/** The `entityId`s and `session_id`s of the file sink's complete lines (fixture: no assertions). */
function inFile(file: string): Set<string> {
  const ids = new Set<string>();
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  for (const line of text.split('\n')) {
    // A line cut short by the kill stays a line of its own (its batch was written again whole).
    try {
      const e = JSON.parse(line) as Ev;
      for (const id of [e.entityId, e.session_id]) if (typeof id === 'string') ids.add(id);
    } catch {
      continue;
    }
  }
  return ids;
}

for (const store of ['sqlite', 'postgres'] as const) {
  describe(`kill -9 during a write burst (${store})`, { skip: store === 'postgres' && pgSkip }, () => {
    let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;
    let served: Served | undefined;
    after(async () => {
      if (served && served.child.exitCode === null) served.child.kill('SIGKILL');
      await database?.drop();
    });

    test('every acknowledged change has its event after a restart, in the listing and the file sink', async () => {
      assertBuilt();
      const dir = tempDir();
      const sinkFile = join(dir, 'events.jsonl');
      const config = join(dir, 'config.yml');
      writeFileSync(config, `events:\n  sinks:\n    - type: file\n      path: ${sinkFile}\n`);
      const args = ['--data-dir', dir, '--listen', '127.0.0.1:0', '--config', config];
      if (store === 'postgres') {
        database = await freshDatabase();
        args.push('--db', database.url);
      }
      const env = { ...ADMIN, ...MASTER_KEY };
      served = await serveProcess(args, env, track);
      const ca = readFileSync(join(dir, 'pki', 'ca-bundle.pem'), 'utf8');
      const mgmt = (s: Served) => new ApiClient(ca, `${s.url}/edge/management/v1`);
      const login = async (s: Served) => {
        const c = mgmt(s);
        assert.equal((await c.login(ADMIN.EDGECTL_ADMIN_USERNAME, ADMIN.EDGECTL_ADMIN_PASSWORD)).status, 200);
        return c;
      };
      const admin = await login(served);

      // A client identity allowed to dial 40 services: 4 API sessions × 40 services × 2 types of new sessions.
      const tag = Math.random().toString(36).slice(2, 8);
      const identity = await admin.post('/identities', {
        name: `burst-${tag}`,
        type: 'User',
        isAdmin: false,
        roleAttributes: ['burst'],
      });
      assert.equal(identity.status, 201, identity.text);
      const auth = await admin.post('/authenticators', {
        identityId: identity.body.data.id,
        method: 'updb',
        username: `burst-${tag}`,
        password: 'burst-Passw0rd!',
      });
      assert.equal(auth.status, 201, auth.text);
      const policies: [string, Record<string, unknown>][] = [
        ['/edge-routers', { name: `er-${tag}`, roleAttributes: ['burst'] }],
        [
          '/service-policies',
          { name: `sp-${tag}`, type: 'Dial', semantic: 'AnyOf', identityRoles: ['#burst'], serviceRoles: ['#burst'] },
        ],
        [
          '/service-policies',
          { name: `bp-${tag}`, type: 'Bind', semantic: 'AnyOf', identityRoles: ['#burst'], serviceRoles: ['#burst'] },
        ],
        [
          '/edge-router-policies',
          { name: `erp-${tag}`, semantic: 'AnyOf', identityRoles: ['#burst'], edgeRouterRoles: ['#burst'] },
        ],
        [
          '/service-edge-router-policies',
          { name: `serp-${tag}`, semantic: 'AnyOf', serviceRoles: ['#burst'], edgeRouterRoles: ['#burst'] },
        ],
      ];
      for (const [path, body] of policies) assert.equal((await admin.post(path, body)).status, 201, path);
      const services: string[] = [];
      for (let i = 0; i < 40; i++) {
        const res = await admin.post('/services', {
          name: `svc-${tag}-${i}`,
          encryptionRequired: true,
          roleAttributes: ['burst'],
        });
        assert.equal(res.status, 201, res.text);
        services.push(res.body.data.id);
      }
      const clients: ApiClient[] = [];
      for (let i = 0; i < 4; i++) {
        const c: ApiClient = new ApiClient(ca, `${served.url}/edge/client/v1`);
        assert.equal((await c.login(`burst-${tag}`, 'burst-Passw0rd!')).status, 200);
        clients.push(c);
      }
      const pairs = clients.flatMap((c) =>
        services.flatMap((s) => (['Dial', 'Bind'] as const).map((t) => ({ c, s, t }))),
      );

      // The burst: half the workers create identities, half create new sessions, until the process is killed
      // under them (once enough of both were acknowledged).
      const identities: string[] = [];
      const sessions: string[] = [];
      const refused: string[] = [];
      let next = 0;
      let killed = false;
      const worker = async (w: number): Promise<void> => {
        for (let n = 0; !killed && refused.length === 0; n++) {
          try {
            if (w % 2 === 0) {
              const res = await admin.post('/identities', {
                name: `b-${tag}-${w}-${n}`,
                type: w % 4 === 0 ? 'User' : 'Device',
                isAdmin: false,
              });
              if (res.status === 201) identities.push(res.body.data.id);
              else if (!killed) refused.push(`${res.status} ${res.text}`);
            } else {
              const p = pairs[next++ % pairs.length]!;
              if (next > pairs.length) return;
              const res = await p.c.post('/sessions', { serviceId: p.s, type: p.t });
              if (res.status === 201) sessions.push(res.body.data.id);
            }
          } catch {
            return; // the controller is gone
          }
        }
      };
      const burst = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
      const deadline = Date.now() + 60_000;
      while (
        (identities.length < MIN_IDENTITIES || sessions.length === 0) &&
        refused.length === 0 &&
        Date.now() < deadline
      )
        await sleep(20);
      assert.deepEqual(refused, [], 'the burst’s creates are accepted');
      served.child.kill('SIGKILL');
      killed = true;
      await burst;
      await served.exit;
      const ackedIdentities = [...identities];
      const ackedSessions = [...sessions];
      assert.ok(
        ackedIdentities.length >= MIN_IDENTITIES && ackedSessions.length > 0,
        `writes were acknowledged (${ackedIdentities.length}, ${ackedSessions.length})`,
      );

      served = await serveProcess(args, env, track);
      const again = await login(served);
      const events = await all(again, `/events?filter=${encodeURIComponent('eventType = "created"')}`);
      const recorded = new Set(
        events.map((e) => `${e.namespace} ${e.entityType ?? 'sessions'} ${e.entityId ?? e.session_id}`),
      );
      const missing = [
        ...ackedIdentities.filter((id) => !recorded.has(`entityChange identities ${id}`)),
        ...ackedSessions.filter((id) => !recorded.has(`session sessions ${id}`)),
      ];
      assert.deepEqual(missing, [], 'every acknowledged create has its event');

      // And no event of a change that was not committed: each created record still exists (nothing was deleted).
      const existing = new Set([
        ...(await all(again, '/identities')).map((r) => r.id),
        ...(await all(again, '/sessions')).map((r) => r.id),
      ]);
      for (const e of events) {
        if (e.namespace === 'session' || e.entityType === 'identities')
          assert.ok(
            existing.has(e.entityId ?? e.session_id),
            `the ${e.namespace} event of ${e.entityId ?? e.session_id} names a record`,
          );
      }

      // The file sink resumes from its cursor: every acknowledged create reaches it.
      const end = Date.now() + 30_000;
      for (;;) {
        const got = inFile(sinkFile);
        const notYet = [...ackedIdentities, ...ackedSessions].filter((id) => !got.has(id));
        if (notYet.length === 0) break;
        if (Date.now() > end) assert.fail(`${notYet.length} acknowledged creates never reached the file sink`);
        await sleep(200);
      }

      // The crashed run left no `stopped`; a clean stop records one, after the restart's `started`.
      const controllerEvents = async (c: ApiClient) =>
        (await all(c, `/events?filter=${encodeURIComponent('namespace = "controller"')}&sort=timestamp%20asc`)).map(
          (e) => e.event_type,
        );
      assert.deepEqual(await controllerEvents(again), ['started', 'started']);
      served.child.kill('SIGTERM');
      assert.equal(await served.exit, 0);
      served = await serveProcess(args, env, track);
      assert.deepEqual(await controllerEvents(await login(served)), ['started', 'started', 'stopped', 'started']);
      served.child.kill('SIGTERM');
      assert.equal(await served.exit, 0);
    });
  });
}
