/**
 * Admin commands with `--data-dir` on a stopped controller's store: the CLI runs the controller's own app in-process as
 * the default admin. The store comes from a real controller (started, used, stopped); while it runs, every offline
 * command is refused with the lock holder named.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN, ApiClient, startTestServer, type TestServer } from '../harness/server.js';
import { loadConfig } from '../../src/daemon/config.js';
import { startDaemon } from '../../src/daemon/daemon.js';
import { edgectl, edgectlSlow, type Run } from '../harness/cli.js';
import { scratch } from '../harness/processes.js';

const tmp = scratch('edgectl-offline-');

describe('edgectl --data-dir (offline)', () => {
  let server: TestServer;
  let dir: string;
  let cfg: string;
  let online: (...args: string[]) => Promise<Run>;
  let offline: (...args: string[]) => Promise<Run>;
  let badBody: string;
  let onlineRefusal: Run;

  before(async () => {
    server = await startTestServer();
    dir = server.dataDir;
    const t = tmp.tempDir();
    cfg = join(t, 'config');
    badBody = join(t, 'bad.json');
    // A body the route's schema refuses (isAdmin must be a boolean): validation, not a CLI check.
    writeFileSync(badBody, JSON.stringify({ name: 'bad', type: 'User', isAdmin: 'yes' }));
    online = (...args) => edgectl(cfg, ...args);
    offline = (...args) => edgectlSlow(cfg, ...args, '--data-dir', dir);
    const login = await online('login', server.url, '-u', ADMIN.username, '-p', ADMIN.password, '-y');
    assert.equal(login.code, 0, login.stderr);
    onlineRefusal = await online('identity', 'create', 'bad', '-f', badBody);
  });

  // Closing twice is harmless: this also removes the data dir.
  after(() => server?.close());

  it('refuses to work on a running controller, naming the process holding the lock', async () => {
    const r = await offline('identity', 'list');
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`in use by process ${process.pid} on ${hostname()}`));
    assert.match(r.stderr, /stop it first/);
    assert.equal(r.stdout, '');
    // Stopped (its data dir kept): the offline commands below work on it.
    await server.daemon.close();
  });

  it('creates, lists, shows and deletes an identity as the default admin', async () => {
    const created = await offline('identity', 'create', 'laptop', '--role-attributes', 'sales', '-o', 'json');
    assert.equal(created.code, 0, created.stderr);
    const id = JSON.parse(created.stdout).data.id as string;
    assert.ok(id);

    const list = await offline('identity', 'list', '-o', 'json');
    assert.equal(list.code, 0, list.stderr);
    const names = (JSON.parse(list.stdout).data as { name: string }[]).map((i) => i.name).sort();
    assert.deepEqual(names, ['Default Admin', 'laptop']);

    const show = await offline('identity', 'show', 'laptop', '-o', 'json');
    assert.equal(show.code, 0, show.stderr);
    assert.deepEqual(JSON.parse(show.stdout).data.roleAttributes, ['sales']);

    const del = await offline('identity', 'delete', 'laptop');
    assert.equal(del.code, 0, del.stderr);
    const gone = await offline('identity', 'show', id);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /NOT_FOUND/);
  });

  it('refuses a bad body with the same error line and exit code as the running controller', async () => {
    assert.equal(onlineRefusal.code, 1);
    assert.match(onlineRefusal.stderr, /^error: COULD_NOT_VALIDATE/);
    const r = await offline('identity', 'create', 'bad', '-f', badBody);
    assert.equal(r.code, onlineRefusal.code);
    assert.equal(r.stderr, onlineRefusal.stderr);
  });

  it('creates a policy, with the same role resolution as online', async () => {
    const svc = await offline('service', 'create', 'crm', '--role-attributes', 'sales');
    assert.equal(svc.code, 0, svc.stderr);
    const r = await offline(
      'service-policy',
      'create',
      'crm-dial',
      'Dial',
      '--identity-roles',
      '#sales',
      '--service-roles',
      '@crm',
      '-o',
      'json',
    );
    assert.equal(r.code, 0, r.stderr);
    const show = await offline('service-policy', 'show', 'crm-dial', '-o', 'json');
    assert.equal(show.code, 0, show.stderr);
    const data = JSON.parse(show.stdout).data;
    assert.equal(data.type, 'Dial');
    assert.deepEqual(data.identityRoles, ['#sales']);
    assert.equal(data.serviceRoles.length, 1);
    assert.match(data.serviceRoles[0], /^@/);
  });

  it('ends its own API session: only the online login remains', async () => {
    const r = await offline('api-session', 'list', '-o', 'json');
    assert.equal(r.code, 0, r.stderr);
    // This command's own session plus the online login's; every earlier offline session is gone.
    const sessions = JSON.parse(r.stdout).data as { ipAddress: string }[];
    assert.equal(sessions.length, 2, JSON.stringify(sessions));
    assert.equal(sessions.filter((s) => s.ipAddress === 'offline').length, 1);
  });

  it('refuses Client API commands: there is no identity to act as', async () => {
    const r = await offline('client', 'services');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Client API.*--data-dir has no identity/);
  });

  it('refuses a data dir without a store', async () => {
    const r = await edgectlSlow(cfg, 'identity', 'list', '--data-dir', tmp.tempDir());
    assert.equal(r.code, 1);
    assert.match(r.stderr, /no store in .* \(no edgectl\.db\)/);
  });

  it('is seen by the controller when it starts again on the same store', async () => {
    const daemon = await startDaemon(
      loadConfig({ flags: { dataDir: dir, listen: '127.0.0.1:0', logLevel: 'silent' }, env: {} }),
    );
    try {
      // The saved login names the old port: ask the restarted controller directly.
      const c = new ApiClient(daemon.pki.caBundlePem, `${daemon.url}/edge/management/v1`);
      await c.login(ADMIN.username, ADMIN.password);
      const res = await c.get('/service-policies');
      assert.equal(res.status, 200);
      assert.deepEqual(
        res.body.data.map((p: { name: string }) => p.name),
        ['crm-dial'],
      );
    } finally {
      await daemon.close();
    }
  });
});
