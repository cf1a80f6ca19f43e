/**
 * The one-file binary (README.md, "The one-file binary"): copied alone into an empty directory
 * and run with no `node` on PATH and no `node_modules` anywhere above it, it serves over TLS on a real SQLite file,
 * and its admin CLI logs in, creates and lists, and checks the stopped store. Then the operator's offline round
 * trip, through the binary alone: stop the controller, check, snapshot, change and
 * restore its store offline, start it again and find the same network.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, readdirSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { builtBinary } from '../harness/binary.js';
import { scratch } from '../harness/processes.js';
import { migrationNames } from '../../src/store/migrations/index.js';
import { listening, type Served } from '../harness/serve-process.js';

const { tempDir, track } = scratch('edgectl-binary-');
const ADMIN = { username: 'admin', password: 'bin-Passw0rd-1' };

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** PATH without any directory that holds a `node`. */
function pathWithoutNode(): string {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter((d) => d !== '' && !existsSync(join(d, 'node')))
    .join(delimiter);
}

/** An empty temp dir holding only a copy of the binary, and how to run it there as a user's shell would. */
interface BinaryHome {
  home: string;
  exe: string;
  env: NodeJS.ProcessEnv;
  run(...args: string[]): Promise<Run>;
}

async function binaryHome(): Promise<BinaryHome> {
  const built = await builtBinary();
  const home = tempDir();
  const exe = join(home, 'edgectl');
  copyFileSync(built, exe);
  // Only what a user's shell would pass: no NODE_OPTIONS or tsx loader of the test process.
  const env: NodeJS.ProcessEnv = {
    PATH: pathWithoutNode(),
    HOME: home,
    XDG_CACHE_HOME: join(home, 'cache'),
    EDGECTL_CONFIG_DIR: join(home, 'config'),
    NO_COLOR: '1',
  };
  const run = (...args: string[]): Promise<Run> =>
    new Promise((resolve) => {
      // Offline commands build the whole app in-process: seconds each, more on a loaded machine.
      execFile(exe, args, { cwd: home, env, timeout: 60_000 }, (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      });
    });
  return { home, exe, env, run };
}

/** `edgectl login` as the default admin, trusting the data dir's CA bundle; checks it worked. */
async function loginAdmin(h: BinaryHome, url: string, data: string): Promise<void> {
  const login = await h.run(
    'login',
    url,
    '-u',
    ADMIN.username,
    '-p',
    ADMIN.password,
    '--ca',
    join(data, 'pki', 'ca-bundle.pem'),
  );
  assert.equal(login.code, 0, login.stderr);
  assert.match(login.stdout, new RegExp(`^logged in to ${url} as ${ADMIN.username} `));
}

/** `edgectl serve` on `data` (an ephemeral port, the given admin), resolved once it says where it listens. */
async function serve(h: BinaryHome, data: string): Promise<Served> {
  const child = track(
    spawn(h.exe, ['serve', '--data-dir', data, '--listen', '127.0.0.1:0'], {
      cwd: h.home,
      env: {
        ...h.env,
        EDGECTL_LOG_LEVEL: 'info',
        EDGECTL_ADMIN_USERNAME: ADMIN.username,
        EDGECTL_ADMIN_PASSWORD: ADMIN.password,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  return listening(child, 30_000);
}

/** No `node_modules` in `dir` or any directory above it. */
function noNodeModulesAbove(dir: string): boolean {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, 'node_modules'))) return false;
    if (dirname(d) === d) return true;
  }
}

