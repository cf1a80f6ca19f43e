/**
 * `edgectl events list`: the recorded events online and on a stopped controller's store (`--data-dir`), where
 * changes made offline are recorded too, naming the offline CLI as their source; `--since` bounds the time.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN, startTestServer, type TestServer } from '../harness/server.js';
import { edgectl, edgectlSlow, type Run } from '../harness/cli.js';
import { scratch } from '../harness/processes.js';

const tmp = scratch('edgectl-events-');

describe('edgectl events list', () => {
  let server: TestServer;
  let online: (...args: string[]) => Promise<Run>;
  let offline: (...args: string[]) => Promise<Run>;

  before(async () => {
    server = await startTestServer();
    const cfg = join(tmp.tempDir(), 'config');
    online = (...args) => edgectl(cfg, ...args);
    offline = (...args) => edgectlSlow(cfg, ...args, '--data-dir', server.dataDir);
    const login = await online('login', server.url, '-u', ADMIN.username, '-p', ADMIN.password, '-y');
    assert.equal(login.code, 0, login.stderr);
  });
  after(() => server?.close());

  it('lists the events of changes made online, filtered and as a table', async () => {
    const created = await online('service', 'create', 'audited-online', '-o', 'json');
    assert.equal(created.code, 0, created.stderr);
    const id = JSON.parse(created.stdout).data.id as string;
    const listed = await online('events', 'list', `entityId = "${id}"`, '--since', '10m', '-o', 'json');
    assert.equal(listed.code, 0, listed.stderr);
    const events = JSON.parse(listed.stdout).data as { eventType: string; metadata: { source: { type: string } } }[];
    assert.deepEqual(
      events.map((e) => [e.eventType, e.metadata.source.type]),
      [['created', 'rest']],
    );
    const table = await online('events', 'list', `entityId = "${id}"`);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /entityChange\.created/);
    assert.match(table.stdout, new RegExp(`services/${id}`));
    assert.match(table.stdout, /results: 1-1 of 1/);
    const future = await online(
      'events',
      'list',
      `entityId = "${id}"`,
      '--since',
      '2999-01-01T00:00:00Z',
      '-o',
      'json',
    );
    assert.deepEqual(JSON.parse(future.stdout).data, []);
    const bad = await online('events', 'list', '--since', 'yesterday');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--since/);
  });

  it('tail follows events recorded after it started: one JSON object a line, or a table row each', async () => {
    // Changes are made until the tail has printed what it waits for: it starts from the moment it connects.
    const follow = async (...args: string[]) => {
      let done = false;
      const ids: string[] = [];
      const tail = online('events', 'tail', ...args).finally(() => (done = true));
      for (let n = 0; !done && n < 100; n++) {
        await new Promise((r) => setTimeout(r, 200));
        if (done) break;
        const made = await online(
          'service',
          'create',
          `tailed-${args.join('')}-${n}`.replace(/[^\w-]/g, ''),
          '-o',
          'json',
        );
        ids.push(JSON.parse(made.stdout).data.id as string);
      }
      return { run: await tail, ids };
    };
    const json = await follow('--type', 'entityChange.created', '--count', '2', '-o', 'json');
    assert.equal(json.run.code, 0, json.run.stderr);
    const lines = json.run.stdout.trim().split('\n');
    assert.equal(lines.length, 2, json.run.stdout);
    const events = lines.map((l) => JSON.parse(l) as { namespace: string; eventType: string; entityId: string });
    for (const e of events) {
      assert.equal(e.namespace, 'entityChange');
      assert.equal(e.eventType, 'created');
      assert.ok(json.ids.includes(e.entityId), 'a service created after it started');
    }
    const table = await follow('--type', 'entityChange', '--count', '1');
    assert.equal(table.run.code, 0, table.run.stderr);
    const [header, row, ...rest] = table.run.stdout.trim().split('\n');
    assert.match(header!, /^TIME +EVENT +ACTOR/);
    assert.match(row!, /entityChange\.created/);
    assert.match(row!, /services\//);
    assert.deepEqual(rest, []);
    const bad = await online('events', 'tail', '--type', 'nonsense', '--count', '1');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /COULD_NOT_VALIDATE.*type/);
  });

  it('records and lists changes made offline on a stopped controller, naming the offline CLI', async () => {
    await server.daemon.close();
    const created = await offline('service', 'create', 'audited-offline', '-o', 'json');
    assert.equal(created.code, 0, created.stderr);
    const id = JSON.parse(created.stdout).data.id as string;
    const listed = await offline('events', 'list', `entityId = "${id}"`, '-o', 'json');
    assert.equal(listed.code, 0, listed.stderr);
    const [event] = JSON.parse(listed.stdout).data as {
      eventType: string;
      metadata: { author: { name: string }; source: { type: string; osUser: string } };
    }[];
    assert.equal(event?.eventType, 'created');
    assert.equal(event.metadata.source.type, 'offline');
    assert.equal(typeof event.metadata.source.osUser, 'string');
    assert.equal(event.metadata.author.name, 'Default Admin');
    // The online change is still there, in the same store.
    const all = await offline('events', 'list', 'entityType = "services"', '-o', 'json');
    assert.ok((JSON.parse(all.stdout).data as { entityId: string }[]).length >= 2);
  });
});
