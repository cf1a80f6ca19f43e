/**
 * The live stream of events (`GET /edge/management/v1/events/stream`, server-sent events over the real TLS
 * listener): admins only; it sends what is recorded after it opened, filtered by `type`, each event with its
 * outbox position as its SSE id; `Last-Event-ID` resumes right after an event. Its bounds, on a stream server
 * with small limits over the same store: a heartbeat on an idle stream, a cap on open streams, and a reader that
 * does not keep up is disconnected rather than buffered for. And the same bounds set in the config file
 * (`events.stream.*`) on a controller of their own: past `maxClients` a stream is refused with the error envelope
 * (429), and a client that stops reading is disconnected once more than `bufferKiB` waits for it past
 * `writeTimeout`, while one that reads gets every event.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import http from 'node:http';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { createIdentity, createUser, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { SseParser, type SseEvent } from '../../src/cli/transport/sse.js';
import { EventStreams } from '../../src/daemon/event-stream.js';

type Ev = Record<string, any>;

let s: TestServer;
let admin: ApiClient;

before(async () => {
  s = await startTestServer();
  admin = await s.admin();
});
after(() => s?.close());

interface OpenStream {
  status: number;
  events: SseEvent[];
  text: () => string;
  parser: SseParser;
  closed: Promise<void>;
  close(): void;
}

/** Opens a stream over a real connection; resolves once the answer's head (and its first bytes) arrived. */
function open(url: string, headers: Record<string, string>, opts: { ca?: string } = {}) {
  return new Promise<OpenStream>((resolve, reject) => {
    const get = url.startsWith('https:') ? https.request : http.request;
    const req = get(url, { headers, ...(opts.ca && { ca: opts.ca }), agent: false });
    let raw = '';
    const parser = new SseParser();
    const events: SseEvent[] = [];
    let closedResolve!: () => void;
    const closed = new Promise<void>((r) => (closedResolve = r));
    req.on('response', (res) => {
      res.socket.on('close', () => closedResolve());
      const stream: OpenStream = {
        status: res.statusCode ?? 0,
        events,
        text: () => raw,
        parser,
        closed,
        close: () => req.destroy(),
      };
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        raw += c;
        events.push(...parser.push(c));
      });
      res.on('error', () => {});
      resolve(stream);
    });
    req.on('error', (e) => (/socket hang up|ECONNRESET/.test(e.message) ? closedResolve() : reject(e)));
    req.end();
  });
}

const streamUrl = (query = '') => `${s.url}/edge/management/v1/events/stream${query}`;
const openStream = (query = '', headers: Record<string, string> = {}) =>
  open(streamUrl(query), { 'zt-session': admin.token!, ...headers }, { ca: s.ca });

