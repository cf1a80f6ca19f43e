/**
 * `edgectl serve` as an operator runs it: the built binary, a real data dir, signals and restarts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, statSync, writeFileSync, existsSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from '../harness/http.js';
import { scratch } from '../harness/processes.js';
import { edgectlProcess, edgectlSlow } from '../harness/cli.js';
import { serveProcess, type Served } from '../harness/serve-process.js';

const BIN = fileURLToPath(new URL('../../bin/edgectl', import.meta.url));
const { tempDir, track } = scratch('edgectl-serve-');

/** Starts the binary and waits for its "listening" log line (fixture: no assertions). */
const serve = (args: string[], env: Record<string, string> = {}): Promise<Served> => serveProcess(args, env, track);

describe('edgectl serve', () => {
  test('first start creates the PKI and a generated admin file; SIGTERM exits 0; restart reuses both', async () => {
    const dir = tempDir();
    const s = await serve(['--data-dir', dir, '--listen', '127.0.0.1:0'], {
      EDGECTL_ADMIN_USERNAME: '',
      EDGECTL_ADMIN_PASSWORD: '',
    });
    const adminFile = join(dir, 'default-admin.json');
    assert.ok(existsSync(adminFile), 'admin credentials file written');
    assert.equal(statSync(adminFile).mode & 0o777, 0o600);
    const creds = JSON.parse(readFileSync(adminFile, 'utf8'));
    assert.equal(creds.username, 'admin');
    assert.ok(creds.password.length >= 16);
    assert.ok(s.output().includes(adminFile), 'the log names the file');
    assert.ok(!s.output().includes(creds.password), 'the log never contains the password');
    assert.equal(statSync(join(dir, 'pki', 'root-ca.key.pem')).mode & 0o777, 0o600);

    const ca = readFileSync(join(dir, 'pki', 'ca-bundle.pem'), 'utf8');
    const login = await request(ca, 'POST', `${s.url}/edge/management/v1/authenticate?method=password`, {
      body: creds,
    });
    assert.equal(login.status, 200, 'the generated admin can log in over TLS trusting the CA bundle');
    assert.ok(!s.output().includes(login.body.data.token), 'session tokens are not logged');

    s.child.kill('SIGTERM');
    assert.equal(await s.exit, 0);

    const again = await serve(['--data-dir', dir, '--listen', '127.0.0.1:0']);
    assert.equal(readFileSync(join(dir, 'pki', 'ca-bundle.pem'), 'utf8'), ca, 'the CA is reused');
    const relogin = await request(ca, 'POST', `${again.url}/edge/management/v1/authenticate?method=password`, {
      body: creds,
    });
    assert.equal(relogin.status, 200, 'the admin survives a restart');
    again.child.kill('SIGINT');
    assert.equal(await again.exit, 0);
  });

  test('flags win over environment, which wins over the config file', async () => {
    const dir = tempDir();
    const cfg = join(dir, 'config.yml');
    writeFileSync(
      cfg,
      `dataDir: ${join(dir, 'from-file')}\nlog:\n  level: warn\nedge:\n  api:\n    sessionTimeout: 90s\n`,
    );
    const s = await serve(['--config', cfg, '--listen', '127.0.0.1:0', '--log-level', 'info'], {
      EDGECTL_DATA_DIR: join(dir, 'from-env'),
      EDGECTL_ADMIN_USERNAME: 'opsadmin',
      EDGECTL_ADMIN_PASSWORD: 'ops-Passw0rd',
    });
    assert.ok(existsSync(join(dir, 'from-env', 'edgectl.db')), 'env data dir beats the file');
    assert.ok(!existsSync(join(dir, 'from-file')), 'the file data dir is not used');
    assert.ok(s.output().includes('"level":30'), 'the --log-level flag beats the file');
    const ca = readFileSync(join(dir, 'from-env', 'pki', 'ca-bundle.pem'), 'utf8');
    const login = await request(ca, 'POST', `${s.url}/edge/client/v1/authenticate?method=password`, {
      body: { username: 'opsadmin', password: 'ops-Passw0rd' },
    });
    assert.equal(login.status, 200, 'admin from the environment');
    assert.equal(login.body.data.expirationSeconds, 90, 'session timeout from the file');
    s.child.kill('SIGTERM');
    assert.equal(await s.exit, 0);
  });

  test('a bad config is refused with a message and a non-zero exit', async () => {
    const dir = tempDir();
    const cfg = join(dir, 'bad.yml');
    writeFileSync(cfg, 'edge:\n  api:\n    sessionTimeout: soon\n');
    const child = spawn(process.execPath, [BIN, 'serve', '--config', cfg, '--data-dir', dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (c) => (err += c));
    const code = await new Promise((r) => child.on('exit', r));
    assert.notEqual(code, 0);
    assert.match(err, /invalid duration/);
  });

  test('a second controller on the same data dir is refused', async () => {
    const dir = tempDir();
    const s = await serve(['--data-dir', dir, '--listen', '127.0.0.1:0'], {
      EDGECTL_ADMIN_USERNAME: 'admin',
      EDGECTL_ADMIN_PASSWORD: 'admin-pass1',
    });
    const child = spawn(process.execPath, [BIN, 'serve', '--data-dir', dir, '--listen', '127.0.0.1:0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (c) => (err += c));
    const code = await new Promise((r) => child.on('exit', r));
    assert.equal(code, 1);
    assert.match(err, /in use by process/);
    s.child.kill('SIGTERM');
    assert.equal(await s.exit, 0);
  });

  test('with its lock file deleted, a running controller still refuses a second one and offline commands; kill -9 frees the data dir', async () => {
    const dir = tempDir();
    const lock = join(dir, 'edgectl.lock');
    const cfg = join(tempDir(), 'config');
    const args = ['--data-dir', dir, '--listen', '127.0.0.1:0'];
    const env = { EDGECTL_ADMIN_USERNAME: 'admin', EDGECTL_ADMIN_PASSWORD: 'admin-pass1' };
    const first = await serve(args, env);
    unlinkSync(lock);
    const holder = process.platform === 'linux' ? `process ${first.child.pid}` : 'another process';
    const refusal = new RegExp(`in use by ${holder} \\(its store is open there; edgectl.lock was gone\\)`);

    // Bounded: a second controller that did start would be killed at the CLI harness's time limit.
    const second = await edgectlProcess(cfg, ['serve', ...args]);
    assert.equal(second.code, 1);
    assert.match(second.stderr, refusal);
    // The offline commands in-process: the lock is held by another process either way.
    for (const command of [
      ['db', 'info'],
      ['identity', 'list'],
    ]) {
      const r = await edgectlSlow(cfg, ...command, '--data-dir', dir);
      assert.equal(r.code, 1, command.join(' '));
      assert.match(r.stderr, refusal, command.join(' '));
      assert.match(r.stderr, /stop it first/, command.join(' '));
    }
    assert.ok(!existsSync(lock), 'the refused processes leave no lock file behind');

    // The kernel drops a killed controller's locks: a restart needs no clean-up, with or without its lock file.
    first.child.kill('SIGKILL');
    await first.exit;
    const again = await serve(args, env);
    again.child.kill('SIGKILL');
    await again.exit;
    assert.ok(existsSync(lock), 'the killed controller left its lock file');
    const third = await serve(args, env);
    third.child.kill('SIGTERM');
    assert.equal(await third.exit, 0);
  });
});
