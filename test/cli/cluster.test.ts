/**
 * `edgectl cluster`: the built program starts three controllers over one PostgreSQL database on consecutive
 * ports, says where they listen, and they serve one network (an API session made on the first works on the
 * last) through the PKI and token key the database holds under the cluster's master key (a new random one in
 * `<dir>/master.key`, mode 0600); SIGTERM stops them all.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ApiClient } from '../harness/server.js';
import { assertBuilt, BIN } from '../harness/cli.js';
import { freshDatabase, postgresSkip } from '../harness/pg.js';
import { scratch } from '../harness/processes.js';

const skip = await postgresSkip();
const { tempDir } = scratch('edgectl-cluster-');
let cluster: ChildProcess | undefined;
let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;

after(async () => {
  // Its own process group: the replicas go with it even if the test failed halfway.
  if (cluster?.pid && cluster.exitCode === null) process.kill(-cluster.pid, 'SIGKILL');
  await database?.drop();
});

test('three replicas on consecutive ports serve one network and stop together', { skip }, async () => {
  assertBuilt();
  database = await freshDatabase();
  const dir = tempDir();
  // Below Linux's ephemeral range (32768 and up), where the other tests' servers (port 0) and outgoing
  // connections take theirs: three consecutive ports there can be taken midway.
  const port = 20000 + Math.floor(Math.random() * 12000);
  cluster = spawn(process.execPath, [BIN, 'cluster', '--replicas', '3', '--dir', dir, '--port', String(port)], {
    env: {
      ...process.env,
      EDGECTL_DB_URL: database.url,
      EDGECTL_MASTER_KEY: '',
      EDGECTL_ADMIN_USERNAME: '',
      EDGECTL_ADMIN_PASSWORD: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  cluster.stdout!.on('data', (c) => (out += c));
  cluster.stderr!.on('data', (c) => (out += c));
  const exit = new Promise<number | null>((resolve) => cluster!.on('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready:\n${out}`)), 120_000);
    cluster!.stdout!.on('data', () => {
      if (out.includes('master key: ')) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exit.then(() => reject(new Error(`cluster exited:\n${out}`)));
  });
  const urls = [...out.matchAll(/replica-(\d)\s+(https:\/\/\S+)/g)].map((m) => m[2]!);
  assert.deepEqual(
    urls,
    [0, 1, 2].map((i) => `https://127.0.0.1:${port + i}`),
  );
  const ca = readFileSync(join(dir, 'replica-1', 'pki', 'ca-bundle.pem'), 'utf8');
  const keyFile = join(dir, 'master.key');
  assert.match(out, new RegExp(`master key: ${keyFile}`));
  assert.equal(statSync(keyFile).mode & 0o777, 0o600);
  assert.ok(!out.includes(readFileSync(keyFile, 'utf8').trim()), 'the key itself is never printed');
  for (const replica of ['replica-2', 'replica-3']) {
    assert.equal(existsSync(join(dir, replica, 'token.key')), false, `${replica} copied nothing`);
    assert.equal(readFileSync(join(dir, replica, 'pki', 'ca-bundle.pem'), 'utf8'), ca);
  }
  const creds = JSON.parse(readFileSync(join(dir, 'replica-1', 'default-admin.json'), 'utf8'));
  const first = new ApiClient(ca, `${urls[0]}/edge/management/v1`);
  assert.equal((await first.login(creds.username, creds.password)).status, 200);
  const last = new ApiClient(ca, `${urls[2]}/edge/management/v1`).withToken(first.token);
  const me = await last.get('/current-identity');
  assert.equal(me.status, 200, me.text);
  assert.equal(me.body.data.isDefaultAdmin, true);
  cluster.kill('SIGTERM');
  assert.equal(await exit, 0, out);
});
