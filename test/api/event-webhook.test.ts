/**
 * The webhook sink against a local HTTPS receiver (real TLS, a throwaway CA given as `caFile`): every event is
 * delivered, in order, as JSON arrays signed with HMAC-SHA256 of the body; a receiver outage (connections refused,
 * then 503s) then its recovery delivers everything exactly once and in order; a batch that keeps failing is given
 * up after its attempts (recorded, counted as a dead letter); a receiver whose certificate does not chain to the
 * sink's roots gets nothing; the secret appears in no event and no metric.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createIdentity, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { startReceiver, type ReceivedBatch, type Receiver } from '../harness/https-receiver.js';

type Ev = Record<string, any>;

const SECRET = 'webhook-Secret-0123456789-abcdef';
const dir = mkdtempSync(join(tmpdir(), 'edgectl-webhook-'));
let receiver: Receiver;
let s: TestServer;
let admin: ApiClient;

before(async () => {
  receiver = await startReceiver(SECRET);
  const caFile = join(dir, 'receiver-ca.pem');
  writeFileSync(caFile, receiver.caPem);
  const base = `https://127.0.0.1:${receiver.port}`;
  const retry = (attempts: number) =>
    `      retry:\n        initialBackoff: 100ms\n        maxBackoff: 400ms\n        maxAttempts: ${attempts}\n`;
  receiver.status.set('/dead', 500);
  s = await startTestServer({
    yaml: `metrics:
  enabled: true
events:
  sinks:
    - type: webhook
      url: ${base}/hook?token=receiver-token
      secret: ${SECRET}
      caFile: ${caFile}
      batchSize: 4
${retry(0)}    - type: webhook
      url: ${base}/dead
      secret: ${SECRET}
      caFile: ${caFile}
      types: [entityChange.created]
${retry(3)}    - type: webhook
      url: ${base}/untrusted
      secret: ${SECRET}
${retry(0)}`,
  });
  admin = await s.admin();
});
after(async () => {
  await s?.close();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

async function listed(): Promise<Ev[]> {
  const res = await admin.get(`/events?limit=500&sort=${encodeURIComponent('timestamp asc')}`);
  assert.equal(res.status, 200, res.text);
  return res.body.data;
}

const batches = (path: string): ReceivedBatch[] => receiver.accepted.filter((b) => b.path === path);
const delivered = (path: string): Ev[] => batches(path).flatMap((b) => JSON.parse(b.body) as Ev[]);

/** Waits until `/hook` has every listed event (none missing); answers both lists. */
async function allDelivered(): Promise<{ got: Ev[]; want: Ev[] }> {
  return until('every event at the receiver', async () => {
    const want = await listed();
    const got = delivered('/hook');
    const ids = new Set(got.map((e) => e.id));
    return want.every((e) => ids.has(e.id)) ? { got, want } : undefined;
  });
}

async function metric(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const res = await s.request('GET', '/metrics', { headers: { accept: '*/*' } });
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of res.text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (m?.[1] === name && want.every((w) => (m[3] ?? '').split(',').includes(w))) return Number(m[4]);
  }
  return undefined;
}

test('every event reaches the webhook, in order, in signed JSON-array batches', async () => {
  for (let i = 0; i < 6; i++) await createIdentity(admin);
  const { got, want } = await allDelivered();
  assert.deepEqual(
    got.map((e) => e.id),
    want.slice(0, got.length).map((e) => e.id),
    'in the outbox order, nothing twice',
  );
  for (const b of batches('/hook')) {
    assert.equal(b.signed, true, 'the signature verifies');
    assert.match(String(b.headers['x-edgectl-signature']), /^sha256=[0-9a-f]{64}$/);
    assert.equal(b.headers['content-type'], 'application/json');
    const events = JSON.parse(b.body) as Ev[];
    assert.ok(Array.isArray(events) && events.length >= 1 && events.length <= 4, 'batches of batchSize at most');
    assert.equal(b.headers['x-edgectl-delivery'], `${events[0]!.id}-${events.length}`);
  }
});

test('a receiver outage, then its recovery, delivers everything exactly once and in order', async () => {
  await allDelivered();
  // Down: connections refused while changes are made.
  await receiver.stop();
  for (let i = 0; i < 5; i++) await createIdentity(admin);
  await sleep(1500);
  // Up again but failing: 503 and 429 are retried like a refused connection.
  await receiver.resume();
  receiver.status.set('/hook', 503);
  for (let i = 0; i < 3; i++) await createIdentity(admin);
  await until('a refused batch', () => receiver.refused > 0 || undefined);
  await sleep(1000);
  receiver.status.set('/hook', 429);
  await sleep(500);
  receiver.status.delete('/hook');
  const { got, want } = await allDelivered();
  const ids = got.map((e) => e.id);
  assert.equal(new Set(ids).size, ids.length, 'no event twice');
  assert.deepEqual(
    ids,
    want.slice(0, ids.length).map((e) => e.id),
    'in order',
  );
  assert.ok(batches('/hook').every((b) => b.signed));
  assert.equal((await metric('edgectl_event_sink_dead_letters_total', { sink: sinkName('/hook') })) ?? 0, 0);
});

const sinkName = (path: string) => `webhook:https://127.0.0.1:${receiver.port}${path}`;

test('a batch that keeps failing is given up after its attempts: recorded and counted as a dead letter', async () => {
  const id = await createIdentity(admin);
  const drop = await until('the dead letter recorded', async () =>
    (await listed()).find((e) => e.namespace === 'eventSink' && e.sink === sinkName('/dead')),
  );
  assert.equal(drop.reason, 'undeliverable');
  assert.ok(drop.count >= 1);
  assert.ok((await metric('edgectl_event_sink_dead_letters_total', { sink: sinkName('/dead') }))! >= 1);
  assert.ok((await metric('edgectl_events_dropped_total', { sink: sinkName('/dead'), reason: 'undeliverable' }))! >= 1);
  assert.equal(batches('/dead').length, 0);
  // The other sinks are not held up by it.
  await until(
    'the identity at the good receiver',
    () => delivered('/hook').some((e) => e.entityId === id) || undefined,
  );
});

test('a receiver whose certificate does not chain to the sink’s roots gets nothing', async () => {
  assert.equal(batches('/untrusted').length, 0);
  assert.ok((await metric('edgectl_event_sink_lag_events', { sink: sinkName('/untrusted') }))! > 0);
});

test('the shared secret and the receiver’s token appear in no event', async () => {
  const text = JSON.stringify(await listed()) + receiver.accepted.map((b) => b.body).join('');
  assert.ok(!text.includes(SECRET));
  assert.ok(!text.includes('receiver-token'));
  const scraped = (await s.request('GET', '/metrics', { headers: { accept: '*/*' } })).text;
  assert.ok(!scraped.includes(SECRET) && !scraped.includes('receiver-token'), 'nor in the metrics');
});
