/**
 * The listener under abuse: connection floods are capped per source address and globally, slow headers get
 * 408, an oversized body's 413 reaches the client (its upload drained, within bounds), and TLS 1.2 offers only
 * AEAD suites.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scratch } from '../harness/processes.js';
import { startTestServer, type TestServer } from '../harness/server.js';

const { tempDir, track } = scratch('edgectl-connections-');

/** GET `path` from a given loopback source address (fixture: resolves the status, or the error's code). */
function getFrom(server: TestServer, localAddress: string, path = '/version'): Promise<number | string> {
  return new Promise((resolve) => {
    const req = https.get(`${server.url}${path}`, { ca: server.ca, agent: false, localAddress }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
  });
}

/** Opens `n` idle TCP connections from `localAddress`; each entry tells whether the server has closed it. */
async function flood(
  server: TestServer,
  n: number,
  localAddress: string,
): Promise<{ sockets: net.Socket[]; open: () => number }> {
  const port = server.daemon.port;
  const closed = new Set<net.Socket>();
  const sockets = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<net.Socket>((resolve) => {
          const s = net.connect({ host: '127.0.0.1', port, localAddress });
          s.on('error', () => closed.add(s));
          s.on('close', () => closed.add(s));
          s.on('connect', () => resolve(s));
          s.on('close', () => resolve(s));
        }),
    ),
  );
  // Over-limit sockets are accepted by the kernel and closed by the server right after: give that time to arrive.
  await new Promise((r) => setTimeout(r, 400));
  return { sockets, open: () => sockets.filter((s) => !closed.has(s)).length };
}

const closeAll = (sockets: net.Socket[]) => sockets.forEach((s) => s.destroy());

describe('connection limits', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({
      yaml: 'limits:\n  maxConnections: 25\n  maxConnectionsPerAddress: 10\n  headersTimeout: 2s\n  requestTimeout: 4s\n',
    });
  });
  after(() => server.close());

  test('one address holding three times its cap of idle connections keeps only the cap; another client is served', async () => {
    const f = await flood(server, 30, '127.0.0.1');
    try {
      assert.equal(f.open(), 10, 'exactly the per-address cap stays open');
      assert.equal(await getFrom(server, '127.0.0.2'), 200);
      assert.notEqual(await getFrom(server, '127.0.0.1'), 200, 'the flooding address gets no further connection');
    } finally {
      closeAll(f.sockets);
    }
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(await getFrom(server, '127.0.0.1'), 200, 'the address is served again once its connections are gone');
  });

  test('the global cap bounds connections from many addresses', async () => {
    const floods = await Promise.all(['127.0.0.3', '127.0.0.4', '127.0.0.5'].map((a) => flood(server, 10, a)));
    try {
      const open = floods.reduce((n, f) => n + f.open(), 0);
      assert.equal(open, 25, 'the global cap, not the per-address one, refused the rest');
    } finally {
      floods.forEach((f) => closeAll(f.sockets));
    }
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(await getFrom(server, '127.0.0.2'), 200);
  });

  test('headers not finished within headersTimeout are answered 408 with the error envelope', async () => {
    const socket = tls.connect({ host: '127.0.0.1', port: server.daemon.port, ca: server.ca, servername: 'localhost' });
    const started = Date.now();
    const answer = await new Promise<string>((resolve, reject) => {
      let text = '';
      socket.on('secureConnect', () => socket.write('GET /version HTTP/1.1\r\nhost: localhost\r\nx-slow: '));
      socket.on('data', (c) => (text += c));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
      setTimeout(() => reject(new Error('no answer within 8s')), 8000).unref();
    });
    assert.match(answer, /^HTTP\/1\.1 408 /);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    assert.equal(body.error.code, 'TIMEOUT');
    assert.ok(Date.now() - started < 7000);
  });

  test('a TLS connection that never completes its handshake is closed', async () => {
    const socket = net.connect({ host: '127.0.0.1', port: server.daemon.port, localAddress: '127.0.0.6' });
    const closedAfter = await new Promise<number>((resolve, reject) => {
      const started = Date.now();
      socket.on('close', () => resolve(Date.now() - started));
      socket.on('error', () => {});
      setTimeout(() => reject(new Error('still open after 8s')), 8000).unref();
    });
    assert.ok(closedAfter >= 500, `closed after ${closedAfter}ms, not at once`);
  });
});

