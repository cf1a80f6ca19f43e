/**
 * `edgectl serve` failing loudly and safely: unknown config keys, wildcard listen addresses without an advertised
 * one, a busy listen address, unusable data dirs; and `--advertise` reaching the URL and the server certificate.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from '../harness/http.js';
import { scratch } from '../harness/processes.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin', 'edgectl');
const { tempDir, track } = scratch('edgectl-loud-');

const ADMIN = { EDGECTL_ADMIN_USERNAME: 'admin', EDGECTL_ADMIN_PASSWORD: 'admin-Passw0rd' };

function spawnServe(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], {
    env: {
      ...process.env,
      EDGECTL_LOG_LEVEL: 'info',
      EDGECTL_CONFIG: '',
      EDGECTL_ADVERTISE: '',
      EDGECTL_LISTEN: '',
      ...ADMIN,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (err += c));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exit, out: () => out, err: () => err };
}

/** Runs a start that must fail: its exit code and stderr, within `ms` (a spin or a hang fails the test). */
async function failedStart(args: string[], env: Record<string, string> = {}, ms = 20_000) {
  const s = spawnServe(args, env);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
  const code = await Promise.race([s.exit, timeout]);
  clearTimeout(timer);
  if (code === 'timeout') s.child.kill('SIGKILL');
  assert.notEqual(code, 'timeout', `serve did not exit within ${ms} ms:\n${s.out()}${s.err()}`);
  return { code, err: s.err(), out: s.out() };
}