async function until<T>(what: string, probe: () => T | undefined, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const parsed = (st: OpenStream): Ev[] => st.events.map((e) => JSON.parse(e.data) as Ev);

test('the stream is for admins only; a bad type or Last-Event-ID is a 400', async () => {
  const anonymous = await s.request('GET', '/edge/management/v1/events/stream');
  assert.equal(anonymous.status, 401);
  const user = await createUser(s, admin);
  const notAdmin = await s.request('GET', '/edge/management/v1/events/stream', {
    headers: { 'zt-session': user.client.token! },
  });
  assert.equal(notAdmin.status, 401);
  const badType = await admin.get('/events/stream?type=nonsense');
  assert.equal(badType.status, 400);
  assert.equal(badType.body.error.code, 'COULD_NOT_VALIDATE');
  assert.equal(badType.body.error.cause.field, 'type');
  const badId = await s.request('GET', '/edge/management/v1/events/stream', {
    headers: { 'zt-session': admin.token!, 'last-event-id': 'abc' },
  });
  assert.equal(badId.status, 400);
});

test('the stream sends what is recorded after it opened, filtered by type; Last-Event-ID resumes after an event', async () => {
  const st = await openStream('?type=entityChange');
  assert.equal(st.status, 200);
  await until('the stream’s first bytes', () => st.parser.retryMs);
  const a = await createIdentity(admin);
  // A login is recorded too (authentication, apiSession): filtered out.
  await s.admin();
  const got = await until('identity A’s event', () => parsed(st).find((e) => e.entityId === a));
  assert.equal(got.eventType, 'created');
  assert.ok(parsed(st).every((e) => e.namespace === 'entityChange'));
  const idOfA = st.events.find((e) => (JSON.parse(e.data) as Ev).id === got.id)!.id!;
  assert.match(idOfA, /^\d+$/);
  assert.equal(st.events[0]!.event, 'entityChange');
  st.close();

  const b = await createIdentity(admin);
  const c = await createIdentity(admin);
  const resumed = await openStream('?type=entityChange.created', { 'last-event-id': idOfA });
  await until('B and C', () => (resumed.events.length >= 2 ? true : undefined));
  assert.deepEqual(
    parsed(resumed)
      .slice(0, 2)
      .map((e) => e.entityId),
    [b, c],
    'exactly what came after A, in order',
  );
  resumed.close();
});

test('bounds: a heartbeat on an idle stream, a cap on open streams, a slow reader disconnected', async () => {
  const streams = new EventStreams({
    maxClients: 1,
    bufferBytes: 1024,
    pollMs: 50,
    heartbeatMs: 200,
    writeTimeoutMs: 300,
    batch: 50,
  });
  const app = Fastify();
  app.get('/s', async (req, reply) => {
    const afterAt = (req.query as { after?: string }).after;
    await streams.serve(s.daemon.ctx, req, reply, {
      types: [],
      ...(afterAt !== undefined && { after: Number(afterAt) }),
    });
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/s`;
  try {
    const idle = await open(base, {});
    await sleep(600);
    assert.match(idle.text(), /^: heartbeat$/m, 'an idle stream gets heartbeats');
    const second = await open(base, {});
    assert.notEqual(second.status, 200, 'no more than maxClients');
    idle.close();
    await until('the stream to go', () => (streams.size === 0 ? true : undefined));

    // A reader that takes nothing (a socket whose buffers are full: here a writable that never finishes a write,
    // since loopback sockets hold tens of MiB): given up after writeTimeoutMs, with nothing more read for it.
    const stuck = new Writable({ highWaterMark: 1024, write: () => {} }) as Writable & { writeHead(): void };
    stuck.writeHead = () => {};
    const reqRaw = new EventEmitter();
    const fakeReply = { hijack: () => {}, raw: stuck } as unknown as FastifyReply;
    const fakeReq = { raw: reqRaw } as unknown as FastifyRequest;
    await createIdentity(admin);
    const began = Date.now();
    await streams.serve(s.daemon.ctx, fakeReq, fakeReply, { types: [], after: 0 });
    await until('the slow reader to be let go', () => (stuck.destroyed ? true : undefined));
    assert.ok(Date.now() - began >= 300, 'after its write timeout');
    assert.equal(streams.size, 0);
  } finally {
    streams.closeAll();
    await app.close();
  }
});

/** Opens a stream whose answer is not read until `resume` (a reader that stopped reading). */
function openPaused(url: string, headers: Record<string, string>, ca: string) {
  return new Promise<{ status: number; resume(): void; text(): string; closed: Promise<void>; close(): void }>(
    (resolve, reject) => {
      const req = https.request(url, { headers, ca, agent: false });
      let raw = '';
      let closedResolve!: () => void;
      const closed = new Promise<void>((r) => (closedResolve = r));
      req.on('response', (res) => {
        res.pause();
        res.socket.on('close', () => closedResolve());
        res.on('error', () => {});
        resolve({
          status: res.statusCode ?? 0,
          resume: () => {
            res.setEncoding('utf8');
            res.on('data', (c: string) => (raw += c));
            res.resume();
          },
          text: () => raw,
          closed,
          close: () => req.destroy(),
        });
      });
      req.on('error', (e) => (/socket hang up|ECONNRESET/.test(e.message) ? closedResolve() : reject(e)));
      req.end();
    },
  );
}

describe('the bounds set in the config file (events.stream)', () => {
  let t: TestServer;
  let tAdmin: ApiClient;
  before(async () => {
    // The write timeout is what the reading client must never reach: it reads in this process, beside the
    // controller and its 200 KB creates.
    t = await startTestServer({
      yaml: 'events:\n  stream:\n    maxClients: 2\n    bufferKiB: 16\n    writeTimeout: 3s\n    pollInterval: 50ms\n',
    });
    tAdmin = await t.admin();
  });
  after(() => t?.close());

  const url = () => `${t.url}/edge/management/v1/events/stream`;
  const headers = () => ({ 'zt-session': tAdmin.token! });
  /** A stream opened as soon as the controller has room for it (fixture: no assertions). */
  async function openWhenFree(ms = 20_000): Promise<OpenStream> {
    const end = Date.now() + ms;
    for (;;) {
      const st = await open(url(), headers(), { ca: t.ca });
      if (st.status === 200) return st;
      await st.closed;
      if (Date.now() > end) throw new Error(`no room for a stream (${st.status})`);
      await sleep(100);
    }
  }

  test('past maxClients a stream is refused with the error envelope: 429 RATE_LIMITED, Retry-After', async () => {
    const a = await openWhenFree();
    const b = await openWhenFree();
    const refused = await tAdmin.get('/events/stream');
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, 'RATE_LIMITED');
    assert.equal(typeof refused.body.error.message, 'string');
    assert.equal(refused.headers['retry-after'], '5');
    a.close();
    b.close();
    await Promise.all([a.closed, b.closed]);
  });

  test('a client that stops reading is disconnected past its buffer; one that reads gets every event', async () => {
    const slow = await openPaused(url(), headers(), t.ca);
    assert.equal(slow.status, 200);
    const fast = await openWhenFree();
    // Far more than the buffer and the sockets' own buffers hold: 25 events of some 200 KB each.
    const big = 'x'.repeat(200_000);
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) ids.push(await createIdentity(tAdmin, { tags: { big } }));
    // Each event is parsed once, as it arrives: the server runs in this process, and parsing all that arrived
    // (up to 5 MB) on every probe starved the stream the test waits for.
    const arrived = new Set<string>();
    let seen = 0;
    await until(
      'every event at the reading client',
      () => {
        for (; seen < fast.events.length; seen++) arrived.add((JSON.parse(fast.events[seen]!.data) as Ev).entityId);
        return ids.every((id) => arrived.has(id)) || undefined;
      },
      30_000,
    );
    // The stopped reader's place is taken back: a new stream gets in beside the reading one.
    const probe = await openWhenFree();
    assert.equal(probe.status, 200);
    probe.close();
    // Read now, the stopped client's stream ends (the controller closed it), short of the last events.
    slow.resume();
    await slow.closed;
    const got = new SseParser().push(slow.text()).map((e) => JSON.parse(e.data) as Ev);
    assert.ok(
      got.filter((e) => ids.includes(e.entityId)).length < ids.length,
      'what was not taken in time was not kept for it',
    );
    fast.close();
  });
});
