/**
 * Events with several controllers on one PostgreSQL database: both record into the one outbox, and the file
 * and webhook sinks they are both given are written by the controller running the periodic work only, so each
 * event is in them once and in order; when that controller stops, the other takes over from the same cursors.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshDatabase, postgresSkip } from '../harness/pg.js';
import { createIdentity, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { startReceiver, type Receiver } from '../harness/https-receiver.js';
import { jsonLines } from '../harness/events.js';

const skip = await postgresSkip();

describe('events across replicas', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'edgectl-event-replicas-'));
  const file = join(dir, 'events.jsonl');
  const secret = 'replica-webhook-secret-0123';
  let receiver: Receiver;
  let yaml = '';
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let replicas: TestServer[] = [];
  let admins: ApiClient[] = [];

  before(async () => {
    receiver = await startReceiver(secret);
    writeFileSync(join(dir, 'ca.pem'), receiver.caPem);
    yaml =
      `events:\n  sinks:\n    - type: file\n      path: ${file}\n` +
      `    - type: webhook\n      url: https://127.0.0.1:${receiver.port}/in\n      secret: ${secret}\n      caFile: ${join(dir, 'ca.pem')}\n`;
    database = await freshDatabase();
    const first = await startTestServer({ db: database.url, yaml, backgroundSweep: false });
    const second = await startTestServer({ db: database.url, yaml, backgroundSweep: false });
    replicas = [first, second];
    admins = await Promise.all(replicas.map((r) => r.admin()));
  });
  after(async () => {
    for (const r of replicas) await r.close();
    await receiver?.close();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const delivered = () => jsonLines<{ id: string }>(file).map((e) => e.id);

  async function listed(admin: ApiClient): Promise<string[]> {
    const res = await admin.get('/events?limit=500&sort=timestamp%20asc');
    assert.equal(res.status, 200, res.text);
    return (res.body.data as { id: string }[]).map((e) => e.id);
  }

  test('each event is delivered once, in order, by one controller; the other takes over when it stops', async () => {
    for (let round = 0; round < 3; round++) {
      await Promise.all(admins.map((a) => createIdentity(a)));
      const ran = await Promise.all(replicas.map((r) => r.sweep()));
      assert.equal(ran.filter(Boolean).length, 1, 'one controller runs the periodic work');
    }
    assert.deepEqual(delivered(), await listed(admins[1]!));
    const lead = (await replicas[0]!.sweep()) ? 0 : 1;
    await replicas[lead]!.close();
    const other = 1 - lead;
    await createIdentity(admins[other]!);
    assert.equal(await replicas[other]!.sweep(), true, 'the other controller claims the work');
    const ids = delivered();
    assert.equal(new Set(ids).size, ids.length, 'no event twice');
    assert.deepEqual(ids, await listed(admins[other]!));
    const posted = receiver.accepted.flatMap((b) => (JSON.parse(b.body) as { id: string }[]).map((e) => e.id));
    assert.deepEqual(posted, ids, 'the webhook got each event once, in order, from one controller at a time');
  });
});
