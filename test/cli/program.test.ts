/**
 * The edgectl program as a process (`node bin/edgectl …`, the built `dist/`: run `npm run build` first): the other
 * CLI tests run commands in-process, so these check what only the real program has. It starts and answers
 * `--version`, `version` and `--help`; its exit status is the command's (0, 1 for an API failure, 2 for a usage
 * error); it reads standard input from a pipe; an online command reaches a controller over HTTPS and an offline one
 * (`--data-dir`) opens a stopped controller's store and releases it; and a reader that closes stdout early ends it
 * quietly.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN, startTestServer, type TestServer } from '../harness/server.js';
import { assertBuilt, BIN, edgectlProcess, ROOT, type Run } from '../harness/cli.js';
import { scratch } from '../harness/processes.js';
import { VERSION } from '../../src/version.js';

const tmp = scratch('edgectl-program-');
const ok = (r: Run, what: string) => assert.equal(r.code, 0, `${what}: exit ${r.code}\n${r.stderr}${r.stdout}`);

describe('the edgectl program', () => {
  let server: TestServer;
  let cfg: string;
  let caFile: string;
  const program = (args: string[], input?: string) => edgectlProcess(cfg, args, { input });

  before(async () => {
    assertBuilt();
    server = await startTestServer();
    const dir = tmp.tempDir();
    cfg = join(dir, 'cfg');
    caFile = join(dir, 'ca.pem');
    writeFileSync(caFile, server.ca);
  });

  after(() => server?.close());

  it('starts and prints its version and help, exit 0', async () => {
    const [flag, command, help] = await Promise.all([
      program(['--version']),
      program(['version']),
      program(['--help']),
    ]);
    ok(flag, '--version');
    assert.equal(flag.stdout, `${VERSION}\n`);
    ok(command, 'version');
    assert.match(command.stdout, new RegExp(`^edgectl CLI: v${VERSION.replace(/\./g, '\\.')}$`, 'm'));
    ok(help, '--help');
    assert.match(help.stdout, /^Usage: edgectl /m);
    assert.match(help.stdout, /^ {2}identity\b/m, 'the commands are listed');
    assert.equal(help.stderr, '');
  });

  it('exits 2 on a usage error, with the message on stderr and nothing on stdout', async () => {
    const r = await program(['no-such-command']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown command 'no-such-command'/);
    assert.equal(r.stdout, '');
  });

  it('logs in with the password piped to stdin and runs online commands: exit 0, or 1 for an API failure', async () => {
    const login = await program(
      ['login', server.url, '-u', ADMIN.username, '--password-stdin', '--ca', caFile],
      `${ADMIN.password}\n`,
    );
    ok(login, 'login --password-stdin');
    const list = await program(['identity', 'list', '-o', 'json']);
    ok(list, 'identity list');
    assert.deepEqual(
      (JSON.parse(list.stdout) as { data: { name: string }[] }).data.map((i) => i.name),
      ['Default Admin'],
    );
    const missing = await program(['identity', 'show', 'nobody']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^error: NOT_FOUND: /);
    assert.equal(missing.stdout, '');
  });

  it('ends quietly, exit 0, when the reader of its output goes away early', async () => {
    // The read end is closed before the program writes: its write meets a broken pipe (EPIPE).
    const child = spawn(process.execPath, [BIN, 'completion', 'bash'], {
      cwd: ROOT,
      env: { ...process.env, EDGECTL_CONFIG_DIR: cfg },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    tmp.track(child);
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    const code = await new Promise((resolve) => child.on('close', resolve));
    assert.equal(code, 0, stderr);
    assert.equal(stderr, '');
  });

  it('runs an offline command on the stopped controller’s store and releases it', async () => {
    await server.daemon.close();
    const r = await edgectlProcess(cfg, ['identity', 'list', '-o', 'id', '--data-dir', server.dataDir], {
      timeoutMs: 180_000,
    });
    ok(r, 'identity list --data-dir');
    assert.equal(r.stdout.trim().split('\n').length, 1, r.stdout);
    assert.equal(existsSync(join(server.dataDir, 'edgectl.lock')), false, 'the lock is released');
  });
});
