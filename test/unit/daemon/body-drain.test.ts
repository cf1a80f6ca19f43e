/**
 * The draining of unread bodies after an early answer, with small bounds on a plain-HTTP Fastify: within the
 * byte bound the connection stays usable, beyond it (declared or sent) the connection closes. A request injected
 * in-process, whose body has been read, has nothing to drain.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { drainUnreadBodies } from '../../../src/daemon/http/body-drain.js';

const KiB = 1024;
const MAX_BYTES = 256 * KiB;
let app: FastifyInstance;
let port: number;

before(async () => {
  app = Fastify({ bodyLimit: KiB });
  drainUnreadBodies(app, { maxBytes: MAX_BYTES, requestTimeoutMs: 60_000, idleMs: 10_000 }, new WeakSet<Duplex>());
  app.post('/', async () => ({ ok: true }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  port = (app.server.address() as AddressInfo).port;
});
after(() => app.close());

/** Writes `head` and then `chunk` until the server closes or `count` chunks are out; the answers and what was sent. */
function send(head: string, chunk: Buffer, count: number, tail = ''): Promise<{ text: string; chunks: number }> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    let text = '';
    let chunks = 0;
    s.on('data', (c) => (text += c));
    s.on('error', () => {});
    s.on('close', () => resolve({ text, chunks }));
    s.on('connect', () => {
      s.write(head);
      const step = () => {
        while (chunks < count && !s.destroyed) {
          chunks++;
          if (!s.write(chunk)) return void s.once('drain', step);
        }
        if (!s.destroyed) s.end(tail);
      };
      setTimeout(step, 20);
    });
  });
}

const post = (headers: string) => `POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n${headers}\r\n`;
const statusLines = (text: string) => text.match(/HTTP\/1\.1 \d{3}[^\r]*/g) ?? [];

test('a body within the byte bound is drained and the same connection answers the next request', async () => {
  const size = 128 * KiB;
  const next = post('content-length: 2\r\n') + '{}';
  const { text } = await send(
    post(`content-length: ${size}\r\n`),
    Buffer.alloc(16 * KiB, 0x20),
    size / (16 * KiB),
    next,
  );
  assert.deepEqual(statusLines(text), ['HTTP/1.1 413 Payload Too Large', 'HTTP/1.1 200 OK']);
  assert.doesNotMatch(text, /connection: close/i);
});

test('a body declared beyond the byte bound is answered with connection: close', async () => {
  const { text } = await send(post(`content-length: ${MAX_BYTES + 1}\r\n`), Buffer.alloc(0), 0);
  assert.deepEqual(statusLines(text), ['HTTP/1.1 413 Payload Too Large']);
  assert.match(text, /connection: close/i);
});

test('a chunked body sent beyond the byte bound is cut off after the answer', async () => {
  const chunk = Buffer.concat([Buffer.from('4000\r\n'), Buffer.alloc(16 * KiB, 0x20), Buffer.from('\r\n')]);
  // Far more than the loopback buffers hold, so the writes meet the closed connection.
  const total = (128 * MAX_BYTES) / (16 * KiB);
  const { text, chunks } = await send(post('transfer-encoding: chunked\r\n'), chunk, total, '0\r\n\r\n');
  assert.deepEqual(statusLines(text), ['HTTP/1.1 413 Payload Too Large']);
  assert.ok(chunks < total, `the server closed the connection after ${chunks} of ${total} chunks`);
});

test('an injected request whose body was read leaves nothing draining (the offline CLI)', async () => {
  // Short bounds: a drain left behind would cut off the injected request's socket, which has no destroy().
  const injected = Fastify();
  drainUnreadBodies(injected, { maxBytes: MAX_BYTES, requestTimeoutMs: 100, idleMs: 50 }, new WeakSet<Duplex>());
  injected.post('/', async () => ({ ok: true }));
  const errors: unknown[] = [];
  const onError = (e: unknown) => errors.push(e);
  process.on('uncaughtException', onError);
  try {
    const res = await injected.inject({ method: 'POST', url: '/', payload: { a: 1 } });
    assert.equal(res.statusCode, 200);
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(errors, []);
  } finally {
    process.off('uncaughtException', onError);
    await injected.close();
  }
});

test('an injected request without a body leaves nothing draining either', async () => {
  const injected = Fastify();
  drainUnreadBodies(injected, { maxBytes: MAX_BYTES, requestTimeoutMs: 60_000, idleMs: 60_000 }, new WeakSet<Duplex>());
  injected.get('/', async () => ({ ok: true }));
  // The drain's hook lets the next run before it starts reading: look once that turn is over.
  let listening: Promise<number> | undefined;
  injected.addHook('onResponse', (req, _reply, done) => {
    listening = new Promise((resolve) => setImmediate(() => resolve(req.raw.listenerCount('data'))));
    done();
  });
  try {
    const res = await injected.inject({ method: 'GET', url: '/' });
    assert.equal(res.statusCode, 200);
    assert.equal(await listening, 0, 'no drain reads the injected request');
  } finally {
    await injected.close();
  }
});