describe('the one-file binary', () => {
  let home: string;
  let exe: string;
  let env: NodeJS.ProcessEnv;
  let run: BinaryHome['run'];

  before(async () => {
    ({ home, exe, env, run } = await binaryHome());
  });

  test('the directory holds the executable alone, with no node on PATH and no node_modules above it', () => {
    assert.deepEqual(readdirSync(home), ['edgectl']);
    assert.ok(statSync(exe).mode & 0o100, 'executable');
    assert.ok(noNodeModulesAbove(home), `no node_modules above ${home}`);
    assert.ok(
      env.PATH!.split(delimiter).every((d) => !existsSync(join(d, 'node'))),
      'no node on the PATH the binary is given',
    );
  });

  test('version says it is the one-file binary and starts without warnings', async () => {
    const r = await run('version');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^edgectl CLI: v\d+\.\d+\.\d+ \(one-file binary, Node v\d+\.\d+\.\d+\)$/m);
    assert.equal(r.stderr, '', 'no experimental-SEA or require() warning');
  });

  test('serve, login, identity create and list, SIGTERM, then db check-integrity on the stopped store', async () => {
    const data = join(home, 'data');
    const { child, url, output, exit } = await serve({ home, exe, env, run }, data);
    assert.match(url, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(statSync(join(data, 'edgectl.db')).size > 0, 'a real SQLite file');
    assert.doesNotMatch(output(), /Warning/, 'no runtime warning (every module is in the bundle)');

    // The addons were extracted once, content-addressed, into a private cache directory.
    const cache = join(home, 'cache', 'edgectl', 'native');
    const entries = readdirSync(cache);
    assert.equal(entries.length, 2, `SQLite and Argon2 addons: ${entries.join(', ')}`);
    for (const e of entries) {
      assert.match(e, /^[0-9a-f]{64}$/);
      assert.equal(statSync(join(cache, e)).mode & 0o777, 0o700);
      assert.ok(readdirSync(join(cache, e)).every((f) => f.endsWith('.node')));
    }

    const ca = join(data, 'pki', 'ca-bundle.pem');
    const login = await run('login', url, '-u', ADMIN.username, '-p', ADMIN.password, '--ca', ca);
    assert.equal(login.code, 0, login.stderr);
    assert.match(login.stdout, /logged in to/);

    const created = await run('identity', 'create', 'bin-alice', '--role-attributes', 'bin', '-o', 'id');
    assert.equal(created.code, 0, created.stderr);
    const id = created.stdout.trim();
    assert.match(id, /^\S+$/);

    const list = await run('identity', 'list', '-o', 'json');
    assert.equal(list.code, 0, list.stderr);
    const names = (JSON.parse(list.stdout).data as { id: string; name: string }[]).map((i) => [i.id, i.name]);
    assert.deepEqual(
      names.find(([, n]) => n === 'bin-alice'),
      [id, 'bin-alice'],
    );

    const refused = await run('identity', 'create', 'bin-alice');
    assert.equal(refused.code, 1, 'a duplicate name is the API error, exit 1');

    child.kill('SIGTERM');
    assert.equal(await exit, 0, output());
    assert.match(output(), /edgectl controller stopped/);

    const check = await run('db', 'check-integrity', '--data-dir', data);
    assert.equal(check.code, 0, check.stderr);
    assert.match(check.stdout, /^ok: /);

    // Two first starts at once on an empty cache both load the addon, and leave one whole copy behind. Each
    // works on its own copy of the store: an offline command holds its data dir's lock while it runs.
    const cache2 = join(home, 'cache2');
    const copies = [data, join(home, 'data-copy')];
    cpSync(data, copies[1]!, { recursive: true });
    const both = await Promise.all(
      copies.map(
        (dir) =>
          new Promise<Run>((resolve) => {
            execFile(
              exe,
              ['db', 'check-integrity', '--data-dir', dir],
              { cwd: home, env: { ...env, XDG_CACHE_HOME: cache2 }, timeout: 30_000 },
              (err, stdout, stderr) => resolve({ code: err ? 1 : 0, stdout, stderr }),
            );
          }),
      ),
    );
    both.forEach((r) => assert.equal(r.code, 0, r.stderr));
    const [sqlite] = readdirSync(join(cache2, 'edgectl', 'native'));
    assert.deepEqual(readdirSync(join(cache2, 'edgectl', 'native', sqlite!)), ['better_sqlite3.node']);
  });
});

