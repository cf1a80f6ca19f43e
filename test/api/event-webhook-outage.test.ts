/**
 * A webhook receiver down for a minute, then back (issue #24: "a webhook outage of a minute then recovery delivers
 * everything once in order"). The delivery loop runs on simulated time (its scheduler, docs/events.md "Retries"),
 * so the minute passes in simulated time while every attempt is real: a real HTTPS POST to a local receiver that
 * refuses connections, the sink's cursor and backlog in the real store. Over the minute the backoff doubles up to
 * its cap and stays there, events keep being recorded, nothing is dropped or given up; once the receiver is back,
 * the next retry delivers every event exactly once, in outbox order, in signed batches.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createIdentity, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { startReceiver, type Receiver } from '../harness/https-receiver.js';
import { EventDelivery, type DeliveryScheduler } from '../../src/daemon/event-delivery.js';
import { parseEventsConfig } from '../../src/daemon/events-config.js';
import { eventsAfterPosition } from '../../src/model/events/follow.js';

type Ev = Record<string, any>;

const SECRET = 'outage-Webhook-Secret-0123456789';
const INITIAL_MS = 1000;
const CAP_MS = 8000;
const OUTAGE_MS = 60_000;
const dir = mkdtempSync(join(tmpdir(), 'edgectl-webhook-outage-'));
let receiver: Receiver;
let s: TestServer;
let admin: ApiClient;

before(async () => {
  receiver = await startReceiver(SECRET);
  writeFileSync(join(dir, 'receiver-ca.pem'), receiver.caPem);
  s = await startTestServer();
  admin = await s.admin();
});
after(async () => {
  await s?.close();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Simulated time: timers fire only when `advance` moves the clock past them, one at a time in order, each
 * followed by the delivery's own work (real I/O) settling before the clock moves on. Fixture: no assertions.
 */
class SimulatedTime implements DeliveryScheduler {
  private t = Date.now();
  private nextId = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void; every?: number }>();
  /** The delays of the retries scheduled (`after`), in order. */
  readonly delays: number[] = [];

  now(): number {
    return this.t;
  }

  after(ms: number, fn: () => void): () => void {
    this.delays.push(ms);
    const id = this.nextId++;
    this.timers.set(id, { at: this.t + ms, fn });
    return () => this.timers.delete(id);
  }

  every(ms: number, fn: () => void): () => void {
    const id = this.nextId++;
    this.timers.set(id, { at: this.t + ms, fn, every: ms });
    return () => this.timers.delete(id);
  }

  async advance(ms: number, delivery: EventDelivery): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      let due: [number, { at: number; fn: () => void; every?: number }] | undefined;
      for (const entry of this.timers) if (entry[1].at <= end && (!due || entry[1].at < due[1].at)) due = entry;
      if (!due) break;
      const [id, timer] = due;
      this.t = timer.at;
      if (timer.every) timer.at += timer.every;
      else this.timers.delete(id);
      timer.fn();
      await delivery.idle();
    }
    this.t = end;
  }
}

test('a minute-long outage: the backoff grows to its cap, the backlog holds, then everything arrives once, in order', async () => {
  const cfg = parseEventsConfig(
    {
      sinks: [
        {
          type: 'webhook',
          url: `https://127.0.0.1:${receiver.port}/hook`,
          secret: SECRET,
          caFile: join(dir, 'receiver-ca.pem'),
          batchSize: 5,
          retry: { initialBackoff: `${INITIAL_MS}ms`, maxBackoff: `${CAP_MS}ms` },
        },
      ],
    },
    dir,
  );
  const sink = cfg.sinks[0]!.name;
  const time = new SimulatedTime();
  const counted = { delivered: 0, dropped: 0, deadLetters: 0 };
  const delivery = new EventDelivery(cfg, {
    ctx: s.daemon.ctx,
    log: s.daemon.ctx.log,
    lead: async () => true,
    hooks: {
      delivered: (_sink, n) => (counted.delivered += n),
      dropped: (_sink, n) => (counted.dropped += n),
      deadLettered: () => counted.deadLetters++,
    },
    scheduler: time,
    // No jitter: each delay is the backoff's own.
    random: () => 1,
  });
  const received = (): Ev[] => receiver.accepted.flatMap((b) => JSON.parse(b.body) as Ev[]);
  try {
    delivery.start(1000);
    for (let i = 0; i < 3; i++) await createIdentity(admin);
    await time.advance(1000, delivery);
    const before = received().length;
    assert.ok(before >= 4, 'delivered while the receiver is up (the admin login and three creates)');
    assert.equal((await delivery.lag())[0]!.events, 0);

    // The outage: connections refused for a minute, while changes go on being made every few seconds.
    await receiver.stop();
    const outageFrom = time.now();
    const created: string[] = [];
    while (time.now() - outageFrom < OUTAGE_MS) {
      created.push(await createIdentity(admin));
      await time.advance(5000, delivery);
    }
    assert.equal(received().length, before, 'nothing arrives while the receiver is down');
    const delays = [...time.delays];
    assert.ok(delays.length >= 8, `retried many times over the minute (${delays.length})`);
    assert.deepEqual(
      delays.slice(0, 5),
      [1000, 2000, 4000, 8000, 8000],
      'the backoff doubles from its initial delay up to its cap',
    );
    assert.ok(
      delays.every((d) => d <= CAP_MS),
      'and never goes past it',
    );
    assert.ok(
      delays.slice(3).every((d) => d === CAP_MS),
      'and stays at it',
    );
    const [lag] = await delivery.lag();
    assert.ok(lag!.events >= created.length, `the backlog holds every event of the outage (${lag!.events})`);
    assert.deepEqual(counted, { delivered: before, dropped: 0, deadLetters: 0 }, 'nothing dropped, nothing given up');

    // Recovery: the next retry (at most the cap away) delivers the backlog.
    await receiver.resume();
    await time.advance(CAP_MS + 1000, delivery);
    assert.ok(time.now() - outageFrom >= OUTAGE_MS, 'a minute or more of outage, in simulated time');
    assert.equal((await delivery.lag())[0]!.events, 0, 'nothing left behind');
    const got = received();
    const outbox = (await eventsAfterPosition(s.daemon.ctx, 0, 10_000)).map((r) => (JSON.parse(r.body) as Ev).id);
    assert.deepEqual(
      got.map((e) => e.id),
      outbox,
      'every recorded event exactly once, in outbox order',
    );
    for (const id of created)
      assert.ok(
        got.some((e) => e.entityId === id),
        'each change of the outage arrived',
      );
    assert.ok(
      receiver.accepted.every((b) => b.signed && (JSON.parse(b.body) as Ev[]).length <= 5),
      'in signed batches of batchSize at most',
    );
    assert.deepEqual(counted, { delivered: got.length, dropped: 0, deadLetters: 0 });
    assert.ok(!got.some((e) => e.namespace === 'eventSink' && e.sink === sink), 'no loss recorded for the sink');
  } finally {
    await delivery.close();
  }
});
