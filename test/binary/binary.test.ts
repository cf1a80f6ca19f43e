/**
 * The one-file binary (issue #10 item 4; README.md, "The one-file binary"): copied alone into an empty directory
 * and run with no `node` on PATH and no `node_modules` anywhere above it, it serves over TLS on a real SQLite file,
 * and its admin CLI logs in, creates and lists, and checks the stopped store.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, readdirSync, statSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { builtBinary } from '../harness/binary.js';
import { scratch } from '../harness/processes.js';

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
  let server: ChildProcess | undefined;

  const run = (...args: string[]): Promise<Run> =>
    new Promise((resolve) => {
      execFile(exe, args, { cwd: home, env, timeout: 30_000 }, (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      });
    });

  before(async () => {
    const built = await builtBinary();
    home = tempDir();
    exe = join(home, 'edgectl');
    copyFileSync(built, exe);
    // Only what a user's shell would pass: no NODE_OPTIONS or tsx loader of the test process.
    env = {
      PATH: pathWithoutNode(),
      HOME: home,
      XDG_CACHE_HOME: join(home, 'cache'),
      EDGECTL_CONFIG_DIR: join(home, 'config'),
      NO_COLOR: '1',
    };
  });

  after(() => {
    if (server && server.exitCode === null) server.kill('SIGKILL');
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
    const child = track(
      spawn(exe, ['serve', '--data-dir', data, '--listen', '127.0.0.1:0'], {
        cwd: home,
        env: {
          ...env,
          EDGECTL_LOG_LEVEL: 'info',
          EDGECTL_ADMIN_USERNAME: ADMIN.username,
          EDGECTL_ADMIN_PASSWORD: ADMIN.password,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    server = child;
    let out = '';
    child.stdout!.on('data', (c) => (out += c));
    child.stderr!.on('data', (c) => (out += c));
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out}`)), 30_000);
      const check = () => {
        const line = out.split('\n').find((l) => l.includes('"edgectl controller listening"'));
        if (line) {
          clearTimeout(timer);
          resolve(JSON.parse(line).url);
        }
      };
      child.stdout!.on('data', check);
      void exit.then(() => {
        clearTimeout(timer);
        reject(new Error(`serve exited early:\n${out}`));
      });
    });
    assert.match(url, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(statSync(join(data, 'edgectl.db')).size > 0, 'a real SQLite file');
    assert.doesNotMatch(out, /Warning/, 'no runtime warning (every module is in the bundle)');

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
    assert.equal(await exit, 0, out);
    assert.match(out, /edgectl controller stopped/);

    const check = await run('db', 'check-integrity', '--data-dir', data);
    assert.equal(check.code, 0, check.stderr);
    assert.match(check.stdout, /^ok: /);

    // Two first starts at once on an empty cache both load the addon, and leave one whole copy behind (each on
    // its own copy of the store: an offline scan holds its data dir's lock).
    const cache2 = join(home, 'cache2');
    cpSync(data, `${data}-2`, { recursive: true });
    const both = await Promise.all(
      [data, `${data}-2`].map(
        (dir) =>
          new Promise<Run>((resolve) => {
            execFile(
              exe,
              ['db', 'check-integrity', '--data-dir', dir],
              { cwd: home, env: { ...env, XDG_CACHE_HOME: cache2 }, timeout: 60_000 },
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