/** Starts a controller and waits for its "listening" line: the advertised URL and the bound address. */
async function started(args: string[], env: Record<string, string> = {}) {
  const s = spawnServe(args, env);
  const line = await new Promise<{ url: string; listen: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${s.out()}${s.err()}`)), 60_000);
    s.child.stdout!.on('data', () => {
      const l = s
        .out()
        .split('\n')
        .find((x) => x.includes('"edgectl controller listening"'));
      if (l) {
        clearTimeout(timer);
        resolve(JSON.parse(l));
      }
    });
    void s.exit.then(() => {
      clearTimeout(timer);
      reject(new Error(`serve exited early:\n${s.out()}${s.err()}`));
    });
  });
  const port = Number(/:(\d+)$/.exec(line.listen)![1]);
  return { ...s, ...line, port };
}

async function stop(s: { child: ChildProcess; exit: Promise<number | null> }) {
  s.child.kill('SIGTERM');
  assert.equal(await s.exit, 0);
}

describe('edgectl serve fails loudly and safely', () => {
  test('an unknown config key is refused, naming it and the nearest known one; nothing is written', async () => {
    const dir = tempDir();
    const cfg = join(dir, 'c.yml');
    writeFileSync(cfg, 'lisen: 127.0.0.1:0\nlimits:\n  maxConnections: 5\n');
    const data = join(dir, 'data');
    const r = await failedStart(['--config', cfg, '--data-dir', data]);
    assert.equal(r.code, 2);
    assert.match(r.err, /^error: config file .*c\.yml: unknown key "lisen" \(the nearest known key is "listen"\)\n$/);
    assert.ok(!existsSync(data), 'no data dir is created');

    writeFileSync(
      cfg,
      'listen: 127.0.0.1:0\nedge:\n  api:\n    rateLimit:\n      auth:\n        perSorce: {burst: 5}\n',
    );
    const r2 = await failedStart(['--config', cfg, '--data-dir', data]);
    assert.equal(r2.code, 2);
    assert.match(
      r2.err,
      /unknown key "edge\.api\.rateLimit\.auth\.perSorce" \(the nearest known key is "edge\.api\.rateLimit\.auth\.perSource"\)/,
    );
  });

  test('a wildcard listen address without an advertised one is refused with how to set one', async () => {
    const dir = tempDir();
    for (const listen of ['0.0.0.0:0', '[::]:0']) {
      const r = await failedStart(['--data-dir', dir, '--listen', listen]);
      assert.equal(r.code, 2, listen);
      assert.match(
        r.err,
        /^error: listening on (0\.0\.0\.0|::) \(every interface\) needs the address clients should use: set --advertise HOST\[:PORT\], EDGECTL_ADVERTISE or edge\.api\.address/,
      );
    }
    const cfg = join(dir, 'c.yml');
    writeFileSync(cfg, 'listen: 0.0.0.0:0\n');
    assert.equal(
      (await failedStart(['--config', cfg, '--data-dir', join(dir, 'data')])).code,
      2,
      'from the config file too',
    );
    assert.deepEqual(readdirSync(dir), ['c.yml'], 'nothing written');
  });

  test('a busy listen address is reported before the PKI, token key, store or admin are written', async () => {
    const busy = createServer();
    await new Promise<void>((r) => busy.listen({ host: '127.0.0.1', port: 0 }, r));
    try {
      const { port } = busy.address() as AddressInfo;
      const data = join(tempDir(), 'data');
      const r = await failedStart(['--data-dir', data, '--listen', `127.0.0.1:${port}`], {
        EDGECTL_ADMIN_USERNAME: '',
        EDGECTL_ADMIN_PASSWORD: '',
      });
      assert.equal(r.code, 1);
      assert.match(
        r.err,
        new RegExp(
          `^error: cannot listen on 127\\.0\\.0\\.1:${port}: the address is already in use \\(EADDRINUSE\\)\\n$`,
        ),
      );
      assert.ok(!existsSync(data), 'no data dir, PKI or default-admin file');
    } finally {
      await new Promise((r) => busy.close(r));
    }
  });

  test('an unusable data dir is one error line and exit 1, fast', async () => {
    const dir = tempDir();
    const file = join(dir, 'a-file');
    writeFileSync(file, 'x');
    const cases: Array<[string, RegExp]> = [
      ['/proc/edgectl-x', /a part of the path does not exist and cannot be created \(ENOENT\)/],
      [file, /it exists and is not a directory/],
      [join(file, 'sub'), /a part of the path is not a directory \(ENOTDIR\)/],
    ];
    for (const [data, reason] of cases) {
      const r = await failedStart(['--data-dir', data, '--listen', '127.0.0.1:0'], {}, 15_000);
      assert.equal(r.code, 1, data);
      assert.match(r.err, /^error: the data dir .* is not usable: [^\n]*\n$/, data);
      assert.match(r.err, reason, data);
      assert.equal(r.out, '', 'nothing logged before the refusal');
    }
  });

  test('--advertise names the URL and the server certificate; a newly advertised host gets a reissued certificate', async () => {
    const data = tempDir();
    const a = await started(['--data-dir', data, '--listen', '0.0.0.0:0', '--advertise', 'ctrl-a.example.test']);
    assert.equal(a.url, `https://ctrl-a.example.test:${a.port}`, 'advertised host, bound port');
    const ca = readFileSync(join(data, 'pki', 'ca-bundle.pem'), 'utf8');
    const version = await request(ca, 'GET', `https://127.0.0.1:${a.port}/edge/client/v1/version`);
    assert.equal(version.status, 200);
    assert.deepEqual(version.body.data.apiVersions['edge-client'].v1.apiBaseUrls, [
      `https://ctrl-a.example.test:${a.port}/edge/client/v1`,
    ]);
    const certA = new X509Certificate(readFileSync(join(data, 'pki', 'server.cert.pem')));
    assert.equal(certA.checkHost('ctrl-a.example.test'), 'ctrl-a.example.test');
    await stop(a);

    // The environment this time, with a port (a proxy or port forward in front).
    const b = await started(['--data-dir', data, '--listen', '127.0.0.1:0'], {
      EDGECTL_ADVERTISE: 'ctrl-b.example.test:8443',
    });
    assert.equal(b.url, 'https://ctrl-b.example.test:8443');
    assert.match(b.out(), /"server":"reissued","serverReason":"hosts-not-covered"/);
    const certB = new X509Certificate(readFileSync(join(data, 'pki', 'server.cert.pem')));
    assert.equal(certB.checkHost('ctrl-b.example.test'), 'ctrl-b.example.test');
    assert.notEqual(certB.serialNumber, certA.serialNumber);
    assert.equal(readFileSync(join(data, 'pki', 'ca-bundle.pem'), 'utf8'), ca, 'the CAs are kept');
    await stop(b);
  });

  test('--help and the README name every environment variable serve reads, and --advertise', async () => {
    const sources = [
      join(ROOT, 'src', 'cli', 'commands', 'serve.ts'),
      ...readdirSync(join(ROOT, 'src', 'daemon'), { recursive: true })
        .map(String)
        .filter((f) => f.endsWith('.ts'))
        .map((f) => join(ROOT, 'src', 'daemon', f)),
    ];
    const vars = new Set(sources.flatMap((f) => readFileSync(f, 'utf8').match(/EDGECTL_[A-Z_]+/g) ?? []));
    for (const v of [
      'EDGECTL_CONFIG',
      'EDGECTL_DATA_DIR',
      'EDGECTL_LISTEN',
      'EDGECTL_ADVERTISE',
      'EDGECTL_ADMIN_PASSWORD',
    ])
      assert.ok(vars.has(v), v);

    const help = spawnServe(['--help']);
    assert.equal(await help.exit, 0);
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Running the controller'), readme.indexOf('## The admin CLI'));
    const table = section
      .split('\n')
      .filter((l) => l.startsWith('|'))
      .join('\n');
    for (const v of vars) {
      assert.match(help.out(), new RegExp(`^  ${v} `, 'm'), `--help lists ${v}`);
      assert.ok(table.includes(`\`${v}\``), `the README settings table lists ${v}`);
    }
    assert.match(help.out(), /--advertise <host\[:port\]>/);
    assert.match(table, /`--advertise`/);
  });
});