describe('shutdown', () => {
  test('a controller stops at once even with connections still in their TLS handshake', async () => {
    const server = await startTestServer();
    const f = await flood(server, 5, '127.0.0.7');
    assert.equal(f.open(), 5);
    const started = Date.now();
    await server.close();
    assert.ok(Date.now() - started < 3000, `close took ${Date.now() - started}ms (the handshake deadline is 10s)`);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(f.open(), 0, 'the pending connections were closed');
  });
});

describe('oversized bodies', () => {
  let server: TestServer;
  before(async () => {
    // A short headersTimeout: it is also the longest silence while an unread body is drained. Its clients use
    // the listener: that it keeps serving connections is the point.
    server = await startTestServer({ yaml: 'limits:\n  headersTimeout: 2s\n', transport: 'tls' });
  });
  after(() => server.close());

  /** POSTs `size` bytes in chunks (a small pause every 256 KiB), declared or chunked; resolves status and body. */
  function slowPost(size: number, declared: boolean): Promise<{ status: number; body: any }> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (declared) headers['content-length'] = String(size);
      const req = https.request(
        `${server.url}/edge/management/v1/authenticate?method=password`,
        { method: 'POST', headers, ca: server.ca, agent: false },
        (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
        },
      );
      req.on('error', reject);
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      let sent = 0;
      const write = () => {
        while (sent < size) {
          const n = Math.min(chunk.length, size - sent);
          sent += n;
          const more = req.write(chunk.subarray(0, n));
          if (sent % (256 * 1024) === 0) return void setTimeout(write, 2);
          if (!more) return void req.once('drain', write);
        }
        req.end();
      };
      write();
    });
  }

  test('a 2 MB body sent while the server answers gets the 413 envelope, not a reset', async () => {
    for (let i = 0; i < 4; i++) {
      const res = await slowPost(2 * 1024 * 1024, true);
      assert.equal(res.status, 413);
      assert.equal(res.body.error.code, 'REQUEST_ENTITY_TOO_LARGE');
    }
  });

  test('after an early 413 the server reads the rest of the body: the client finishes sending without a reset', async () => {
    for (let i = 0; i < 3; i++) {
      const size = 2 * 1024 * 1024;
      const outcome = await new Promise<{ text: string; error?: string; sent: number }>((resolve) => {
        const s = tls.connect({ host: '127.0.0.1', port: server.daemon.port, ca: server.ca, servername: 'localhost' });
        let text = '';
        let error: string | undefined;
        let sent = 0;
        s.on('data', (c) => (text += c));
        s.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
        s.on('close', () => resolve({ text, error, sent }));
        s.on('secureConnect', () => {
          s.write(
            `POST /edge/management/v1/authenticate?method=password HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: ${size}\r\n\r\n`,
          );
          const chunk = Buffer.alloc(64 * 1024, 0x20);
          // The answer is due as soon as the headers arrive; the body follows it.
          const step = () => {
            while (sent < size) {
              sent += chunk.length;
              if (!s.write(chunk)) return void s.once('drain', step);
            }
            s.end();
          };
          setTimeout(step, 50);
        });
      });
      assert.equal(outcome.error, undefined);
      assert.equal(outcome.sent, size);
      assert.match(outcome.text, /^HTTP\/1\.1 413 /);
      assert.match(outcome.text, /"code":"REQUEST_ENTITY_TOO_LARGE"/);
    }
  });

  /** POSTs `size` bytes in one write (as most clients send a body they hold); resolves once the request is closed. */
  function upload(
    size: number,
    opts: { declared: boolean; agent: https.Agent | false },
  ): Promise<{ status?: number; code?: string; error?: string; reusedSocket: boolean }> {
    return new Promise((resolve) => {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (opts.declared) headers['content-length'] = String(size);
      const outcome: { status?: number; code?: string; error?: string; reusedSocket: boolean } = {
        reusedSocket: false,
      };
      const req = https.request(
        `${server.url}/edge/management/v1/authenticate?method=password`,
        { method: 'POST', headers, ca: server.ca, agent: opts.agent },
        (res) => {
          outcome.reusedSocket = req.reusedSocket;
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => {
            outcome.status = res.statusCode;
            outcome.code = JSON.parse(text).error?.code;
          });
        },
      );
      req.on('error', (e: NodeJS.ErrnoException) => (outcome.error = e.code ?? e.message));
      req.on('close', () => resolve(outcome));
      req.end(Buffer.alloc(size, 0x20));
    });
  }

  const MiB = 1024 * 1024;

  test('a 64 MiB upload from https.request gets the 413 envelope and no reset, declared or chunked', async () => {
    for (const declared of [true, false]) {
      // agent: false asks for `connection: close`; the connection still closes only after the body is drained.
      const res = await upload(64 * MiB, { declared, agent: false });
      assert.deepEqual(
        res,
        { status: 413, code: 'REQUEST_ENTITY_TOO_LARGE', reusedSocket: false },
        `declared ${declared}`,
      );
    }
  });

  test('after a drained 64 MiB upload the keep-alive connection serves the next request', async () => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: server.ca });
    try {
      for (const declared of [true, false]) {
        const first = await upload(64 * MiB, { declared, agent });
        assert.equal(first.status, 413);
        assert.equal(first.error, undefined);
        const next = await upload(0, { declared: true, agent });
        assert.equal(next.reusedSocket, true, 'the same connection carried the next request');
        assert.equal(next.code, 'COULD_NOT_VALIDATE', 'the empty body was read and answered');
      }
    } finally {
      agent.destroy();
    }
  });

  test("Node's fetch (undici) uploading 64 MiB gets the 413 envelope, not EPIPE", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'ca.pem'), server.ca);
    // fetch takes its CAs from NODE_EXTRA_CA_CERTS, read when a process starts: the client runs in a child.
    const client = `
      const size = 64 * 1024 * 1024;
      const chunked = () => { let sent = 0; return new ReadableStream({ pull(c) { if (sent >= size) return c.close(); sent += 1 << 20; c.enqueue(new Uint8Array(1 << 20).fill(32)); } }); };
      const out = [];
      for (const body of [() => new Uint8Array(size).fill(32), () => new Uint8Array(size).fill(32), chunked, chunked]) {
        try {
          const r = await fetch(process.argv[1], { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(), duplex: 'half' });
          out.push({ status: r.status, code: (await r.json()).error?.code });
        } catch (e) {
          out.push({ error: e.cause?.code ?? e.message });
        }
      }
      console.log(JSON.stringify(out));`;
    const child = track(
      spawn(
        process.execPath,
        ['--input-type=module', '-e', client, `${server.url}/edge/management/v1/authenticate?method=password`],
        { env: { ...process.env, NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem') }, stdio: ['ignore', 'pipe', 'inherit'] },
      ),
    );
    let stdout = '';
    child.stdout.on('data', (c) => (stdout += c));
    await new Promise((resolve) => child.on('close', resolve));
    const outcomes = JSON.parse(stdout) as unknown[];
    assert.deepEqual(outcomes, Array(4).fill({ status: 413, code: 'REQUEST_ENTITY_TOO_LARGE' }));
  });

  test('a client that stops sending mid-body is disconnected after a silence of headersTimeout, its 413 intact', async () => {
    const s = tls.connect({ host: '127.0.0.1', port: server.daemon.port, ca: server.ca, servername: 'localhost' });
    const answer = await new Promise<string>((resolve, reject) => {
      let text = '';
      s.on('secureConnect', () => {
        s.write(
          `POST /edge/management/v1/authenticate?method=password HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: ${4 * MiB}\r\n\r\n`,
        );
        // Half the declared body, then silence (the socket stays open on this side).
        s.write(Buffer.alloc(2 * MiB, 0x20));
      });
      s.on('data', (c) => (text += c));
      s.on('error', () => {});
      s.on('close', () => resolve(text));
      // Far beyond the 2 s bound, far below the 60 s request timeout.
      setTimeout(() => reject(new Error('still open after 20s')), 20_000).unref();
    }).finally(() => s.destroy());
    assert.match(answer, /^HTTP\/1\.1 413 /);
    assert.match(answer, /"code":"REQUEST_ENTITY_TOO_LARGE"/);
    assert.equal(answer.match(/HTTP\/1\.1 \d{3}/g)?.length, 1, 'nothing was written after the answer');
  });

  test('a body whose framing breaks while it is drained closes the connection without a second answer', async () => {
    const s = tls.connect({ host: '127.0.0.1', port: server.daemon.port, ca: server.ca, servername: 'localhost' });
    const answer = await new Promise<string>((resolve, reject) => {
      let text = '';
      s.on('secureConnect', () => {
        s.write(
          'POST /edge/management/v1/authenticate?method=password HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n',
        );
        for (let i = 0; i < 32; i++)
          s.write(Buffer.concat([Buffer.from('10000\r\n'), Buffer.alloc(64 * 1024, 0x20), Buffer.from('\r\n')]));
      });
      s.on('data', (c) => {
        text += c;
        // The 413 is in: now a chunk size that is not hexadecimal.
        if (/REQUEST_ENTITY_TOO_LARGE/.test(text)) s.write('zz\r\n');
      });
      s.on('error', () => {});
      s.on('close', () => resolve(text));
      setTimeout(() => reject(new Error('still open after 20s')), 20_000).unref();
    }).finally(() => s.destroy());
    assert.match(answer, /^HTTP\/1\.1 413 /);
    assert.equal(answer.match(/HTTP\/1\.1 \d{3}/g)?.length, 1, 'nothing was written after the answer');
  });

  test('a chunked 2 MB body gets the 413 envelope too, and the server keeps serving', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await slowPost(2 * 1024 * 1024, false);
      assert.equal(res.status, 413);
      assert.equal(res.body.error.code, 'REQUEST_ENTITY_TOO_LARGE');
    }
    assert.equal((await server.client().get('/version')).status, 200);
  });
});

