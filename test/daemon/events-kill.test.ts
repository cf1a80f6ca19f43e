/**
 * `kill -9` of `edgectl serve` during a burst of writes loses no event of an acknowledged change, on SQLite and
 * PostgreSQL: after a restart every identity whose create was answered 201 has its `created` event in the
 * listing, and the file sink, resuming from its cursor, gets each of them (at least once: a batch written just
 * before the kill may come again, never one missing).
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiClient } from '../harness/server.js';
import { freshDatabase, postgresSkip } from '../harness/pg.js';
import { scratch } from '../harness/processes.js';
import { serveProcess, type Served } from '../harness/serve-process.js';
import { assertBuilt } from '../harness/cli.js';

const { tempDir, track } = scratch('edgectl-events-kill-');
const ADMIN = { EDGECTL_ADMIN_USERNAME: 'admin', EDGECTL_ADMIN_PASSWORD: 'admin-Passw0rd!' };
const MASTER_KEY = { EDGECTL_MASTER_KEY: 'events-kill-master-key-0123456789-abcdef' };
const pgSkip = await postgresSkip();

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
      let admin = new ApiClient(ca, `${served.url}/edge/management/v1`);
      assert.equal((await admin.login(ADMIN.EDGECTL_ADMIN_USERNAME, ADMIN.EDGECTL_ADMIN_PASSWORD)).status, 200);

      // The burst: creates in flight, eight at a time, until the process is killed under them.
      const acknowledged: string[] = [];
      const refused: string[] = [];
      let n = 0;
      let killed = false;
      const worker = async () => {
        while (!killed && refused.length === 0) {
          const name = `burst-${n++}`;
          const res = await admin.post('/identities', { name, type: 'User', isAdmin: false }).catch(() => undefined);
          if (res?.status === 201) acknowledged.push(res.body.data.id as string);
          else if (res && !killed) refused.push(`${res.status} ${res.text}`);
        }
      };
      const workers = Array.from({ length: 8 }, worker);
      const deadline = Date.now() + 60_000;
      while (acknowledged.length < 40 && refused.length === 0 && Date.now() < deadline) await sleep(20);
      assert.deepEqual(refused, [], 'the burst’s creates are accepted');
      served.child.kill('SIGKILL');
      killed = true;
      await served.exit;
      await Promise.all(workers);
      const acked = [...acknowledged];
      assert.ok(acked.length >= 40);

      served = await serveProcess(args, env, track);
      admin = new ApiClient(ca, `${served.url}/edge/management/v1`);
      assert.equal((await admin.login(ADMIN.EDGECTL_ADMIN_USERNAME, ADMIN.EDGECTL_ADMIN_PASSWORD)).status, 200);
      const created = new Set<string>();
      for (let offset = 0; ; offset += 500) {
        const res = await admin.get(
          `/events?limit=500&offset=${offset}&filter=${encodeURIComponent('entityType = "identities" and eventType = "created"')}`,
        );
        assert.equal(res.status, 200, res.text);
        for (const e of res.body.data as { entityId: string }[]) created.add(e.entityId);
        if (offset + 500 >= res.body.meta.pagination.totalCount) break;
      }
      const missing = acked.filter((id) => !created.has(id));
      assert.deepEqual(missing, [], 'every acknowledged create has its event');

      // The file sink resumes from its cursor: every acknowledged create reaches it.
      const end = Date.now() + 30_000;
      for (;;) {
        const text = existsSync(sinkFile) ? readFileSync(sinkFile, 'utf8') : '';
        const inFile = new Set<string | undefined>();
        for (const line of text.split('\n')) {
          // A line cut short by the kill stays a line of its own (its batch was written again whole).
          try {
            inFile.add((JSON.parse(line) as { entityId?: string }).entityId);
          } catch {
            continue;
          }
        }
        const notYet = acked.filter((id) => !inFile.has(id));
        if (notYet.length === 0) break;
        if (Date.now() > end) assert.fail(`${notYet.length} acknowledged creates never reached the file sink`);
        await sleep(200);
      }
      served.child.kill('SIGTERM');
      await served.exit;
    });
  });
}