describe("the operator's offline round trip, through the binary alone", () => {
  let h: BinaryHome;
  let data: string;
  let store: string;
  let snap: string;
  let bob: string;
  let svc: string;
  let carol: string;

  /** `[id, name]` of each listed entity, by name (the list's own order is not the point here). */
  const names = (stdout: string): [string, string][] =>
    (JSON.parse(stdout).data as { id: string; name: string }[])
      .map((r): [string, string] => [r.id, r.name])
      .sort((a, b) => a[1].localeCompare(b[1]));
  // Read by the test process, not the binary: only to look inside the replaced store, which no command opens.
  const identityNames = (file: string): string[] => {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      return (db.prepare('SELECT name FROM identities ORDER BY name').all() as { name: string }[]).map((r) => r.name);
    } finally {
      db.close();
    }
  };

  before(async () => {
    h = await binaryHome();
    assert.deepEqual(readdirSync(h.home), ['edgectl'], 'an empty directory but for the executable');
    data = join(h.home, 'data');
    store = join(data, 'edgectl.db');
    snap = join(h.home, 'before-change.db');
  });

  test('a running controller: login, an identity and a service; offline commands are refused naming it', async () => {
    const s = await serve(h, data);
    await loginAdmin(h, s.url, data);

    const i = await h.run('identity', 'create', 'ops-bob', '--role-attributes', 'ops', '-o', 'id');
    assert.equal(i.code, 0, i.stderr);
    bob = i.stdout.trim();
    const v = await h.run('service', 'create', 'ops-svc', '--role-attributes', 'ops', '-o', 'id');
    assert.equal(v.code, 0, v.stderr);
    svc = v.stdout.trim();
    assert.match(bob, /^\S+$/);
    assert.match(svc, /^\S+$/);

    // The lock is checked before anything is opened: nothing is written, and the controller keeps serving.
    const holder = `the data dir ${data} is in use by process ${s.child.pid} on ${hostname()}`;
    for (const args of [
      ['identity', 'create', 'too-early', '--data-dir', data],
      ['db', 'snapshot', '--data-dir', data, '--out', snap],
    ]) {
      const r = await h.run(...args);
      assert.equal(r.code, 1, args.join(' '));
      assert.equal(r.stdout, '', args.join(' '));
      assert.ok(r.stderr.startsWith(`error: ${holder}: `), r.stderr);
      assert.match(r.stderr, /stop it first/);
    }
    assert.equal(existsSync(snap), false);
    const online = await h.run('identity', 'list', '-o', 'json');
    assert.equal(online.code, 0, online.stderr);
    assert.deepEqual(
      names(online.stdout).map(([, n]) => n),
      ['Default Admin', 'ops-bob'],
    );

    s.child.kill('SIGTERM');
    assert.equal(await s.exit, 0, s.output());
    assert.match(s.output(), /edgectl controller stopped/);
    assert.equal(existsSync(join(data, 'edgectl.lock')), false, 'the stopped controller released the lock');
  });

  test('db check-integrity --data-dir: the stopped store is clean', async () => {
    const r = await h.run('db', 'check-integrity', '--data-dir', data);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(
      r.stdout,
      `ok: ${store} passed SQLite's integrity check and has every table and column its migrations create\n` +
        'ok: the data-integrity scan found nothing\n',
    );
    assert.match(
      r.stderr,
      new RegExp(
        `^data-integrity check started on ${data} \\(offline\\)\ndata-integrity check finished in \\d+\\.\\ds\n$`,
      ),
    );
  });

  test('db snapshot --data-dir --out writes a 0600 copy', async () => {
    const r = await h.run('db', 'snapshot', '--data-dir', data, '--out', snap);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `snapshot written to ${snap}\n`);
    assert.equal(r.stderr, '');
    assert.equal(statSync(snap).mode & 0o777, 0o600);
  });

  test('identity create --data-dir offline, and identity list --data-dir shows it', async () => {
    const c = await h.run('identity', 'create', 'offline-carol', '--data-dir', data);
    assert.equal(c.code, 0, c.stderr);
    carol = c.stdout.match(/^created identity (\S+)\n$/)?.[1] ?? '';
    assert.ok(carol, c.stdout);

    const l = await h.run('identity', 'list', '-o', 'json', '--data-dir', data);
    assert.equal(l.code, 0, l.stderr);
    assert.deepEqual(
      names(l.stdout).filter(([, n]) => n !== 'Default Admin'),
      [
        [carol, 'offline-carol'],
        [bob, 'ops-bob'],
      ],
    );
  });

  test('db restore puts the snapshot back and keeps the replaced store; db info describes the result', async () => {
    const r = await h.run('db', 'restore', snap, '--data-dir', data);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n');
    assert.equal(lines[0], `restored ${snap} into ${store} (schema ${migrationNames.at(-1)})`);
    const replaced = lines[1]?.match(/^the replaced store is kept as (\S+)$/)?.[1];
    assert.ok(replaced, r.stdout);
    assert.equal(dirname(replaced), data);
    assert.match(replaced, /\/edgectl\.db\.replaced-\d{8}-\d{6}$/);
    assert.equal(lines.length, 3, r.stdout);
    assert.equal(statSync(replaced).mode & 0o777, 0o600);
    assert.deepEqual(identityNames(replaced), ['Default Admin', 'offline-carol', 'ops-bob']);
    assert.deepEqual(identityNames(store), ['Default Admin', 'ops-bob']);

    const info = await h.run('db', 'info', '--data-dir', data);
    assert.equal(info.code, 0, info.stderr);
    assert.match(info.stdout, new RegExp(`^store +${store}$`, 'm'));
    assert.match(
      info.stdout,
      new RegExp(`^schema +${migrationNames.at(-1)} \\(${migrationNames.length} migrations\\)$`, 'm'),
    );
    assert.match(info.stdout, /^identities +2$/m);
    assert.match(info.stdout, /^services +1$/m);
    assert.match(info.stdout, new RegExp(`^size +${statSync(store).size} bytes$`, 'm'));
  });

  test('serve again on the same data dir: the network from before, without the offline identity', async () => {
    const s = await serve(h, data);
    // The saved login names the old port: log in again.
    await loginAdmin(h, s.url, data);

    const ids = await h.run('identity', 'list', '-o', 'json');
    assert.equal(ids.code, 0, ids.stderr);
    assert.deepEqual(
      names(ids.stdout).filter(([, n]) => n !== 'Default Admin'),
      [[bob, 'ops-bob']],
    );
    const show = await h.run('identity', 'show', 'offline-carol');
    assert.equal(show.code, 1);
    assert.match(show.stderr, /NOT_FOUND/);

    const svcs = await h.run('service', 'list', '-o', 'json');
    assert.equal(svcs.code, 0, svcs.stderr);
    assert.deepEqual(names(svcs.stdout), [[svc, 'ops-svc']]);
    assert.deepEqual(JSON.parse(svcs.stdout).data[0].roleAttributes, ['ops']);

    s.child.kill('SIGTERM');
    assert.equal(await s.exit, 0, s.output());
  });
});