describe('TLS suites', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  const handshake = (opts: tls.ConnectionOptions): Promise<string> =>
    new Promise((resolve) => {
      const s = tls.connect({
        host: '127.0.0.1',
        port: server.daemon.port,
        ca: server.ca,
        servername: 'localhost',
        ...opts,
      });
      s.on('secureConnect', () => {
        const name = s.getCipher().name;
        s.destroy();
        resolve(name);
      });
      s.on('error', (e: NodeJS.ErrnoException) => resolve(`error:${e.code ?? e.message}`));
    });

  test('TLS 1.2 with only CBC suites is refused at the handshake', async () => {
    const result = await handshake({
      maxVersion: 'TLSv1.2',
      ciphers:
        'ECDHE-RSA-AES128-SHA:ECDHE-ECDSA-AES128-SHA:ECDHE-RSA-AES256-SHA384:ECDHE-ECDSA-AES256-SHA384:AES128-SHA:AES256-SHA256',
    });
    assert.match(result, /^error:/);
  });

  test('TLS 1.2 negotiates an AEAD suite, and TLS 1.3 still works', async () => {
    assert.match(await handshake({ maxVersion: 'TLSv1.2' }), /GCM|CHACHA20/);
    assert.match(await handshake({ minVersion: 'TLSv1.3' }), /^TLS_/);
  });
});
