/**
 * Bounds of event delivery: a sink that cannot keep up (its file cannot be written) keeps at most its backlog of
 * undelivered events, losing the oldest first; the loss is an `eventSink` `dropped` event and a metric, and the
 * lag per sink is a metric. The outbox keeps its retention and at most `events.maxEvents`, and a sink that had not
 * had what is pruned is told in the same way.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createIdentity, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { jsonLines } from '../harness/events.js';

type Ev = Record<string, any>;

const dir = mkdtempSync(join(tmpdir(), 'edgectl-backlog-'));
const BLOCKED = join(dir, 'blocked.jsonl');
const OK = join(dir, 'ok.jsonl');
let s: TestServer;
let admin: ApiClient;

before(async () => {
  s = await startTestServer({
    clock: 'frozen',
    backgroundSweep: false,
    yaml: `metrics:
  enabled: true
events:
  retention: 1h
  maxEvents: 30
  sinks:
    - type: file
      path: ${BLOCKED}
      backlog: 5
    - type: file
      path: ${OK}
`,
  });
  admin = await s.admin();
});
after(async () => {
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});

const lines = (file: string): Ev[] => jsonLines<Ev>(file);

async function listed(filter = 'true'): Promise<Ev[]> {
  const res = await admin.get(
    `/events?limit=500&sort=${encodeURIComponent('timestamp asc')}&filter=${encodeURIComponent(filter)}`,
  );
  assert.equal(res.status, 200, res.text);
  return res.body.data;
}

async function metric(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const res = await s.request('GET', '/metrics', { headers: { accept: '*/*' } });
  assert.equal(res.status, 200);
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of res.text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (m?.[1] === name && want.every((w) => (m[3] ?? '').split(',').includes(w))) return Number(m[4]);
  }
  return undefined;
}

const blocked = `file:${BLOCKED}`;

test('a sink behind by more than its backlog loses its oldest events first; the loss is recorded and counted', async () => {
  // A directory where the file should be: every write fails.
  mkdirSync(BLOCKED);
  for (let i = 0; i < 8; i++) await createIdentity(admin);
  const before = await listed();
  assert.ok(before.length > 5);
  assert.equal(await metric('edgectl_event_sink_lag_events', { sink: blocked }), before.length);
  await s.sweep();
  const drops = await listed('namespace = "eventSink"');
  assert.equal(drops.length, 1);
  const drop = drops[0]!;
  assert.equal(drop.event_type, 'dropped');
  assert.equal(drop.sink, blocked);
  assert.equal(drop.reason, 'backlog');
  // Down to a tenth below the backlog (at least one), so the drop's own event does not overflow it again.
  assert.equal(drop.count, before.length - 4, 'all but the newest four');
  assert.equal(await metric('edgectl_events_dropped_total', { sink: blocked, reason: 'backlog' }), before.length - 4);
  assert.equal(await metric('edgectl_event_sink_lag_events', { sink: blocked }), 5, 'four and the drop’s own event');
  assert.ok((await metric('edgectl_event_sink_lag_seconds', { sink: blocked }))! >= 0);
  // Sinks run side by side: the drop recorded while the other sink delivered reaches it in the next round.
  await s.sweep();
  assert.equal((await listed('namespace = "eventSink"')).length, 1, 'no second drop: the backlog holds');
  assert.equal(await metric('edgectl_event_sink_lag_events', { sink: `file:${OK}` }), 0);
  assert.deepEqual(
    lines(OK).map((e) => e.id),
    [...before, drop].map((e) => e.id),
    'the other sink is not held up and gets everything',
  );

  // The file can be written again: after its retry delay the sink gets the newest five and the drop, in order.
  rmSync(BLOCKED, { recursive: true });
  await sleep(1100);
  await s.sweep();
  assert.deepEqual(
    lines(BLOCKED).map((e) => e.id),
    [...before.slice(-4), drop].map((e) => e.id),
  );
  assert.equal(await metric('edgectl_event_sink_lag_events', { sink: blocked }), 0);
  assert.equal(await metric('edgectl_event_sink_lag_seconds', { sink: blocked }), 0);
  assert.ok((await metric('edgectl_events_delivered_total', { sink: blocked }))! >= 5);
});

test('the outbox keeps its retention; a sink that had not had what is pruned is told', async () => {
  rmSync(BLOCKED, { recursive: true, force: true });
  mkdirSync(BLOCKED);
  await createIdentity(admin);
  await createIdentity(admin);
  s.clock.advance(2 * 3_600_000);
  await s.sweep();
  admin = await s.admin();
  const kept = await listed();
  assert.ok(
    kept.every((e) => Date.parse(e.timestamp) >= s.clock.now().getTime() - 3_600_000),
    'nothing older than the retention',
  );
  const drops = (await listed('namespace = "eventSink"')).filter((e) => e.reason === 'retention');
  assert.equal(drops.length, 1, JSON.stringify(drops));
  assert.equal(drops[0]!.sink, blocked);
  assert.equal(drops[0]!.count, 2, 'the two identities it never had');
  assert.equal(await metric('edgectl_events_dropped_total', { sink: blocked, reason: 'retention' }), 2);
});

test('the outbox keeps at most maxEvents, the oldest going first', async () => {
  for (let i = 0; i < 35; i++) await createIdentity(admin);
  const newest = (await listed()).slice(-30);
  await s.sweep();
  const kept = await listed();
  assert.ok(kept.length <= 30, `${kept.length} events kept`);
  const recent = new Set(newest.map((e) => e.id));
  assert.ok(
    kept.every((e) => recent.has(e.id) || e.namespace === 'eventSink'),
    'only the newest are kept (and what the sweep recorded)',
  );
  assert.ok((await metric('edgectl_event_sink_lag_events', { sink: blocked }))! <= 30);
});
